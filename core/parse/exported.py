"""What the blog-platform parsers share: a post made from an HTML body and the export's fields, when
the export was made, the ids of an export's posts kept distinct, and the summary of what an export left
out (drafts, pages, posts for members only)."""

from __future__ import annotations

import re
import urllib.parse
from collections import Counter
from datetime import UTC, datetime
from html import escape
from typing import ClassVar

from lxml import etree, html

from core.models import Post
from core.parse.clean import html_fragment_to_blocks
from core.parse.fields import (
    Context,
    as_tags,
    first_heading,
    iso_day,
    make_post,
    plain_title,
    slug_id,
    title_from_text,
)

# The platforms whose export files are read (Post.export), with their names for people.
WORDPRESS, GHOST, SUBSTACK, MEDIUM = "wordpress", "ghost", "substack", "medium"
PLATFORMS = {WORDPRESS: "WordPress", GHOST: "Ghost", SUBSTACK: "Substack", MEDIUM: "Medium"}

# A paragraph that is only a web address: an oEmbed line (WordPress turns it into a player), not prose.
_BARE_URL_PARAGRAPH = re.compile(r"<p>\s*(?:<a\b[^>]*>)?\s*https?://\S+?\s*(?:</a>)?\s*</p>", re.IGNORECASE)
# Gutenberg's embed block keeps the address as the wrapper's text.
_EMBED_WRAPPER = re.compile(r'<div class="wp-block-embed__wrapper">.*?</div>', re.IGNORECASE | re.DOTALL)
# Other people's content that platforms render into a post's body: an embedded tweet, Instagram or
# TikTok post (Ghost, Substack, pasted embed code), a link's preview (Ghost's bookmark card, Substack's
# embedded post or publication: another page's title, excerpt, likes, "Read more"). Kept, answers
# would quote a stranger's tweet as the author's own sentence. A caption beside them is the author's.
_FOREIGN_CLASSES = (
    "twitter-tweet",
    "instagram-media",
    "tiktok-embed",
    "kg-bookmark-container",
    "tweet",
    "embedded-post-wrap",
    "embedded-publication-wrap",
    # Ghost's card furniture, no prose either: audio and video players ("0:00", "/3:45"), a file's
    # name and size, button and sign-up cards ("Subscribe", "No spam"), a product's buy button.
    "kg-audio-player",
    "kg-video-player-container",
    "kg-file-card-metadata",
    "kg-button-card",
    "kg-signup-card",
    "kg-product-card-button",
)
_FOREIGN_HINT = re.compile("|".join(_FOREIGN_CLASSES))
_FOREIGN = etree.XPath(
    " | ".join(f"//*[contains(concat(' ', normalize-space(@class), ' '), ' {c} ')]" for c in _FOREIGN_CLASSES)
)
# A date in an export's file name, its time optional: WordPress's site.WordPress.2024-06-01.xml, Ghost's
# site.ghost.2024-06-01-10-15-32.json.
_NAME_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?:-(\d{2})-(\d{2})-(\d{2}))?(?!\d)")


