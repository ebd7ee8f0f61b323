"""What an import may read beyond published posts, and where its posts live on the web."""

from __future__ import annotations

import os
from dataclasses import dataclass, field


def _site_url_from_env() -> str:
    return os.environ.get("INKWELL_SITE_URL", "").strip()


@dataclass(frozen=True)
class ImportOptions:
    """Choices for blog-platform exports (WordPress, Ghost, Substack, Medium); other formats ignore them.

    `include_drafts` also reads drafts, pending, scheduled and private posts; `include_pages` reads pages
    (About, Contact…) beside posts. `site_url` is the blog's address, used to make a post's address from
    its slug when the export does not carry one (Ghost without a site URL setting, Substack); it defaults
    to INKWELL_SITE_URL, read in the process that makes the options.
    """

    include_drafts: bool = False
    include_pages: bool = False
    site_url: str = field(default_factory=_site_url_from_env)
