"""Ghost exports (Settings → Labs → Export, a `.json`): `db[0].data.posts`, with tags joined through
`posts_tags`. A post's text is its `html`, else its Lexical or Mobiledoc document (read as headings and
paragraphs, and the cards that hold prose: Markdown, HTML, callout and toggle cards, media captions),
else its `plaintext`. Its address is the site URL (the export's `url` setting, else the
import's site URL, INKWELL_SITE_URL) and its slug. A post whose `visibility` is not "public" (members,
paid, tiers) is for members only: read with `include_members`. When the export was made is its
`meta.exported_on`."""

from __future__ import annotations

import html
import json
from datetime import UTC, datetime
from typing import Any

from core.models import Post
from core.parse.clean import markdown_to_html
from core.parse.exported import (
    EMAIL_ONLY,
    GHOST,
    MEMBERS_ONLY,
    ExportPosts,
    LeftOut,
    export_stamp,
    html_post,
    site_address,
    warn_no_site,
)
from core.parse.fields import BadInput, Context, as_text

_HEADINGS = frozenset(f"h{n}" for n in range(1, 7))
# Lexical nodes that hold one paragraph of text (Ghost's own "extended-" variants included).
_LEXICAL_BLOCKS = frozenset(
    ["paragraph", "heading", "extended-heading", "quote", "extended-quote", "aside", "listitem"]
)
# Cards whose fields are the author's prose, as Ghost renders them into a post's `html`. A post written
# in Ghost's first editor is one Markdown card ("card-markdown"), so without these its text is lost.
_PROSE_CARDS = frozenset(["markdown", "card-markdown", "html", "callout", "toggle", "image", "gallery"])


def is_ghost_export(data: Any) -> bool:
    """Whether decoded JSON is a Ghost export: {"db": [{"meta": …, "data": {"posts": […]}}]}."""
    if not isinstance(data, dict) or not isinstance(data.get("db"), list) or not data["db"]:
        return False
    first = data["db"][0]
    return isinstance(first, dict) and isinstance(first.get("data"), dict) and "posts" in first["data"]


def ghost_exported(data: dict[str, Any]) -> str:
    """When a Ghost export (is_ghost_export) was made: its `meta.exported_on`, milliseconds since 1970
    in UTC, as core/parse/exported.py export_stamp gives it; "" when it has none that reads as a time."""
    meta = data["db"][0].get("meta")
    when = meta.get("exported_on") if isinstance(meta, dict) else None
    if isinstance(when, bool) or not isinstance(when, int | float):
        return ""
    try:
        return export_stamp(datetime.fromtimestamp(when / 1000, UTC))
    except (OverflowError, OSError, ValueError):  # out of datetime's range
        return ""


def parse_ghost(ctx: Context, data: dict[str, Any]) -> list[Post]:
    tables = data["db"][0]["data"]
    posts = tables.get("posts")
    if not isinstance(posts, list):
        raise BadInput('is a Ghost export whose "posts" is not a list')
    site = _setting(tables, "url") or ctx.options.site_url
    tags = _tags_by_post(tables)
    exported = ghost_exported(data)
    left_out = LeftOut()
    found = ExportPosts()
    addressless = 0  # published posts without an address: no site known
    for number, row in enumerate(posts, 1):
        if not isinstance(row, dict):
            ctx.error(f"post {number} is not a JSON object; skipped")
            continue
        post = _post(ctx, row, number, site, tags, left_out, exported, found)
        if post is not None:
            addressless += not site and as_text(row.get("status")) == "published"
    left_out.report(ctx)
    warn_no_site(ctx, addressless, "the export has no site URL setting")
    return found.settled(ctx)


def _post(
    ctx: Context,
    row: dict[str, Any],
    number: int,
    site: str,
    tags: dict[str, list[str]],
    left_out: LeftOut,
    exported: str,
    found: ExportPosts,
) -> Post | None:
    is_page = row.get("type") == "page" or row.get("page") is True  # `page` before Ghost 4
    status = as_text(row.get("status"))
    published = status == "published"
    if is_page and not ctx.options.include_pages:
        left_out.add("page")
        return None
    if status == "sent":  # a newsletter sent to members only, never on the site: no draft, no address
        if not ctx.options.include_members:
            left_out.add(EMAIL_ONLY)
            return None
    elif not published and not ctx.options.include_drafts:
        left_out.add("draft")
        return None
    # Older exports have no `visibility`: every post was public.
    if (as_text(row.get("visibility")) or "public").lower() != "public" and not ctx.options.include_members:
        left_out.add(MEMBERS_ONLY)
        return None
    slug, title = as_text(row.get("slug")), as_text(row.get("title"))
    return html_post(
        ctx,
        body=_body(row),
        title=title,
        slug=slug,
        date=as_text(row.get("published_at")) or as_text(row.get("created_at")),
        tags=tags.get(as_text(row.get("id")), []),
        url=site_address(site, slug) if published else "",
        where=f"post {number} ({title[:60]!r}): ",
        export=GHOST,
        exported=exported,
        into=found,
    )


def _body(row: dict[str, Any]) -> str:
    if as_text(row.get("html")):
        return as_text(row["html"])
    for key, render in (("lexical", _lexical_html), ("mobiledoc", _mobiledoc_html)):
        document = _json_field(row.get(key))
        if document:
            rendered = render(document)
            if rendered.strip():
                return rendered
    text = as_text(row.get("plaintext"))
    return "".join(f"<p>{html.escape(p.strip())}</p>" for p in text.split("\n\n") if p.strip())


def _json_field(value: Any) -> Any:
    """Ghost stores Lexical and Mobiledoc documents as JSON strings inside the JSON."""
    if isinstance(value, str) and value.strip():
        try:
            return json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            return None
    return value if isinstance(value, dict) else None


