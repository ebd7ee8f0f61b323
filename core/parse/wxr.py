"""WordPress exports (WXR, the `.xml` of Tools → Export): one post per `<item>` of type post (pages too
with `include_pages`, a plugin's types such as "podcast" with `include_types`), published ones only
unless `include_drafts`.

The XML is parsed with defusedxml: an export never declares entities, and one that does (entity
expansion, "billion laughs", external entities reading local files) is refused with its reason.
`content:encoded` is the post's HTML as stored (classic-editor posts have no `<p>`: blank lines are the
paragraphs, as WordPress's wpautop makes them); shortcodes are removed, keeping a caption's text.
When the export was made is its channel's `<pubDate>`, else its generator comment's `created`.
"""

from __future__ import annotations

import contextlib
import email.utils
import io
import re
import xml.etree.ElementTree as ET
from typing import BinaryIO

import defusedxml.ElementTree as SafeET

from core.models import Post
from core.parse.exported import WORDPRESS, ExportPosts, LeftOut, export_stamp, html_post
from core.parse.feeds import feed_file_posts, is_feed_root
from core.parse.fields import BadInput, Context
from core.parse.safexml import BadXML, parse_xml

_WP_NS = "http://wordpress.org/export/"  # + 1.0/, 1.1/ or 1.2/
_CONTENT = "{http://purl.org/rss/1.0/modules/content/}encoded"
_PUBLISHED = "publish"
_NEVER = frozenset({"trash", "auto-draft", "inherit"})
_DEFAULT_CATEGORY = "uncategorized"
# WordPress's own post types that are not writing (media, menus, revisions, the site editor's parts).
_WORDPRESS_OWN = frozenset(
    [
        "attachment",
        "nav_menu_item",
        "revision",
        "custom_css",
        "customize_changeset",
        "oembed_cache",
        "user_request",
        "wp_block",
        "wp_template",
        "wp_template_part",
        "wp_global_styles",
        "wp_navigation",
        "wp_font_family",
        "wp_font_face",
    ]
)

# Shortcodes whose content is media or code, not prose: removed with what they enclose.
_MEDIA = "embed video audio playlist gallery code sourcecode youtube vimeo tweet instagram soundcloud gist"
_MEDIA_CODES = frozenset(_MEDIA.split())
_NAME = r"[A-Za-z_][\w-]*"
_ATTRS = r"(?:\s+[^\]]*)?"
_CLOSER = re.compile(rf"\[/({_NAME})\]")
# An opening or self-closing shortcode: with attributes (name="…"), or a bare known media name.
_SINGLE = re.compile(
    rf"\[{_NAME}(?:\s+[\w-]+\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s\]]+))+\s*/?\]"
    rf"|\[(?:{'|'.join(_MEDIA_CODES)}|caption|wp_caption)\s*/?\]"
)
_CLOSING = re.compile(rf"\[/(?:{'|'.join(_MEDIA_CODES)}|caption|wp_caption)\]")
# A line that is only a bare lowercase shortcode ("[toc]", "[ez-toc]", "[jetpack_subscription_form]"),
# as the classic editor's line or a shortcode block's: a plugin's output, never a sentence.
_BARE_LINE = re.compile(r"^[ \t]*(?:<p>[ \t]*)?\[/?[a-z][a-z0-9_-]*\][ \t]*(?:</p>)?[ \t]*$", re.MULTILINE)
_BLOCK_START = re.compile(r"^\s*<(?:h[1-6]|ul|ol|blockquote|div|figure|table|pre|p|hr|dl)\b", re.IGNORECASE)
# Block-editor (Gutenberg) content carries its block comments and is stored as rendered; WordPress runs
# wpautop only on the rest (classic-editor posts), whether or not a <p> was typed somewhere in them.
_BLOCK_EDITOR = re.compile(r"<!--\s*wp:", re.IGNORECASE)
_PRE = re.compile(r"<pre\b.*?</pre>", re.IGNORECASE | re.DOTALL)
_PRE_MARK = re.compile("\ue020(\\d+)\ue021")  # private-use characters: no post types them
# <!-- generator="WordPress/6.4.2" created="2024-06-01 10:15" -->, in UTC (WordPress writes gmdate).
# What parse_wxr mends: whitespace and a byte-order mark before the declaration, and the C0 controls
# XML 1.0 forbids (a UTF-8 byte below 0x20 is always that character, never part of another).
_LEADING = b" \t\r\n\xef\xbb\xbf"
_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]")
_CREATED = re.compile(r'\bcreated="(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2})"')


