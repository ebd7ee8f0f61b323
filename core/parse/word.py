"""Word `.docx` files, read with python-docx after the zip passes core/parse/safezip.py: "Heading N"
paragraphs become headings (sections), others paragraphs, tables one row a line. The title is the
document's Title property, else its Title-style paragraph, else its first heading, else the file name;
the date its created property, tags its keywords."""

from __future__ import annotations

import html
import io
import re

from core.models import Post
from core.parse.clean import html_fragment_to_blocks
from core.parse.fields import (
    BadInput,
    Context,
    as_tags,
    first_heading,
    iso_day,
    make_post,
    name_parts,
    slug_id,
)
from core.parse.safezip import SafeZip

_HEADING_STYLE = re.compile(r"^heading\s*([1-9])$", re.IGNORECASE)


def parse_docx(ctx: Context, data: bytes) -> list[Post]:
    archive = SafeZip(data)  # limits and zip bombs, before python-docx opens it
    if "word/document.xml" not in archive.names:
        raise BadInput("is a zip but not a Word document (no word/document.xml)")
    document = _open(data)
    parts: list[str] = []
    styled_title = ""
    for item in document.iter_inner_content():
        if hasattr(item, "rows"):  # a table
            rows = ["".join(f"<td>{html.escape(c.text)}</td>" for c in row.cells) for row in item.rows]
            parts.append("<table>" + "".join(f"<tr>{r}</tr>" for r in rows) + "</table>")
            continue
        text, style = item.text, (item.style.name if item.style is not None else "") or ""
        if not text.strip():
            continue
        heading = _HEADING_STYLE.match(style)
        if style.lower() == "title" and not styled_title:
            styled_title = text.strip()
        elif heading:
            level = heading.group(1) if int(heading.group(1)) <= 6 else "6"
            parts.append(f"<h{level}>{html.escape(text)}</h{level}>")
        else:
            parts.append(f"<p>{html.escape(text)}</p>".replace("\n", "<br/>"))
    raw = "\n".join(parts)
    blocks = html_fragment_to_blocks(raw)
    props = document.core_properties
    date, name_title = name_parts(ctx.stem)
    title = (props.title or "").strip() or styled_title or first_heading(blocks) or name_title
    post = make_post(
        ctx,
        blocks,
        raw=raw,
        title=title,
        post_id=slug_id(ctx.stem),
        date=iso_day(props.created.isoformat()) if props.created else date,
        tags=as_tags(re.split(r"[;,]", props.keywords or "")),
        fmt="html",
    )
    return [post] if post else []


def _open(data: bytes):  # -> docx.document.Document (imported here: most ingests read no Word file)
    import docx
    from docx.opc.exceptions import PackageNotFoundError

    try:
        return docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, KeyError, ValueError) as exc:
        reason = " ".join(str(exc).split())[:120] or type(exc).__name__
        raise BadInput(f"is not a readable Word document ({reason})") from None
