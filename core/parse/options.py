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
    by default because answers quote stored posts to any reader; `include_types` names other WordPress
    post types to read as posts (a plugin's "podcast", "portfolio": by default they are left out and
    counted in the import's warning). `site_url` is the blog's address, used
    to make a post's address from its slug when the export does not carry one (Ghost without a site URL
    setting, Substack); it defaults to INKWELL_SITE_URL, read in the process that makes the options.
    """

    include_drafts: bool = False
    include_pages: bool = False
    include_members: bool = False
    include_types: tuple[str, ...] = ()
    site_url: str = field(default_factory=_site_url_from_env)

    def choices(self) -> dict[str, Any]:
        """The include_* choices by name, as a remembered source keeps them (the site URL is not one:
        each process reads its own)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            if f.name.startswith("include_"):
                value = getattr(self, f.name)
                out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_choices(cls, choices: Mapping[str, Any]) -> ImportOptions:
        """The options `choices()` gave; a choice missing (kept before it existed) is off."""
        names = [f.name for f in fields(cls) if f.name.startswith("include_") and f.name != "include_types"]
        types = post_types(choices.get("include_types") or ())
        return cls(**{name: bool(choices.get(name)) for name in names}, include_types=types)


def post_types(names: Any) -> tuple[str, ...]:
    """Post type names as WordPress writes them (lower case, no spaces), from a list or a comma-separated
    string ("podcast, Portfolio" → ("podcast", "portfolio")), each once, in order."""
    items = names.split(",") if isinstance(names, str) else list(names)
    return tuple(dict.fromkeys(n.strip().lower() for n in items if str(n).strip()))