def parse_wxr(ctx: Context, data: bytes) -> list[Post]:
    """The export's posts; BadInput when it is not well-formed XML, is hostile, or is not a WXR file.
    Two flaws WordPress sites commonly write into otherwise good exports are mended with a warning
    (the whole blog would be refused for them): blank lines before the XML declaration (a theme or
    plugin printing them) and control characters XML does not allow (pasted from Word)."""
    root, data = _parse_mended(ctx, data)
    channel = root.find("channel")
    wp = _wp_namespace(root)
    if wp is None and is_feed_root(root):  # an RSS or Atom feed saved as a file: its entries' own text
        return feed_file_posts(ctx, root, data)
    if root.tag != "rss" or channel is None or wp is None:
        raise BadInput("is XML but not a WordPress export (WXR: Tools → Export in WordPress)")
    left_out = LeftOut()
    exported = wxr_exported(io.BytesIO(data))
    posts = ExportPosts()
    for number, item in enumerate(channel.iter("item"), 1):
        _item_post(ctx, item, wp, number, left_out, exported, posts)
    left_out.report(ctx)
    return posts.settled(ctx)


# parse_xml's refusals, worded for an author importing a file (core/parse/safexml.py BadXML.kind).
_REFUSALS = {
    "external entity": "declares an external entity ({detail}): an XXE attack reading files? refused",
    "entities": "declares XML entities (entity expansion, a 'billion laughs' attack?): refused; a WordPress "
    "export never declares them",
    "malformed": "is not well-formed XML ({detail})",
}
_REFUSED = "refers to external entities or files (an XXE attack?): refused"


def _parse_mended(ctx: Context, data: bytes) -> tuple[ET.Element, bytes]:
    """The parsed root and the bytes it was parsed from: `data`, else, when it is not well-formed, `data`
    without leading whitespace and disallowed control characters if that parses (a warning says so).
    A file still malformed is refused with the error of its own bytes' line and column; a hostile one
    with its refusal."""
    try:
        return _parse_xml(data), data
    except BadInput as exc:
        mended = _CONTROL.sub(b"", data.lstrip(_LEADING))
        if mended == data or not str(exc).startswith("is not well-formed XML"):
            raise
        try:
            root = _parse_xml(mended)
        except BadInput as again:  # still malformed: its own bytes' place; hostile: the refusal
            raise exc if str(again).startswith("is not well-formed XML") else again from None
    fixes = []
    if data.lstrip(b"\xef\xbb\xbf")[:1].isspace():
        fixes.append("blank lines before its XML declaration")
    if controls := len(_CONTROL.findall(data)):
        fixes.append(f"{controls} control character{'s' * (controls != 1)}")
    ctx.warn(f"has {' and '.join(fixes)}, which XML does not allow; read without them")
    return root, mended


def _parse_xml(data: bytes) -> ET.Element:
    try:
        return parse_xml(data)
    except BadXML as exc:
        raise BadInput(_REFUSALS.get(exc.kind, _REFUSED).format(detail=exc.detail)) from None


def wxr_exported(source: BinaryIO) -> str:
    """When the WordPress export read from `source` was made (core/parse/exported.py export_stamp, to
    the second or the minute): its channel's `<pubDate>`, else its generator comment's `created`; ""
    when it gives neither or cannot be read. Reads no further than its first `<item>`."""
    created, depth = "", 0
    events = ("start", "end", "comment")
    try:
        for event, el in SafeET.iterparse(
            _FromFirstTag(source), events, forbid_dtd=False, forbid_entities=True
        ):
            if event == "comment":
                if match := _CREATED.search(el.text or ""):
                    created = f"{match[1]}T{match[2]}"
            elif event == "start":
                if el.tag == "item":
                    break
                depth += 1
            else:
                if depth == 3 and el.tag == "pubDate":  # rss > channel > pubDate, not an item's
                    with contextlib.suppress(TypeError, ValueError, IndexError):
                        return export_stamp(email.utils.parsedate_to_datetime((el.text or "").strip()))
                depth -= 1
    except (ET.ParseError, ValueError):  # defusedxml's refusals are ValueErrors
        pass
    return created


class _FromFirstTag:
    """A binary source read from its first byte that is not whitespace or a byte-order mark, as
    parse_wxr mends an export with blank lines before its declaration."""

    def __init__(self, source: BinaryIO) -> None:
        self._source, self._started = source, False

    def read(self, size: int = -1) -> bytes:
        data = self._source.read(size)
        while not self._started and data:
            data = data.lstrip(_LEADING)
            self._started = bool(data)
            data = data or self._source.read(size)
        return data


