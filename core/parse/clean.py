"""Turn markdown, HTML and plain text into clean paragraphs and headings (`Block`s).

Markup is stripped with real parsers (markdown-it-py, trafilatura, lxml), never regexes over the
markup. Source tags such as `[REF: Smith 2019]` and `[IMAGE: a photo of x]` carry meaning for the
answer stage and must come out verbatim: markdown and plain text swap them for placeholders the
parsers (and whitespace clean-up) cannot touch, then swap them back; in HTML they are ordinary text.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from itertools import pairwise

from lxml import etree, html
from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.footnote import footnote_plugin

from core.models import Block

# `[REF: …]`, `[IMAGE: …]`: markdown-it would read them as link labels (and `[REF: x]: y` as a link
# definition, deleting the line), so they are hidden from it.
TAG_RE = re.compile(r"\[(?:REF|IMAGE)\s*:[^\[\]\n]*\]", re.IGNORECASE)
# Private-use characters: no parser gives them meaning and no author types them.
_PH_OPEN, _PH_CLOSE = "\ue000", "\ue001"
_PH_RE = re.compile(f"{_PH_OPEN}(\\d+){_PH_CLOSE}")
_BLANK_LINE = re.compile(r"\n[ \t\f\v]*\n")
_BR_RE = re.compile(r"<br\b", re.IGNORECASE)

# Separators used while flattening a tree (paragraph break, line break, heading mark); private-use
# characters again, because str.split() counts the ASCII separator controls as whitespace.
_PARA, _LINE, _HEAD = "\ue010", "\ue011", "\ue012"

# GFM tables and ~~strike~~ are common in blog markdown; HTML stays on so it can be stripped. Footnotes
# (`[^1]`, and `[^1]: the note`) are parsed so that a reference leaves no marker in the sentence while
# the note's own text stays, as paragraphs at the end.
_MD = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).use(footnote_plugin)

# A footnote marker left in plain text: `[3]`, `[^3]`, `[^note]`, or superscript digits after a
# punctuation mark or a word of three letters or more ("light.¹", "moves²"; "m²" and "cm²" stay).
# A marker carries no words: quoting "light.[3]" would show the reader a stray number.
_NOTE_MARK = re.compile(
    r"\[\^?\d{1,3}\]|\[\^[^\]\s]{1,20}\]|(?:(?<=[.,;:!?)\"”’])|(?<=[^\W\d_]{3}))[⁰¹²³⁴⁵⁶⁷⁸⁹]+"
)
# The text of a footnote reference or back-link element in HTML: "1", "[12]", "*", "†", "a", "↩".
_NOTE_TEXT = re.compile(r"[\[(]?(?:\d{1,3}|[*†‡§¶]{1,3}|[a-z])[\])]?|[↩↑⤴\ufe0e]+")


# Tag protection --------------------------------------------------------------------------------------


def _protect(text: str) -> tuple[str, list[str]]:
    tags: list[str] = []

    def hide(match: re.Match[str]) -> str:
        tags.append(match.group(0))
        return f"{_PH_OPEN}{len(tags) - 1}{_PH_CLOSE}"

    return TAG_RE.sub(hide, text), tags


def _restore(text: str, tags: list[str]) -> str:
    return _PH_RE.sub(lambda m: tags[int(m.group(1))], text) if tags else text


def drop_note_markers(text: str) -> str:
    """`text` without footnote markers (`[3]`, `[^3]`, "light.¹"); whitespace is left to the caller."""
    return _NOTE_MARK.sub("", text)


def _tidy(text: str) -> str:
    """Collapse whitespace inside each line and drop empty lines (lines are list items, table rows);
    footnote markers go."""
    lines = (" ".join(drop_note_markers(line).split()) for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


def _finish(raw: list[Block], tags: list[str]) -> list[Block]:
    blocks = []
    for block in raw:
        text = _tidy(_restore(block.text, tags))
        if visible(text):
            blocks.append(Block(text, heading=block.heading, list_style=block.list_style))
    return blocks


def normalise_newlines(text: str) -> str:
    """`\r\n` and lone `\r` (old Mac files) as `\n`, byte-order marks left out."""
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\ufeff", "")


# Characters that draw nothing: format characters (Cf: zero-width space and joiners, word joiner, BOM,
# soft hyphen…), controls, lone combining marks, and the blank "letters" (Hangul fillers, braille blank).
_UNSEEN_CATEGORIES = frozenset({"Cf", "Cc", "Cs", "Mn", "Me", "Zs", "Zl", "Zp"})
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def visible(text: str) -> bool:
    """Whether `text` has a character that shows (not whitespace, not zero-width or otherwise blank)."""
    return any(
        not ch.isspace() and ch not in _BLANK_LETTERS and unicodedata.category(ch) not in _UNSEEN_CATEGORIES
        for ch in text
    )


def shown(text: str) -> str:
    """`text`, or "" when nothing of it is visible (an invisible title is no title)."""
    return text if visible(text) else ""


# Plain text ------------------------------------------------------------------------------------------


def text_to_blocks(text: str) -> list[Block]:
    """Paragraphs are separated by blank lines; text without any blank line has one per line.

    No markup is interpreted: `# Title` in a .txt file is just text.
    """
    text, tags = _protect(normalise_newlines(text).strip())
    parts = _BLANK_LINE.split(text) if _BLANK_LINE.search(text) else text.split("\n")
    # Inside a paragraph, line breaks are just wrapping.
    return _finish([Block(" ".join(p.split())) for p in parts], tags)


# Markdown --------------------------------------------------------------------------------------------


def markdown_to_blocks(text: str) -> list[Block]:
    """Headings become heading blocks; paragraphs and quotes one block each; a list or table is one
    block with an item (row) per line. Code fences and indented code are dropped; inline `code`
    keeps its words (dropping them would break sentences). Links keep their text, images vanish."""
    text, tags = _protect(normalise_newlines(text))
    blocks: list[Block] = []
    heading = False
    # Lines of the list or table being read; lists nest, so count depth.
    group: list[str] = []
    depth = 0
    style = ""  # the outermost list's: "bullet" or "ordered" ("" for a table)
    row: list[str] = []
    in_cell = False
    for tok in _MD.parse(text):
        kind = tok.type
        if kind == "heading_open":
            heading = True
        elif kind == "heading_close":
            heading = False
        elif kind in ("bullet_list_open", "ordered_list_open", "table_open"):
            if depth == 0:
                style = kind.removesuffix("_list_open") if kind != "table_open" else ""
            depth += 1
        elif kind in ("bullet_list_close", "ordered_list_close", "table_close"):
            depth -= 1
            if depth == 0:
                blocks.append(Block("\n".join(group), list_style=style))
                group = []
        elif kind == "tr_open":
            row = []
        elif kind == "tr_close":
            group.append(" | ".join(cell for cell in row if cell))
        elif kind in ("th_open", "td_open", "th_close", "td_close"):
            in_cell = kind.endswith("_open")
        elif kind == "inline":
            line = _inline_text(tok.children or [])
            if in_cell:
                row.append(" ".join(line.split()))
            elif heading:
                blocks.append(Block(line, heading=True))
            elif depth:
                group.append(line)
            else:
                blocks.append(Block(line))
        elif kind == "html_block":
            found = html_fragment_to_blocks(tok.content)
            if depth:
                group.extend(b.text for b in found)
            else:
                blocks.extend(found)
        # fence, code_block, hr and the *_open/_close of paragraphs and quotes carry no text.
    return _finish(blocks, tags)


def markdown_to_html(text: str) -> str:
    """Markdown rendered as HTML by the same parser as Markdown posts (CommonMark, tables, footnotes,
    raw HTML kept), for formats that embed Markdown in HTML (Ghost's Markdown cards)."""
    return _MD.render(normalise_newlines(text))


def markdown_title(text: str) -> str:
    """Text of the first level-1 heading (`# Title` or a `===` underline), or ""."""
    text, tags = _protect(normalise_newlines(text))
    tokens = _MD.parse(text)
    for tok, nxt in pairwise(tokens):
        if tok.type == "heading_open" and tok.tag == "h1":
            return shown(_tidy(_restore(_inline_text(nxt.children or []), tags)).replace("\n", " "))
    return ""


def _inline_text(children: list[Token]) -> str:
    parts: list[str] = []
    in_autolink = False
    for child in children:
        kind = child.type
        if kind == "link_open" and child.markup == "autolink":
            in_autolink = True  # `<https://…>` is a bare URL, not prose
        elif kind == "link_close":
            in_autolink = False
        elif in_autolink:
            continue
        elif kind in ("text", "text_special", "code_inline"):
            parts.append(child.content)
        elif kind == "softbreak":
            parts.append(" ")
        elif kind == "hardbreak" or (kind == "html_inline" and _BR_RE.match(child.content)):
            parts.append("\n")
        # images (alt text stays out), emphasis markers, other inline HTML: nothing
    return "".join(parts)


# HTML ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Markup:
    """How a tree's tags map to blocks; shared by real HTML and trafilatura's XML."""

    headings: frozenset[str]
    blocks: frozenset[str]
    lines: frozenset[str]
    breaks: frozenset[str]
    cells: frozenset[str]
    skip: frozenset[str]


def _names(words: str) -> frozenset[str]:
    return frozenset(words.split())


_HTML_MARKUP = _Markup(
    headings=frozenset({"h1", "h2", "h3", "h4", "h5", "h6"}),
    blocks=_names(
        "p div section article main header blockquote ul ol dl table figure figcaption address "
        "details summary hr center body html"
    ),
    lines=frozenset({"li", "tr", "dt", "dd"}),
    breaks=frozenset({"br"}),
    cells=frozenset({"td", "th"}),
    # Code, scripts and page furniture (navigation, footers, sidebars, forms) are not the author's prose.
    skip=_names(
        "script style pre noscript template svg math iframe object embed canvas button select "
        "textarea input head title nav footer aside form img picture video audio"
    ),
)
# trafilatura's XML (TEI-like): <head>, <p>, <list><item>, <quote>, <table><row><cell>, <lb/>.
_XML_MARKUP = _Markup(
    headings=frozenset({"head"}),
    blocks=frozenset({"p", "list", "quote", "table", "main", "doc", "div"}),
    lines=frozenset({"item", "row"}),
    breaks=frozenset({"lb"}),
    cells=frozenset({"cell"}),
    skip=frozenset({"code", "graphic", "comments", "fw", "note"}),
)


def _flatten(root: etree._Element, markup: _Markup) -> list[Block]:
    """Walk a tree into text with separator characters, then split it into blocks."""
    parts: list[str] = []

    def text(value: str | None) -> None:
        if value:
            parts.append(re.sub(r"\s+", " ", value))  # source line wrapping is not a break

    def visit(el: etree._Element) -> None:
        tag = el.tag.lower() if isinstance(el.tag, str) else ""
        if "}" in tag:
            tag = tag.rsplit("}", 1)[1]
        if not tag or tag in markup.skip or _is_note_marker(el, tag):  # comments, PIs, skipped elements
            text(el.tail)
            return
        if tag in markup.headings:
            title = " ".join("".join(el.itertext()).split())
            parts.append(f"{_PARA}{_HEAD}{title}{_PARA}")
        else:
            sep = _PARA if tag in markup.blocks else _LINE if tag in markup.lines else ""
            parts.append(sep)
            if tag in markup.breaks:
                parts.append(_LINE)
            elif tag in markup.cells:
                parts.append(" | ")
            text(el.text)
            for child in el:
                visit(child)
            parts.append(sep)
        text(el.tail)

    visit(root)
    blocks = []
    for para in "".join(parts).split(_PARA):
        lines = (" ".join(line.split()).strip(" |") for line in para.split(_LINE))
        body = "\n".join(line for line in lines if line)
        if body.startswith(_HEAD):
            body = body[1:].strip()
            if visible(body):
                blocks.append(Block(body, heading=True))
        elif visible(body):
            blocks.append(Block(body))
    return blocks


def _is_note_marker(el: etree._Element, tag: str) -> bool:
    """Whether `el` is a footnote reference or back-link (`<sup><a href="#fn1">1</a></sup>`,
    `<a class="footnote-ref">`, `<a role="doc-backlink">↩</a>`): a marker, not words of the post."""
    if tag not in ("sup", "a"):
        return False
    text = "".join(el.itertext()).strip()
    if not _NOTE_TEXT.fullmatch(text):
        return False
    if tag == "a":
        if not any(ch.isalnum() for ch in text):  # "↩", "↑": a back-link whatever its attributes
            return True
        marks = " ".join(el.get(name) or "" for name in ("class", "role", "rel")).lower()
        href = el.get("href") or ""
        return any(m in marks for m in ("footnote", "noteref", "backlink")) or href.startswith(
            ("#fn", "#footnote")
        )
    if el.find(".//a") is not None:  # a link in a superscript is a note reference
        return True
    # A bare <sup>2</sup> is a note after a word or a stop ("light.<sup>2</sup>"), not in "m<sup>2</sup>".
    previous, parent = el.getprevious(), el.getparent()
    before = (previous.tail if previous is not None else parent.text if parent is not None else "") or ""
    return bool(re.search(r"(?:[.,;:!?)\"”’]|[^\W\d_]{3})$", before))


def html_fragment_to_blocks(fragment: str) -> list[Block]:
    """Blocks of an HTML snippet (a post body, an HTML block inside markdown)."""
    if not fragment.strip():
        return []
    try:
        root = html.fragment_fromstring(fragment, create_parent="div")
    except (etree.ParserError, ValueError):
        return []
    return _flatten(root, _HTML_MARKUP)


def html_to_blocks(page: str) -> tuple[str, list[Block]]:
    """(title, blocks) of a web page's article: navigation, sidebars, footers and comments left out."""
    title, _date, blocks = html_article(page)
    return title, blocks


def html_article(page: str) -> tuple[str, str, list[Block]]:
    """Like `html_to_blocks`, plus the publication date trafilatura found ("" if none)."""
    # Imported here: trafilatura takes a third of a second to import and most inputs are not HTML.
    import trafilatura

    tree = _parse_page(page)
    if tree is None:
        return "", "", []
    title, date = _page_title(tree), ""
    # trafilatura falls back to all of the body's text on small pages, menus included, so the
    # obvious page furniture goes before it looks.
    for el in tree.xpath(_FURNITURE):
        el.drop_tree()
    for el in [el for el in tree.iter("sup", "a") if _is_note_marker(el, el.tag)]:
        el.drop_tree()  # footnote markers, before trafilatura flattens them into the words
    xml = trafilatura.extract(
        tree,
        output_format="xml",
        with_metadata=True,
        include_comments=False,
        include_tables=True,
        include_images=False,
        include_links=False,
        favor_recall=True,
    )
    blocks: list[Block] = []
    doc = etree.fromstring(xml.encode("utf-8"), etree.XMLParser(recover=True)) if xml else None
    if doc is not None:
        # trafilatura's title prefers og:title and drops the " | Site name" suffix of <title>.
        title = shown(" ".join((doc.get("title") or "").split())) or title
        date = doc.get("date") or ""
        blocks = _finish(_flatten(doc, _XML_MARKUP), [])
    if not blocks:
        # Nothing extracted (tiny or unusual page): the <body> minus scripts, menus and footers.
        fresh = _parse_page(page)
        body = fresh.find(".//body") if fresh is not None else None
        if body is not None:
            blocks = _finish(_flatten(body, _HTML_MARKUP), [])
    return title, date, blocks


_FURNITURE = (
    "//nav | //footer | //aside"
    " | //*[@role='navigation' or @role='contentinfo' or @role='complementary' or @role='banner']"
)


def _page_title(tree: html.HtmlElement) -> str:
    for path in (".//title", ".//h1"):
        found = tree.find(path)
        if found is not None and visible(found.text_content()):
            return " ".join(found.text_content().split())
    return ""


def _parse_page(page: str) -> html.HtmlElement | None:
    # lxml refuses str input that carries an XML encoding declaration (XHTML pages).
    page = re.sub(r"^\s*<\?xml[^>]*>", "", page)
    if not page.strip():
        return None
    try:
        return html.document_fromstring(page)
    except (etree.ParserError, ValueError):
        return None