def export_stamp(moment: datetime) -> str:
    """A moment as export times are compared: ISO 8601 in UTC to the second, without the zone (a naive
    moment is taken as UTC)."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.replace(tzinfo=None, microsecond=0).isoformat()


def export_time(own: str, name: str) -> str:
    """When an export was made: `own`, the date the export gives itself (an export_stamp, or a prefix
    of one), else the last valid date in its file `name` (to the day, or the second), else "". Two such
    times compare as text on the length they share."""
    if own:
        return own
    for match in reversed(list(_NAME_DATE.finditer(name))):
        parts = [int(p) for p in match.groups() if p is not None]
        try:
            moment = datetime(parts[0], parts[1], parts[2], *parts[3:])
        except ValueError:  # 2024-13-45: not a date
            continue
        return export_stamp(moment) if len(parts) > 3 else moment.date().isoformat()
    return ""


def without_embeds(body: str) -> str:
    """The HTML without embedded-media addresses (YouTube, tweets…), which would read as paragraphs,
    and without other people's embedded posts and link previews, or Ghost's players and buttons
    (_FOREIGN_CLASSES); a body with none is returned as it is, byte for byte."""
    return _BARE_URL_PARAGRAPH.sub("", _EMBED_WRAPPER.sub("", _without_foreign(body)))


def _without_foreign(body: str) -> str:
    if not _FOREIGN_HINT.search(body):
        return body
    try:
        root = html.fragment_fromstring(body, create_parent="div")
    except (etree.ParserError, ValueError):
        return body
    found = _FOREIGN(root)
    if not found:
        return body
    for element in found:
        if element.getparent() is not None:  # not inside one already dropped
            element.drop_tree()
    inner = [html.tostring(child, encoding="unicode") for child in root]
    return escape(root.text or "", quote=False) + "".join(inner)


def post_slug(slug: str) -> str:
    """A platform's slug as a post id: percent-decoded (WordPress stores 'caf%c3%a9'), then slugified as
    Markdown file names are, so `my-post.md` and a post whose slug is my-post are one post."""
    return slug_id(urllib.parse.unquote(slug)) if slug.strip() else ""


def html_post(
    ctx: Context,
    *,
    body: str,
    title: str,
    slug: str,
    date: str,
    tags: list[str],
    url: str,
    where: str,
    export: str,
    into: ExportPosts,
    exported: str = "",
) -> Post | None:
    """A post from an HTML body (kept as its raw, read back as an HTML fragment) of `export`, a
    platform of PLATFORMS, made at `exported` (the export's own date, "" when it gives none: then the
    date in the file's name, export_time), added to `into`; its id is the slug, else (settled by `into`)
    the title's slug. A post without text (a gallery, a video) is left out with a warning naming it, not
    an error: it is the blog's, not a bad file, and must not fail every later import or sync of the
    export."""
    body = without_embeds(body)
    blocks = html_fragment_to_blocks(body)
    title = plain_title(title) or first_heading(blocks) or title_from_text(blocks)
    stated = post_slug(slug)
    post = make_post(
        ctx,
        blocks,
        raw=body,
        title=title,
        post_id=stated or slug_id(title),
        date=iso_day(date),
        tags=list(dict.fromkeys(as_tags(tags))),
        fmt="html",
        where=where,
        textless_warns=True,
    )
    if post is not None:
        post.url, post.export = url, export
        post.exported = export_time(exported, ctx.path.name)
        into.add(post, stated=bool(stated), where=where)
    return post


class ExportPosts:
    """An export's posts in its order, with distinct ids once `settled`.

    A slug the export states is its post's id. An id derived from a title (a post without a slug, as
    WordPress and Substack drafts are) never takes one the export states for another post, nor one an
    earlier derived id took: it gets "-2", "-3"…, as WordPress numbers a slug already in use. So a draft
    titled like a published post never pushes the published one out, wherever it comes in the file.
    A slug stated twice (WordPress pages of different parents, /services/pricing/ and
    /workshops/pricing/; a post and a page; translations) stays the first's; a later one takes its
    address's path ("workshops-pricing"), else a number, so no post of the export is lost.
    """

    def __init__(self) -> None:
        self._found: list[tuple[Post, bool, str]] = []

    def add(self, post: Post, *, stated: bool, where: str) -> None:
        self._found.append((post, stated, where))

    def settled(self, ctx: Context) -> list[Post]:
        """The posts, derived or repeated ids changed where needed, each change a warning naming the
        post."""
        taken = {post.post_id for post, stated, _ in self._found if stated}
        firsts: set[str] = set()  # stated ids already given to a post
        for post, stated, where in self._found:
            if stated and post.post_id not in firsts:
                firsts.add(post.post_id)
                continue
            wanted = post.post_id
            if stated:
                post.post_id = _free_id(_path_id(post.url), wanted, taken)
                why = f"has the slug {wanted!r} of another post in this export"
            else:
                post.post_id = _free_id(wanted, wanted, taken)
                why = f"has no slug, and its title's slug {wanted!r} is another post's in this export"
            taken.add(post.post_id)
            if post.post_id != wanted:
                ctx.warn(f"{where}{why}: stored as {post.post_id!r}")
        return [post for post, _, _ in self._found]


def _path_id(url: str) -> str:
    """An id from an address's whole path ("/workshops/pricing/" → "workshops-pricing"), "" for none."""
    path = urllib.parse.urlsplit(url).path.strip("/")
    return slug_id(urllib.parse.unquote(path)) if path else ""