def _lexical_html(document: Any) -> str:
    """Headings and paragraphs (quotes, list items) of a Lexical document as HTML."""
    out: list[str] = []

    def text_of(node: dict[str, Any]) -> str:
        if isinstance(node.get("text"), str):
            return node["text"]
        if node.get("type") == "linebreak":
            return "\n"
        return "".join(text_of(c) for c in node.get("children") or [] if isinstance(c, dict))

    def visit(node: dict[str, Any]) -> None:
        kind = node.get("type")
        if kind in _PROSE_CARDS:  # a Lexical card keeps its fields on the node itself
            out.append(_card_html(str(kind), node))
            return
        if kind in _LEXICAL_BLOCKS:
            heading = kind in ("heading", "extended-heading") and node.get("tag") in _HEADINGS
            tag = node["tag"] if heading else "p"
            # A nested list sits in a list item of its own: its items are paragraphs of their own, not
            # one run of text ("A planeA saw").
            children = [c for c in node.get("children") or [] if isinstance(c, dict)]
            text = "".join(text_of(c) for c in children if c.get("type") != "list")
            if text.strip():
                out.append(f"<{tag}>{html.escape(text)}</{tag}>")
            for nested in (c for c in children if c.get("type") == "list"):
                visit(nested)
            return
        for child in node.get("children") or []:
            if isinstance(child, dict):
                visit(child)

    root = document.get("root") if isinstance(document, dict) else None
    if isinstance(root, dict):
        visit(root)
    return "".join(out)


def _card_html(name: str, payload: dict[str, Any]) -> str:
    """The prose of a card (a name of _PROSE_CARDS) as HTML, as Ghost renders it: Markdown rendered, an
    HTML card's HTML, a callout's text, a toggle's heading and content, a media caption; "" for none."""

    def field(key: str) -> str:
        return as_text(payload.get(key))

    if name in ("markdown", "card-markdown"):
        return markdown_to_html(field("markdown"))
    if name == "html":
        return field("html")
    if name == "callout":
        return f"<div>{field('calloutText')}</div>"
    if name == "toggle":
        return f"<h4>{field('heading')}</h4><div>{field('content')}</div>"
    return f"<figure><figcaption>{field('caption')}</figcaption></figure>" if field("caption") else ""


def _mobiledoc_html(document: Any) -> str:
    """Markup sections (p, h1-h6, blockquote), list items and prose cards (_card_html) of a Mobiledoc
    document as HTML; other cards (embeds, code, bookmarks) are left out."""
    if not isinstance(document, dict):
        return ""
    atoms = document.get("atoms") if isinstance(document.get("atoms"), list) else []
    cards = document.get("cards") if isinstance(document.get("cards"), list) else []
    out = []
    for section in document.get("sections") or []:
        if not isinstance(section, list) or len(section) < 2:
            continue
        kind, tag = section[0], str(section[1]).lower()
        if kind == 10:  # card section: [10, index into cards], a card being [name, payload]
            out.append(_mobiledoc_card(cards, section[1]))
        elif kind == 1 and len(section) >= 3:  # markup section: [1, tag, markers]
            tag = tag if tag in _HEADINGS else "p"
            out.append(f"<{tag}>{html.escape(_markers_text(section[2], atoms))}</{tag}>")
        elif kind == 3 and len(section) >= 3:  # list section: [3, tag, [markers, …]]
            out.extend(f"<p>{html.escape(_markers_text(item, atoms))}</p>" for item in section[2] or [])
    return "".join(out)


def _mobiledoc_card(cards: list[Any], index: Any) -> str:
    """The prose of the card at `index` of a Mobiledoc's cards ([name, payload] each), "" for none."""
    card = cards[index] if isinstance(index, int) and 0 <= index < len(cards) else None
    if isinstance(card, list) and len(card) >= 2 and card[0] in _PROSE_CARDS and isinstance(card[1], dict):
        return _card_html(card[0], card[1])
    return ""


def _markers_text(markers: Any, atoms: list[Any]) -> str:
    # A text marker is [0, opened markups, closed count, "text"]; an atom marker [1, …, index into
    # atoms] is a mention or a soft return (shift-enter), which must still part the words around it.
    parts = []
    for marker in markers or []:
        if not isinstance(marker, list) or len(marker) < 4:
            continue
        if marker[0] == 0 and isinstance(marker[3], str):
            parts.append(marker[3])
        elif marker[0] == 1 and isinstance(marker[3], int) and 0 <= marker[3] < len(atoms):
            atom = atoms[marker[3]]
            parts.append("\n" if isinstance(atom, list) and atom and atom[0] == "soft-return" else "")
    return "".join(parts)


def _setting(tables: dict[str, Any], key: str) -> str:
    for row in tables.get("settings") or []:
        if isinstance(row, dict) and row.get("key") == key:
            return as_text(row.get("value"))
    return ""


def _tags_by_post(tables: dict[str, Any]) -> dict[str, list[str]]:
    """Tag names per post id, in each post's `sort_order`; internal tags (#hash) left out."""
    names = {
        as_text(t.get("id")): as_text(t.get("name")) for t in tables.get("tags") or [] if isinstance(t, dict)
    }
    links = [link for link in tables.get("posts_tags") or [] if isinstance(link, dict)]
    links.sort(key=lambda link: link.get("sort_order") if isinstance(link.get("sort_order"), int) else 0)
    found: dict[str, list[str]] = {}
    for link in links:
        name = names.get(as_text(link.get("tag_id")), "")
        if name and not name.startswith("#"):
            found.setdefault(as_text(link.get("post_id")), []).append(name)
    return found