def _wp_namespace(root: ET.Element) -> str | None:
    for el in root.iter():
        if el.tag.startswith("{" + _WP_NS):
            return el.tag[1:].split("}", 1)[0]
    return None


def _item_post(
    ctx: Context, item: ET.Element, wp: str, number: int, left_out: LeftOut, exported: str, posts: ExportPosts
) -> Post | None:
    def field(name: str) -> str:
        return (item.findtext(f"{{{wp}}}{name}") or "").strip()

    kind, status = field("post_type") or "post", field("status") or _PUBLISHED
    if status in _NEVER or kind in _WORDPRESS_OWN:
        return None  # attachments, menu items, revisions, reusable blocks: not posts
    if kind not in ("post", "page") and kind not in ctx.options.include_types:
        left_out.add_type(kind)  # a plugin's "podcast" or "portfolio": named, never dropped unsaid
        return None
    if kind == "page" and not ctx.options.include_pages:
        left_out.add("page")
        return None
    if status != _PUBLISHED and not ctx.options.include_drafts:
        left_out.add("draft")
        return None
    if field("post_password"):
        left_out.add("password-protected post")
        return None
    title = item.findtext("title") or ""
    date = field("post_date") if not field("post_date").startswith("0000") else ""
    return html_post(
        ctx,
        body=wordpress_html(item.findtext(_CONTENT) or ""),
        title=title,
        slug=field("post_name"),
        date=date,
        tags=_terms(item),
        # A draft's link is a preview address (?p=12), nothing a reader can open.
        url=(item.findtext("link") or "").strip() if status == _PUBLISHED else "",
        where=f"item {number} ({' '.join(title.split())[:60]!r}): ",
        export=WORDPRESS,
        exported=exported,
        into=posts,
    )


def _terms(item: ET.Element) -> list[str]:
    """Category names, then tag names, in the export's order; WordPress's default category left out."""
    terms = []
    for domain in ("category", "post_tag"):
        for el in item.findall("category"):
            if el.get("domain") == domain and (el.get("nicename") or "").lower() != _DEFAULT_CATEGORY:
                terms.append(" ".join((el.text or "").split()))
    return terms


def wordpress_html(content: str) -> str:
    """A post's stored content as HTML: shortcodes removed (a caption's text kept as a figure), and
    blank-line paragraphs wrapped in `<p>` unless the post is from the block editor (as wpautop does:
    a classic post with one `<p style=…>` typed in still has its other paragraphs by blank lines)."""
    content = strip_shortcodes(content)
    if _BLOCK_EDITOR.search(content):
        return content
    # Blank lines inside <pre> are the code's own, not paragraph breaks (wpautop leaves them too).
    kept: list[str] = []

    def hide(match: re.Match[str]) -> str:
        kept.append(match[0])
        return f"\ue020{len(kept) - 1}\ue021"

    hidden = _PRE.sub(hide, content.replace("\r\n", "\n").strip())
    parts = [_PRE_MARK.sub(lambda m: kept[int(m[1])], p) for p in re.split(r"\n\s*\n", hidden)]
    return "\n".join(p if _BLOCK_START.match(p) else f"<p>{p}</p>" for p in parts if p.strip())


def strip_shortcodes(content: str) -> str:
    """`[caption …]<img/> Text[/caption]` → `<figure>Text</figure>`; media shortcodes gone with what
    they enclose; other enclosing shortcodes unwrapped; attribute shortcodes removed, and a bare one
    alone on its line ("[toc]"). Bracketed prose ("[sic]", "[1]", "[REF: …]") has no attributes and
    no closing tag, and is part of a sentence, so it stays."""

    def paired(match: re.Match[str]) -> str:
        name, inner = match.group(1).lower(), match.group(2)
        if name in _MEDIA_CODES:
            return ""
        inner = strip_shortcodes(inner)
        return f"<figure>{inner}</figure>" if name in ("caption", "wp_caption") else inner

    # Only names that are closed somewhere can pair: an unclosed "[sic]" must not send the search to
    # the end of the post for every bracket.
    closed = sorted({m.lower() for m in _CLOSER.findall(content)})
    if closed:
        names = "|".join(map(re.escape, closed))
        pairs = re.compile(rf"\[({names})(?![\w-]){_ATTRS}\](.*?)\[/\1\]", re.DOTALL | re.IGNORECASE)
        previous = None
        while previous != content:  # nested pairs of the same name resolve from the inside out
            previous, content = content, pairs.sub(paired, content)
    return _BARE_LINE.sub("", _CLOSING.sub("", _SINGLE.sub("", content)))