def _free_id(preferred: str, base: str, taken: set[str]) -> str:
    """`preferred` if no post has it, else `base`, `base`-2, `base`-3… , the first no post has."""
    if preferred and preferred not in taken:
        return preferred
    number, found = 1, base
    while found in taken:
        number += 1
        found = f"{base}-{number}"
    return found


def site_address(site: str, slug: str, pattern: str = "{site}/{slug}/") -> str:
    """The post's address on `site` ("" when the site or the slug is unknown)."""
    site = site.strip().rstrip("/")
    if not site or not slug:
        return ""
    return pattern.format(site=site, slug=urllib.parse.quote(slug))


def warn_no_site(ctx: Context, count: int, why: str) -> None:
    """One warning for a file whose `count` published posts got no address for want of a site URL
    (Ghost without its `url` setting, Substack always): `why` says what the export lacks."""
    if count:
        ctx.warn(
            f"no web addresses for its {count} published post{'s' * (count != 1)}: {why}, so addresses "
            "need INKWELL_SITE_URL (the blog's address, e.g. https://blog.example); set it and ingest again"
        )


# The kind of post LeftOut counts for posts gated to paying or signed-in members.
MEMBERS_ONLY = "members"
EMAIL_ONLY = "email"  # Ghost's posts sent as a newsletter only: to members, never on the site


class LeftOut:
    """Counts what an export holds but was not asked for, reported once as a warning."""

    _HOW: ClassVar[dict[str, str]] = {
        "draft": "--include-drafts",
        MEMBERS_ONLY: "--include-members",
        EMAIL_ONLY: "--include-members",
        "page": "--include-pages",
    }
    # A kind's words, one and many, where they are not the kind and the kind + "s".
    _NOUNS: ClassVar[dict[str, tuple[str, str]]] = {
        EMAIL_ONLY: ("post sent by email only", "posts sent by email only"),
        MEMBERS_ONLY: (
            "post for paying or signed-in members only",
            "posts for paying or signed-in members only",
        ),
    }

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.types: Counter[str] = Counter()  # other post types (WordPress plugins' "podcast", …)

    def add(self, kind: str) -> None:
        self.counts[kind] += 1

    def add_type(self, name: str) -> None:
        self.types[name] += 1

    def report(self, ctx: Context) -> None:
        if self.counts:
            parts = [
                f"{n} {self._NOUNS.get(kind, (kind, kind + 's'))[n != 1]}"
                for kind, n in sorted(self.counts.items())
            ]
            how = " / ".join(dict.fromkeys(self._HOW[k] for k in sorted(self.counts) if k in self._HOW))
            hint = f" (read them with {how}, or the Ingest page's checkboxes)" if how else ""
            ctx.warn(f"left out {', '.join(parts)}{hint}")
        if self.types:
            named = ", ".join(f"{n} of type {name!r}" for name, n in sorted(self.types.items()))
            first = sorted(self.types)[0]
            ctx.warn(
                f"left out items of other post types: {named} (read a type as posts with --include-type "
                f"{first}, or the Ingest page's 'Other post types')"
            )
