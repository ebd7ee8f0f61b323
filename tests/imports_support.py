"""Files for tests/integration/test_imports.py: the platform exports under tests/fixtures/imports zipped as the
platforms ship them, a PDF and a Word file made here (pypdf and python-docx write them), and hostile
exports (XML bombs, external entities, zip bombs, path escapes, corrupt zips, encrypted or scanned PDFs).
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "imports"
SITE = "https://hollow.example"  # INKWELL_SITE_URL for the Ghost and Substack addresses


def zipped(folder: Path, prefix: str = "") -> bytes:
    """The folder as a zip (members in path order), as Substack or Medium hands it over."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, prefix + path.relative_to(folder).as_posix())
    return buffer.getvalue()


def zip_of(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


# WordPress ---------------------------------------------------------------------------------------------


def wxr_of(items: list[dict[str, str]]) -> bytes:
    """A WordPress export of `items` (title, link, slug, content; type "post" and status "publish"
    unless given), each field in CDATA as WordPress writes them."""
    rows = []
    for number, item in enumerate(items, 1):
        rows.append(
            f"<item><title><![CDATA[{item['title']}]]></title><link>{item['link']}</link>"
            f"<content:encoded><![CDATA[{item['content']}]]></content:encoded>"
            f"<wp:post_id>{number}</wp:post_id><wp:post_date><![CDATA[2024-01-0{number} 10:00:00]]></wp:post_date>"
            f"<wp:post_name><![CDATA[{item['slug']}]]></wp:post_name>"
            f"<wp:status><![CDATA[{item.get('status', 'publish')}]]></wp:status>"
            f"<wp:post_type><![CDATA[{item.get('type', 'post')}]]></wp:post_type></item>"
        )
    return (
        '<?xml version="1.0" encoding="UTF-8" ?>\n<rss version="2.0" '
        'xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:wp="http://wordpress.org/export/1.2/">'
        f"<channel><title>Woodshop</title><wp:wxr_version>1.2</wp:wxr_version>{''.join(rows)}</channel></rss>"
    ).encode()


# Posts for paying or signed-in members only -----------------------------------------------------------

# post id → (title, paragraph): in each export two are public (one of them without the field, as
# older exports are) and three are for paying or signed-in members only.
MEMBERS_POSTS = {
    "open-hives": ("Open Hives", "I open the hives on the first warm day above fifteen degrees."),
    "queen-rearing": ("Queen Rearing", "Grafting larvae under a day old gives the best queens."),
    "winter-feeding": ("Winter Feeding", "Fondant goes on the crown board in January, never syrup."),
    "mite-counts": ("Mite Counts", "A sugar roll of three hundred bees tells me the mite load."),
    "first-honey": ("First Honey", "The first super came off in July, forty pounds of lime honey."),
}
PUBLIC_POSTS = {"open-hives", "first-honey"}


def members_ghost() -> bytes:
    """A Ghost 5 export: one public post, one each for paid members, signed-in members and chosen
    tiers, and one from before visibility was exported (no field: public)."""
    visibility = {"open-hives": "public", "queen-rearing": "paid", "winter-feeding": "members"}
    visibility["mite-counts"] = "tiers"
    posts = []
    for number, (slug, (title, text)) in enumerate(MEMBERS_POSTS.items(), 1):
        row = {
            "id": f"p{number}",
            "title": title,
            "slug": slug,
            "html": f"<p>{text}</p>",
            "status": "published",
            "type": "post",
            "published_at": f"2023-0{number}-01T08:00:00.000Z",
        }
        if slug in visibility:
            row["visibility"] = visibility[slug]
        if slug == "mite-counts":
            row["tiers"] = [{"id": "t1", "name": "Beekeepers"}]
        posts.append(row)
    data = {"db": [{"meta": {"version": "5.78.0"}, "data": {"posts": posts, "tags": [], "posts_tags": []}}]}
    return json.dumps(data).encode()


def members_substack() -> bytes:
    """A Substack export: posts.csv and posts/*.html, one post for everyone, one for paid
    subscribers, one for founding members and one for free subscribers; one row without an audience
    (an export from before audiences: everyone)."""
    audience = {"open-hives": "everyone", "queen-rearing": "only_paid", "winter-feeding": "only_free"}
    audience |= {"mite-counts": "founding", "first-honey": ""}
    rows = ["post_id,post_date,is_published,email_sent_at,inbox_sent_at,type,audience,title,subtitle"]
    members = {}
    for number, (slug, (title, text)) in enumerate(MEMBERS_POSTS.items(), 1):
        post_id = f"5500{number}.{slug}"
        rows.append(f"{post_id},2023-0{number}-01T09:00:00.000Z,true,,,newsletter,{audience[slug]},{title},")
        members[f"posts/{post_id}.html"] = f"<p>{text}</p>".encode()
    return zip_of({"posts.csv": ("\n".join(rows) + "\n").encode(), **members})


# PDF -------------------------------------------------------------------------------------------------


def _pdf_string(text: str) -> bytes:
    escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return f"({escaped})".encode("cp1252")


def _page_stream(lines: list[str], header: str, footer: str) -> bytes:
    parts = []
    if header:
        parts.append(b"BT /F1 9 Tf 72 760 Td " + _pdf_string(header) + b" Tj ET")
    body = [b"BT /F1 11 Tf 72 720 Td 14 TL"]
    for line in lines:
        body.append((_pdf_string(line) if line else b"( )") + b" Tj T*")
    body.append(b"ET")
    parts.append(b" ".join(body))
    if footer:
        parts.append(b"BT /F1 9 Tf 280 40 Td " + _pdf_string(footer) + b" Tj ET")
    return b"\n".join(parts)


def make_pdf(
    pages: list[list[str]],
    *,
    title: str = "",
    header: str = "",
    footer: str = "Page {n} of {total}",
    created: str = "",
    keywords: str = "",
    password: str = "",
    image_only: bool = False,
) -> bytes:
    """A PDF whose pages hold `pages`' lines (Helvetica, 14 pt apart) under a running header and over a
    footer (`{n}`, `{total}` filled in); metadata, a user password, or no text at all on request."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
            NameObject("/Encoding"): NameObject("/WinAnsiEncoding"),
        }
    )
    font_ref = writer._add_object(font)
    for number, lines in enumerate(pages, 1):
        page = writer.add_blank_page(612, 792)
        stream = DecodedStreamObject()
        if image_only:  # a grey square drawn and a 1×1 inline image: a scan's shape, no text layer
            stream.set_data(
                b"0.5 g 72 400 300 300 re f q 300 0 0 300 72 72 cm BI /W 1 /H 1 /CS /G /BPC 8 ID \x80 EI Q"
            )
        else:
            filled = footer.format(n=number, total=len(pages)) if footer else ""
            stream.set_data(_page_stream(lines, header, filled))
        page[NameObject("/Contents")] = writer._add_object(stream)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font_ref})}
        )
    metadata = {"/Producer": "tests/imports_support.py"}
    if title:
        metadata["/Title"] = title
    if created:
        metadata["/CreationDate"] = created
    if keywords:
        metadata["/Keywords"] = keywords
    writer.add_metadata(metadata)
    if password:
        writer.encrypt(user_password=password, owner_password=password + "-owner", algorithm="RC4-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


ESSAY_PAGES = [
    [
        "On Green Woodworking",
        "",
        "Green wood is wood that has not been dried. It cuts like cheese under a drawknife and",
        "splits along its fibres, so a chair leg riven from a log follows the grain from end to end.",
        "A leg like that does not snap where a sawn one would.",
        "",
        "I buy ash and oak as logs from a sawyer two valleys over. He calls when a tree comes down",
        "in a storm, and I drive the truck out the same week, before the ends start to check.",
    ],
    [
        "Splitting a log takes wedges, a maul and a froe. The froe is a blade with a handle at",
        "right angles; you strike its back with a club and lever the split open along the grain.",
        "",
        "A riven blank dries in the shop for a fortnight before it is turned. Turned too wet, the",
        "leg goes oval as it shrinks, and the tenon never fits its mortise again.",
    ],
    [
        "Some makers boil the tenons dry in a pot of sand, so the tenon is drier than the seat it goes",
        "into. As the seat dries it grips the tenon tighter every year.",
        "",
        "That is the whole secret of a chair that lasts a century: wet wood around dry wood.",
    ],
]


def essay_pdf(**kwargs) -> bytes:
    kwargs.setdefault("header", "Wickham Hollow Woodshop · Essays")
    kwargs.setdefault("created", "D:20230411120000Z")
    kwargs.setdefault("keywords", "green wood; chairs")
    return make_pdf(ESSAY_PAGES, **kwargs)


# Word ------------------------------------------------------------------------------------------------


def essay_docx() -> bytes:
    """A Word essay: a Title paragraph, two Heading 2 sections, a table, created 2022-11-05."""
    import datetime as dt

    import docx

    document = docx.Document()
    document.core_properties.title = ""
    document.core_properties.created = dt.datetime(2022, 11, 5, 9, 30)
    document.core_properties.keywords = "finishes, shellac"
    document.add_paragraph("Shellac, the Forgiving Finish", style="Title")
    document.add_paragraph(
        "Shellac is the finish I reach for when a piece must be done by Friday. It dries in minutes "
        "and every coat melts into the one beneath it."
    )
    document.add_heading("Mixing a cut", level=2)
    document.add_paragraph("A two-pound cut is two pounds of flakes in a gallon of alcohol.")
    table = document.add_table(rows=2, cols=2)
    for row, (cut, use) in zip(table.rows, [("1 lb", "sealer"), ("2 lb", "build coats")], strict=True):
        row.cells[0].text, row.cells[1].text = cut, use
    document.add_heading("Repairs", level=2)
    document.add_paragraph(
        "A scratch in shellac disappears under a pad of fresh shellac and a little alcohol."
    )
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


# Hostile exports -------------------------------------------------------------------------------------

BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE rss [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<rss version="2.0" xmlns:wp="http://wordpress.org/export/1.2/"><channel><item><title>&lol4;</title>
<wp:post_type>post</wp:post_type><wp:status>publish</wp:status></item></channel></rss>
"""
EXTERNAL_ENTITY = b"""<?xml version="1.0"?>
<!DOCTYPE rss [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<rss version="2.0" xmlns:wp="http://wordpress.org/export/1.2/"
 xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel><item><title>Leak</title>
<content:encoded>&secret;</content:encoded><wp:post_type>post</wp:post_type><wp:status>publish</wp:status>
</item></channel></rss>
"""
MALFORMED_WXR = b"""<?xml version="1.0"?>
<rss version="2.0" xmlns:wp="http://wordpress.org/export/1.2/"><channel><item><title>Cut off</title>
<wp:post_type>post</wp:post_type></channel></rss>
"""


def zip_bomb() -> bytes:
    """One member of 60 MB of zeros, deflated to about 60 KB (1000:1)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("posts.csv", "post_id,post_date,is_published,type,title\n")
        archive.writestr("posts/1.bomb.html", b"\0" * (60 * 1024 * 1024))
    return buffer.getvalue()


def escaping_zip() -> bytes:
    return zip_of(
        {
            "posts.csv": b"post_id,post_date,is_published,type,title\n1.x,2023-01-01,true,newsletter,X\n",
            "posts/1.x.html": b"<p>Harmless text.</p>",
            "../../etc/cron.d/evil": b"* * * * * root sh -c 'echo owned'\n",
        }
    )


def corrupt_zip() -> bytes:
    whole = zipped(FIXTURES / "substack")
    return whole[: len(whole) // 2]  # a download cut off half way
