"""What an import may read beyond published posts, and where its posts live on the web."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any


def _site_url_from_env() -> str:
    return os.environ.get("INKWELL_SITE_URL", "").strip()


@dataclass(frozen=True)
class ImportOptions:
    """Choices for blog-platform exports (WordPress, Ghost, Substack, Medium); other formats ignore them.

    `include_drafts` also reads drafts, pending, scheduled and private posts; `include_pages` reads pages
    (About, Contact…) beside posts; `include_members` reads posts for paying or signed-in members only
    (Ghost `visibility` other than public, Substack `audience` other than everyone), which are left out
    by default because answers quote stored posts to any reader. `site_url` is the blog's address, used
    to make a post's address from its slug when the export does not carry one (Ghost without a site URL
    setting, Substack); it defaults to INKWELL_SITE_URL, read in the process that makes the options.
    """

    include_drafts: bool = False
    include_pages: bool = False
    include_members: bool = False
    site_url: str = field(default_factory=_site_url_from_env)

    def choices(self) -> dict[str, bool]:
        """The include_* choices by name, as a remembered source keeps them (the site URL is not one:
        each process reads its own)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name.startswith("include_")}

    @classmethod
    def from_choices(cls, choices: Mapping[str, Any]) -> ImportOptions:
        """The options `choices()` gave; a choice missing (kept before it existed) is off."""
        names = [f.name for f in fields(cls) if f.name.startswith("include_")]
        return cls(**{name: bool(choices.get(name)) for name in names})
