"""`.zip` files: read safely (core/parse/safezip.py), then recognised as a Substack export (posts.csv)
or a Medium export (posts/*.html pages); any other zip is refused by name."""

from __future__ import annotations

from core.models import Post
from core.parse.fields import BadInput, Context
from core.parse.medium import medium_posts, parse_medium
from core.parse.safezip import SafeZip
from core.parse.substack import parse_substack, substack_index


def parse_zip(ctx: Context, data: bytes) -> list[Post]:
    archive = SafeZip(data)
    index = substack_index(archive)
    if index is not None:
        return parse_substack(ctx, archive, index)
    pages = medium_posts(archive)
    if pages:
        return parse_medium(ctx, archive, pages)
    raise BadInput(
        "is a zip that is neither a Substack export (posts.csv) nor a Medium export (posts/*.html)"
    )
