"""Blog-platform exports (WordPress WXR, Ghost JSON, Substack and Medium zips), PDF and Word files:
parsed with their titles, dates, tags, addresses and slug ids; ingested through the real `inkwell
ingest` (hash embeddings from a loopback server) and the Ingest page (AppTest); hostile exports refused by
name while the rest of the batch goes in."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import Path

import pytest

from core.ingest import ingest_paths, ingest_posts
from core.ingest.rebuild import rebuild_post
from core.parse import ImportOptions, parse_bytes, parse_paths, post_types
from core.parse.fields import BadInput
from core.parse.platforms import export_file
from core.parse.safezip import SafeZip, ZipLimits
from core.parse.wxr import strip_shortcodes
from core.store import Store
from tests.conftest import isolate_app, open_app, shown, texts, write
from tests.hostile_support import run_cli
from tests.imports_support import (
    BILLION_LAUGHS,
    EXTERNAL_ENTITY,
    FIXTURES,
    MALFORMED_WXR,
    MEMBERS_POSTS,
    PUBLIC_POSTS,
    SITE,
    corrupt_zip,
    escaping_zip,
    essay_docx,
    essay_pdf,
    make_pdf,
    members_ghost,
    members_substack,
    wxr_of,
    zip_bomb,
    zip_of,
    zipped,
)
from tests.writers_support import embedding_server, environ, settings_from

WOODSHOP = "https://woodshop.example"
MEDIUM = "https://medium.example/@maraquill"
# file name → its published posts: (post_id, title, date, tags, address)
EXPECTED = {
    "wordpress.xml": [
        (
            "oiling-the-walnut-bench",
            "Oiling the Walnut Bench",
            "2021-04-03",
            ["Finishing", "Furniture", "walnut"],
            f"{WOODSHOP}/2021/04/03/oiling-the-walnut-bench/",
        ),
        (
            "why-i-left-software",
            "Why I Left Software",
            "2020-01-15",
            ["career"],
            f"{WOODSHOP}/2020/01/15/why-i-left-software/",
        ),
        (
            "cafe-tables",
            "Café Tables & Chairs",
            "2022-06-30",
            ["Commissions", "Furniture", "oak"],
            f"{WOODSHOP}/2022/06/30/caf%c3%a9-tables/",
        ),
    ],
    "ghost.json": [
        (
            "sharpening-a-plane-iron",
            "Sharpening a Plane Iron",
            "2023-03-11",
            ["Tools", "Sharpening"],
            f"{SITE}/sharpening-a-plane-iron/",
        ),
        ("drying-lumber", "Drying Lumber in the Barn", "2023-05-02", ["Lumber"], f"{SITE}/drying-lumber/"),
        ("hide-glue-versus-pva", "Hide Glue Versus PVA", "2020-11-21", [], f"{SITE}/hide-glue-versus-pva/"),
    ],
    "substack.zip": [
        ("the-steam-box", "The Steam Box", "2023-02-14", [], f"{SITE}/p/the-steam-box"),
    ],
    "medium.zip": [
        (
            "why-windsor-chairs-last-3f2a9c1d7b4e",
            "Why Windsor Chairs Last",
            "2021-08-09",
            [],
            f"{MEDIUM}/why-windsor-chairs-last-3f2a9c1d7b4e",
        ),
        (
            "shaving-horse-plans-8b7c6d5e4f3a",
            "Shaving Horse Plans",
            "2022-03-01",
            [],
            f"{MEDIUM}/shaving-horse-plans-8b7c6d5e4f3a",
        ),
    ],
    "essay.pdf": [("essay", "On Green Woodworking", "2023-04-11", ["green wood", "chairs"], "")],
    "shellac.docx": [("shellac", "Shellac, the Forgiving Finish", "2022-11-05", ["finishes", "shellac"], "")],
}
# What --include-drafts and --include-pages add: file name → post ids.
DRAFTS = {
    "wordpress.xml": {"half-finished-thoughts-on-cherry"},
    "ghost.json": {"notes-for-a-spindle-post"},
    "substack.zip": {"untitled-draft-about-kilns"},
    "medium.zip": {"kiln-schedules-9a8b7c6d5e4f"},
}
PAGES = {"wordpress.xml": {"about"}, "ghost.json": {"commissions"}}
# What --include-members adds: posts for paying or signed-in members only (Substack audience only_paid).
MEMBERS = {"substack.zip": {"a-year-of-chairs"}}


def export_files() -> dict[str, bytes]:
    return {
        "wordpress.xml": (FIXTURES / "wordpress.xml").read_bytes(),
        "ghost.json": (FIXTURES / "ghost.json").read_bytes(),
        "substack.zip": zipped(FIXTURES / "substack"),
        "medium.zip": zipped(FIXTURES / "medium", "medium-export/"),
        "essay.pdf": essay_pdf(),
        "shellac.docx": essay_docx(),
    }


def write_exports(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, data in export_files().items():
        paths[name] = folder / name
        paths[name].write_bytes(data)
    return paths


def stored(db: Path) -> dict[str, tuple[str, str, list[str]]]:
    return {r["post_id"]: (r["title"], r["date"], list(r["tags"])) for r in Store(db).list_posts()}


def expected_rows(*names: str) -> dict[str, tuple[str, str, list[str]]]:
    return {pid: (title, date, tags) for name in names for pid, title, date, tags, _ in EXPECTED[name]}


def stored_urls(db: Path) -> dict[str, str]:
    return {r["post_id"]: r["url"] for r in Store(db).list_posts()}


def expected_urls(*names: str) -> dict[str, str]:
    """The addresses stored with INKWELL_SITE_URL=SITE: the export's own, else (PDF, Word) the site's
    default permalink /{slug}/."""
    return {pid: url or f"{SITE}/{pid}/" for name in names for pid, _, _, _, url in EXPECTED[name]}


def wxr_made(made: datetime | None, bench: str = "once in autumn", *, pub_date: bool = True) -> bytes:
    """The WordPress fixture made at `made`: its channel's pubDate (unless not `pub_date`) and generator
    comment say so, or neither has a date (None); its walnut bench post says `bench` where the fixture
    says "once in autumn"."""
    data = (FIXTURES / "wordpress.xml").read_bytes().replace(b"once in autumn", bench.encode())
    pub = b"<pubDate>Sat, 10 Feb 2024 09:12:44 +0000</pubDate>"
    created = b'created="2024-02-10 09:12"'
    new_pub = f"<pubDate>{format_datetime(made)}</pubDate>".encode() if made and pub_date else b""
    new_created = f'created="{made:%Y-%m-%d %H:%M}"'.encode() if made else b""
    return data.replace(pub, new_pub).replace(created, new_created)


def bench_row(db: Path) -> dict:
    return next(p for p in Store(db).posts.search().to_list() if p["post_id"] == "oiling-the-walnut-bench")


@pytest.fixture(scope="module")
def server():
    with embedding_server() as server:
        yield server


@pytest.fixture
def site(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("INKWELL_SITE_URL", SITE)
    return SITE


# Parsing ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(EXPECTED))
def test_each_format_yields_its_posts_with_titles_dates_tags_addresses(site, tmp_path, name) -> None:
    path = write_exports(tmp_path)[name]
    result = parse_paths(path)  # in the reader child process, as an ingest reads it
    assert not result.errors, result.errors
    got = [(p.post_id, p.title, p.date, p.tags, p.url) for p in result.posts]
    assert got == EXPECTED[name]
    assert all(not b.text.startswith("http") for p in result.posts for b in p.blocks)  # embeds gone


def test_a_plugins_post_types_are_named_when_left_out_and_read_when_asked() -> None:
    # Podcast episodes (a plugin's post type) were dropped without a word, not even in the warning.
    data = wxr_of(
        [
            {"title": "On Walnut", "link": "https://b.example/walnut/", "slug": "walnut",
             "content": "<p>Walnut is the one wood I buy that is not really local.</p>"},
            {"title": "Episode 1: Sawdust", "link": "https://b.example/podcast/ep1/", "slug": "ep1",
             "content": "<p>In the first episode I talk about sawdust and lungs.</p>", "type": "podcast"},
            {"title": "Episode 2: Glue", "link": "https://b.example/podcast/ep2/", "slug": "ep2",
             "content": "<p>Hide glue gives you time to fix a mistake.</p>", "type": "podcast"},
            {"title": "logo.png", "link": "https://b.example/logo/", "slug": "logo", "content": "",
             "type": "attachment", "status": "inherit"},
            {"title": "Main menu", "link": "https://b.example/menu/", "slug": "menu", "content": "",
             "type": "nav_menu_item"},
        ]
    )  # fmt: skip
    plain = parse_bytes("blog.xml", data)
    assert [p.post_id for p in plain.posts] == ["walnut"]
    [warning] = [w.message for w in plain.warnings]
    assert "2 of type 'podcast'" in warning and "--include-type podcast" in warning, warning
    assert "attachment" not in warning and "nav_menu_item" not in warning  # WordPress's own: no writing
    asked = parse_bytes("blog.xml", data, options=ImportOptions(include_types=("podcast",)))
    assert sorted(p.post_id for p in asked.posts) == ["ep1", "ep2", "walnut"] and not asked.warnings
    assert next(p for p in asked.posts if p.post_id == "ep2").url == "https://b.example/podcast/ep2/"
    # A remembered source keeps the choice for `inkwell sync`.
    options = ImportOptions(include_pages=True, include_types=post_types("Podcast, portfolio,"))
    assert options.include_types == ("podcast", "portfolio")
    assert ImportOptions.from_choices(json.loads(json.dumps(options.choices()))) == ImportOptions(
        include_pages=True, include_types=("podcast", "portfolio")
    )
    assert ImportOptions.from_choices({"include_pages": True}).include_types == ()  # kept before it existed


@pytest.mark.parametrize("name", list(DRAFTS))
def test_drafts_and_pages_only_when_asked(site, tmp_path, name) -> None:
    path = write_exports(tmp_path)[name]
    published = {p.post_id for p in parse_paths(path).posts}
    left_out = parse_paths(path).warnings
    assert len(left_out) == 1 and "left out" in left_out[0].message and "draft" in left_out[0].message
    drafts = parse_paths(path, options=ImportOptions(include_drafts=True))
    assert {p.post_id for p in drafts.posts} == published | DRAFTS[name]
    # A draft has no public address (its WordPress link is a ?p= preview).
    assert all(not p.url for p in drafts.posts if p.post_id in DRAFTS[name])
    everything = ImportOptions(include_drafts=True, include_pages=True, include_members=True)
    every = parse_paths(path, options=everything)
    added = DRAFTS[name] | PAGES.get(name, set()) | MEMBERS.get(name, set())
    assert {p.post_id for p in every.posts} == published | added
    assert not every.warnings


def test_wordpress_shortcodes_and_media_leave_the_prose_and_captions() -> None:
    result = parse_paths(FIXTURES / "wordpress.xml")
    bench = next(p for p in result.posts if p.post_id == "oiling-the-walnut-bench")
    assert [b.text for b in bench.blocks] == [
        "The walnut bench gets oiled twice a year, once in spring and once in autumn, and never in the "
        "damp weeks of November.",
        "The bench after its third coat of linseed oil.",  # the [caption]'s text, its <img> gone
        "I wipe on a thin coat, wait twenty minutes, and rub off everything the wood did not drink. "
        "Thick coats stay tacky for weeks.",
        "Three thin coats beat one thick coat, every time.",  # [gallery] and the YouTube line gone
    ]
    software = next(p for p in result.posts if p.post_id == "why-i-left-software")
    assert [(b.heading, b.text) for b in software.blocks][1:3] == [
        (True, "The first chair"),
        (
            False,
            "My first chair wobbled on every floor in the house. I kept it anyway; it sits in the shop "
            "beside the lathe.",
        ),
    ]
    assert "[sic]" in next(p for p in result.posts if p.post_id == "cafe-tables").text


def test_a_classic_wordpress_post_with_one_typed_paragraph_keeps_its_blank_line_paragraphs(tmp_path) -> None:
    classic = (
        "Oak first.\n\nAsh second.\n\n"
        '<p style="text-align: center;">A centred line.</p>\n\n'
        "Elm third.<!--more-->\n\nAfter the more tag.\n\n"
        "<pre>width = 40\n\ndepth = 60</pre>\n\nLast."
    )
    path = tmp_path / "blog.WordPress.xml"
    path.write_bytes(
        wxr_of([{"title": "Woods", "link": f"{WOODSHOP}/woods/", "slug": "woods", "content": classic}])
    )
    result = parse_paths(path)
    assert not result.errors, result.errors
    assert [b.text for b in result.posts[0].blocks] == [
        "Oak first.",
        "Ash second.",
        "A centred line.",
        "Elm third.",
        "After the more tag.",
        "Last.",  # the code's blank line is no paragraph break: no half of it comes out as prose
    ]


def test_a_bare_shortcode_on_its_own_line_does_not_reach_the_chunks(tmp_path) -> None:
    classic = "[toc]\n\nOak first [sic].\n\n[ez-toc]\n\nAsh second, see [1].\n[jetpack_subscription_form]"
    blocks = (
        "<!-- wp:shortcode -->\n[toc]\n<!-- /wp:shortcode -->\n\n"
        "<!-- wp:paragraph -->\n<p>Elm third [sic].</p>\n<!-- /wp:paragraph -->\n\n"
        "<!-- wp:paragraph -->\n<p>[applause]</p>\n<!-- /wp:paragraph -->"
    )
    items = [
        {"title": "Classic", "link": f"{WOODSHOP}/classic/", "slug": "classic", "content": classic},
        {"title": "Blocks", "link": f"{WOODSHOP}/blocks/", "slug": "blocks", "content": blocks},
    ]
    path = tmp_path / "blog.WordPress.xml"
    path.write_bytes(wxr_of(items))
    result = parse_paths(path)
    assert not result.errors, result.errors
    assert [[b.text for b in p.blocks] for p in result.posts] == [
        ["Oak first [sic].", "Ash second, see [1]."],  # bracketed prose inside sentences stays
        ["Elm third [sic]."],
    ]


def test_strip_shortcodes_keeps_bracketed_prose() -> None:
    text = (
        'Before [video src="a.mp4"][/video] after [REF: Smith 2019] and [1] and [sic]. '
        '[caption id="x"]<img src="y.jpg"/> Kept caption[/caption][contact-form-7 id="9" title="Contact"]'
        "[vc_row][vc_column]Inside a builder row.[/vc_column][/vc_row]"
    )
    assert strip_shortcodes(text) == (
        "Before  after [REF: Smith 2019] and [1] and [sic]. "
        '<figure><img src="y.jpg"/> Kept caption</figure>Inside a builder row.'
    )


JUNE = datetime(2024, 6, 1, 10, 15, 32, tzinfo=UTC)
GHOST_UNDATED = json.dumps(
    {"db": [{**json.loads((FIXTURES / "ghost.json").read_text())["db"][0], "meta": {}}]}
)


@pytest.mark.parametrize(
    ("name", "data", "exported"),
    [
        ("wordpress.xml", wxr_made(JUNE), "2024-06-01T10:15:32"),  # the channel's pubDate
        ("wordpress.xml", wxr_made(JUNE, pub_date=False), "2024-06-01T10:15"),  # the generator comment
        ("site.WordPress.2024-01-01.xml", wxr_made(JUNE), "2024-06-01T10:15:32"),  # its own date first
        ("site.WordPress.2024-01-01.xml", wxr_made(None), "2024-01-01"),  # else the file name's
        ("ghost.json", (FIXTURES / "ghost.json").read_bytes(), "2024-02-10T09:12:44"),  # meta.exported_on
        ("site.ghost.2024-06-01-10-15-32.json", GHOST_UNDATED.encode(), "2024-06-01T10:15:32"),
        ("substack.zip", zipped(FIXTURES / "substack"), ""),  # Substack and Medium give none
    ],
)
def test_an_export_knows_when_it_was_made(site, tmp_path, name, data, exported) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    assert {p.exported for p in parse_paths(path).posts} == {exported}
    assert {p.exported for p in parse_bytes(name, data).posts} == {exported}  # an upload's too
    assert export_file(path).exported == exported  # as a stored post's file is told


def test_ghost_site_url_setting_beats_the_configured_one(site) -> None:
    data = json.loads((FIXTURES / "ghost.json").read_text())
    data["db"][0]["data"]["settings"].append({"key": "url", "value": "https://ghost.example/"})
    result = parse_bytes("ghost.json", json.dumps(data).encode())
    assert result.posts[0].url == "https://ghost.example/sharpening-a-plane-iron/"


def _lexical_text(words: str) -> dict:
    return {"type": "extended-text", "text": words, "version": 1}


def _ghost_without_html() -> bytes:
    """A Ghost export whose posts have no `html`, as Ghost stores them: one post from Ghost 1's Markdown
    editor (its whole text one Markdown card), one Mobiledoc post with a Markdown card, a soft return
    and a captioned image, and one Lexical post with callout, Markdown, HTML and toggle cards and a
    nested list."""
    ghost1 = {"version": "0.3.1", "atoms": [], "markups": [], "sections": [[10, 0]]}
    ghost1["cards"] = [
        ["card-markdown", {"cardName": "card-markdown", "markdown": "Dry fit every glue-up first."}]
    ]
    ghost3 = {
        "version": "0.3.1",
        "atoms": [["soft-return", "", {}]],
        "markups": [],
        "cards": [
            [
                "markdown",
                {"markdown": "I paid **two pounds** for it.\n\n## Restoring it\n\nThe sole took an hour."},
            ],
            ["image", {"src": "__GHOST_URL__/plane.jpg", "caption": "The plane, restored"}],
            ["code", {"code": "print('no prose')"}],
        ],
        "sections": [
            [10, 0],
            [10, 1],
            [10, 2],
            [1, "p", [[0, [], 0, "It works today,"], [1, [], 0, 0], [0, [], 0, "forty years on."]]],
        ],
    }
    ghost5 = {
        "root": {
            "type": "root",
            "children": [
                {"type": "paragraph", "children": [_lexical_text("Sharpening comes first.")]},
                {"type": "callout", "calloutText": "<p><span>Never hone above 35 degrees.</span></p>"},
                {"type": "markdown", "markdown": "A *micro-bevel* saves time."},
                {"type": "html", "html": "<p>Flatten the stones with a diamond plate.</p>"},
                {
                    "type": "toggle",
                    "heading": "<span>How often?</span>",
                    "content": "<p>Every third session.</p>",
                },
                {
                    "type": "list",
                    "children": [  # a nested list is a list item of its own holding the list
                        {"type": "listitem", "children": [_lexical_text("Tools")]},
                        {
                            "type": "listitem",
                            "children": [
                                {
                                    "type": "list",
                                    "children": [
                                        {"type": "listitem", "children": [_lexical_text("A plane")]},
                                        {"type": "listitem", "children": [_lexical_text("A saw")]},
                                    ],
                                }
                            ],
                        },
                    ],
                },
            ],
        }
    }
    rows = [
        ("glue-ups", {"mobiledoc": json.dumps(ghost1)}),
        ("first-plane", {"mobiledoc": json.dumps(ghost3)}),
        ("sharpening", {"lexical": json.dumps(ghost5), "mobiledoc": None}),
    ]
    posts = [
        {
            "id": str(n),
            "title": slug.title(),
            "slug": slug,
            "html": None,
            "plaintext": None,
            "status": "published",
            "published_at": f"2020-0{n}-01T08:00:00.000Z",
            **body,
        }
        for n, (slug, body) in enumerate(rows, 1)
    ]
    return json.dumps({"db": [{"meta": {"exported_on": 1717236932000}, "data": {"posts": posts}}]}).encode()


def test_ghost_posts_without_html_keep_their_markdown_html_and_callout_cards(server, site, tmp_path) -> None:
    path = tmp_path / "blog.ghost.json"
    path.write_bytes(_ghost_without_html())
    db = tmp_path / "db"
    run = run_cli(
        ["ingest", str(path), "--json"], {**environ(server, db, chunk_tokens="300"), "INKWELL_SITE_URL": SITE}
    )
    assert run.code == 0 and not run.report["errors"], run.stderr[-3000:]
    assert "has no text" not in run.stderr  # no post left out for want of text
    chunks = Store(db).list_chunks()
    text = {pid: "\n\n".join(c["text"] for c in chunks if c["post_id"] == pid) for pid in stored(db)}
    assert text == {
        "glue-ups": "Dry fit every glue-up first.",
        "first-plane": "I paid two pounds for it.\n\nThe sole took an hour.\n\nThe plane, restored\n\n"
        "It works today, forty years on.",
        "sharpening": "Sharpening comes first.\n\nNever hone above 35 degrees.\n\nA micro-bevel saves time.\n\n"
        "Flatten the stones with a diamond plate.\n\nEvery third session.\n\nTools\n\nA plane\n\nA saw",
    }
    assert {c["section"] for c in chunks if c["post_id"] == "first-plane"} == {"", "Restoring it"}
    assert stored_urls(db)["glue-ups"] == f"{SITE}/glue-ups/"


def test_pdf_drops_running_headers_and_page_numbers_and_reads_the_pages_in_order() -> None:
    post = parse_bytes("essay.pdf", essay_pdf()).posts[0]
    assert "Woodshop · Essays" not in post.text and "Page " not in post.text
    assert post.text.startswith("Green wood is wood that has not been dried.")
    assert post.text.endswith(
        "That is the whole secret of a chair that lasts a century: wet wood around dry wood."
    )
    titled = parse_bytes("x.pdf", essay_pdf(title="Green Wood, Riven and Dry")).posts[0]
    assert titled.title == "Green Wood, Riven and Dry"
    assert titled.blocks[0].text == "On Green Woodworking"  # then the first line stays text


GLAZE_TALK = [
    "Why Glazes Crawl",  # pypdf gives no blank line after a title line
    "Crawling happens when a glaze pulls away from the clay body during the firing, leaving",
    "bare patches with thick rolled edges around them. The usual causes are dust or oil on",
    "the bisque, or a glaze applied too thickly.",
    "Fixing it",
    "Wipe the bisque with a damp sponge before glazing, and add a little gum to thick glazes so",
    "they dry without cracking.",
]


def test_a_pdf_title_line_without_a_blank_line_after_it_is_the_title_not_the_body() -> None:
    post = parse_bytes("glaze-talk.pdf", make_pdf([GLAZE_TALK])).posts[0]
    assert post.title == "Why Glazes Crawl"
    assert [b.text[:30] for b in post.blocks] == [
        "Crawling happens when a glaze ",
        "Fixing it",  # a heading in the body stands alone, not the start of the next paragraph
        "Wipe the bisque with a damp sp",
    ]
    # The metadata's title, when it is the first line, is not said again in the body.
    titled = parse_bytes("glaze-talk.pdf", make_pdf([GLAZE_TALK], title="Why Glazes Crawl")).posts[0]
    assert titled.title == "Why Glazes Crawl" and titled.text.startswith("Crawling happens")
    # A first line that is a sentence's start is body text: the title is the file name's.
    untitled = parse_bytes("glaze-talk.pdf", make_pdf([GLAZE_TALK[1:]])).posts[0]
    assert untitled.title == "Glaze talk" and untitled.text.startswith("Crawling happens")


def test_word_headings_become_sections() -> None:
    from core.chunk import chunk_post
    from core.config import Settings

    post = parse_bytes("shellac.docx", essay_docx()).posts[0]
    sections = {c.section for c in chunk_post(post, Settings.load(environ={}))}
    assert {"Mixing a cut", "Repairs"} <= sections
    assert "1 lb | sealer" in post.text


def test_imported_posts_rebuild_from_their_stored_raw_text(site, tmp_path) -> None:
    for path in write_exports(tmp_path).values():
        for post in parse_paths(path).posts:
            row = {**post.__dict__, "tags": post.tags}
            assert rebuild_post(row).blocks == post.blocks, (path.name, post.post_id)


def test_zip_limits_refuse_by_name() -> None:
    many = zip_of({f"posts/{n}.html": b"<p>x</p>" for n in range(30)})
    with pytest.raises(BadInput, match="30 members, over the 20 limit"):
        SafeZip(many, ZipLimits(members=20))
    with pytest.raises(BadInput, match="over 100 bytes uncompressed"):
        SafeZip(many, ZipLimits(total_bytes=100))


# The command line ------------------------------------------------------------------------------------


def test_every_format_through_the_cli_and_a_second_import_adds_nothing(server, tmp_path) -> None:
    paths = write_exports(tmp_path / "exports")
    db = tmp_path / "db"
    env = {**environ(server, db, chunk_tokens="300"), "INKWELL_SITE_URL": SITE}
    args = ["ingest", *map(str, paths.values()), "--json"]

    first = run_cli(args, env)
    assert first.code == 0, first.stderr[-3000:]
    assert stored(db) == expected_rows(*EXPECTED)
    assert stored_urls(db) == expected_urls(*EXPECTED)
    assert first.report["new"] == sum(map(len, EXPECTED.values())) and first.report["chunks_embedded"] > 0

    again = run_cli(args, env)
    assert again.code == 0, again.stderr[-3000:]
    assert again.report["new"] == 0 and again.report["updated"] == 0 and again.report["chunks_embedded"] == 0
    assert again.report["unchanged"] == first.report["new"]
    assert stored(db) == expected_rows(*EXPECTED)


def test_include_type_through_the_cli(server, tmp_path) -> None:
    path = tmp_path / "blog.xml"
    episode = "<p>In the first episode I talk about sawdust, lungs and the dust collector I built.</p>"
    path.write_bytes(wxr_of([{"title": "Ep 1", "link": "https://b.example/ep1/", "slug": "ep1",
                              "content": episode, "type": "podcast"}]))  # fmt: skip
    env = environ(server, tmp_path / "db", chunk_tokens="300")
    plain = run_cli(["ingest", str(path)], env)
    assert "1 of type 'podcast'" in plain.stderr and "--include-type podcast" in plain.stderr, plain.stderr
    run = run_cli(["ingest", str(path), "--include-type", "podcast"], env)
    assert run.code == 0, run.stderr[-3000:]
    assert set(stored(tmp_path / "db")) == {"ep1"}


def test_include_drafts_and_pages_through_the_cli(server, tmp_path) -> None:
    path = write_exports(tmp_path / "exports")["wordpress.xml"]
    db = tmp_path / "db"
    env = environ(server, db, chunk_tokens="300")
    plain = run_cli(["ingest", str(path)], env)
    assert plain.code == 0 and "left out 1 draft, 1 page" in plain.stderr
    run = run_cli(["ingest", str(path), "--include-drafts", "--include-pages"], env)
    assert run.code == 0, run.stderr[-3000:]
    rows = stored(db)
    assert set(rows) == set(expected_rows("wordpress.xml")) | DRAFTS["wordpress.xml"] | PAGES["wordpress.xml"]
    assert rows["half-finished-thoughts-on-cherry"] == (
        "Half-Finished Thoughts on Cherry",
        "2023-09-02",
        ["Finishing"],
    )
    # Published posts and pages keep their links; a draft's ?p= preview link is no address.
    assert stored_urls(db) == {
        **expected_urls("wordpress.xml"),
        "half-finished-thoughts-on-cherry": "",
        "about": f"{WOODSHOP}/about/",
    }


# Exports whose posts include some for paying or signed-in members only: file name → its bytes.
MEMBERS_EXPORTS = {"hives.ghost.json": members_ghost, "hives-substack.zip": members_substack}
LEFT_OUT_MEMBERS = (
    "left out 3 posts for paying or signed-in members only (read them with --include-members, or the "
    "Ingest page's checkboxes)"
)


@pytest.mark.parametrize("name", list(MEMBERS_EXPORTS))
def test_members_only_posts_are_stored_only_when_asked(server, site, tmp_path, name) -> None:
    path, db = tmp_path / name, tmp_path / "db"
    path.write_bytes(MEMBERS_EXPORTS[name]())
    settings = settings_from(environ(server, db, chunk_tokens="300"))

    report = ingest_paths([path], settings)

    assert report.ok, report.summary()
    assert set(stored(db)) == PUBLIC_POSTS  # answers quote stored posts to any reader
    assert [w.message for w in report.warnings] == [LEFT_OUT_MEMBERS]
    gated = [text for post_id, (_, text) in MEMBERS_POSTS.items() if post_id not in PUBLIC_POSTS]
    chunks = " ".join(row["text"] for row in Store(db).list_chunks(columns=["text"]))
    assert not any(text in chunks for text in gated)

    everything = ingest_paths([path], settings, options=ImportOptions(include_members=True))
    assert everything.ok and not everything.warnings, everything.summary()
    assert set(stored(db)) == set(MEMBERS_POSTS)


@pytest.mark.parametrize("name", list(MEMBERS_EXPORTS))
def test_include_members_through_the_cli(server, tmp_path, name) -> None:
    path, db = tmp_path / name, tmp_path / "db"
    path.write_bytes(MEMBERS_EXPORTS[name]())
    env = {**environ(server, db, chunk_tokens="300"), "INKWELL_SITE_URL": SITE}

    plain = run_cli(["ingest", str(path)], env)
    assert plain.code == 0, plain.stderr[-3000:]
    assert [line for line in plain.stderr.splitlines() if line.startswith("warning")] == [
        f"warning {path}: {LEFT_OUT_MEMBERS}"
    ]
    assert set(stored(db)) == PUBLIC_POSTS

    run = run_cli(["ingest", str(path), "--include-members"], env)
    assert run.code == 0, run.stderr[-3000:]
    assert "warning" not in run.stderr
    assert set(stored(db)) == set(MEMBERS_POSTS)


def test_a_draft_titled_like_a_published_post_never_takes_its_id(server, tmp_path) -> None:
    # The fixture's slugless draft, retitled as a published post and moved before it (and before a
    # post whose stated slug is the first suffix), as an old abandoned draft sits in an export.
    wxr = (FIXTURES / "wordpress.xml").read_text()
    head, *items = wxr.split("\t<item>")
    draft = next(i for i in items if "Half-Finished Thoughts on Cherry" in i)
    draft = draft.replace("Half-Finished Thoughts on Cherry", "Why I Left Software")
    items = [draft] + [
        i.replace("caf%c3%a9-tables", "why-i-left-software-2") for i in items if i is not draft
    ]
    path = tmp_path / "blog.WordPress.xml"
    path.write_text("\t<item>".join([head, *items]))
    db = tmp_path / "db"

    run = run_cli(
        ["ingest", str(path), "--include-drafts", "--json"], environ(server, db, chunk_tokens="300")
    )

    assert run.code == 0, run.stderr[-3000:]
    assert not run.report["errors"] and "kept the first" not in run.stderr
    posts = {p["post_id"]: p for p in Store(db).posts.search().to_list()}
    published = posts["why-i-left-software"]
    assert published["url"] == f"{WOODSHOP}/2020/01/15/why-i-left-software/"
    assert published["date"] == "2020-01-15" and "billing software" in published["raw"]
    assert "Cherry darkens" in posts["why-i-left-software-3"]["raw"]  # -2 is stated by another post
    assert posts["why-i-left-software-3"]["url"] == ""
    assert "stored as 'why-i-left-software-3'" in run.stderr

    # Substack drafts have no slug either: the same rule.
    substack = tmp_path / "substack"
    shutil.copytree(FIXTURES / "substack", substack)
    index = substack / "posts.csv"
    header, steam, chairs, kilns = index.read_text().splitlines()
    index.write_text(
        "\n".join([header, kilns.replace("Untitled draft about kilns", "The Steam Box"), steam, chairs])
    )
    everything = ImportOptions(include_drafts=True, include_members=True)  # "a-year-of-chairs" is paid
    read = parse_bytes("substack.zip", zipped(substack), options=everything)
    assert not read.errors, read.errors
    bodies = {p.post_id: p.text for p in read.posts}
    assert sorted(bodies) == ["a-year-of-chairs", "the-steam-box", "the-steam-box-2"]
    assert bodies["the-steam-box"].startswith("White oak bends best")
    assert bodies["the-steam-box-2"].startswith("Kilns dry wood")


def test_pages_sharing_a_slug_under_different_parents_are_all_stored(server, tmp_path) -> None:
    pages = [
        ("Services pricing", "services/pricing", "<p>Repairs cost forty pounds an hour.</p>"),
        ("Workshop pricing", "workshops/pricing", "<p>A day of chairmaking costs ninety pounds.</p>"),
        ("Courses pricing", "courses/pricing", "<p>The five-day course costs four hundred pounds.</p>"),
    ]
    items = [
        {"title": t, "link": f"{WOODSHOP}/{path}/", "slug": "pricing", "content": c, "type": "page"}
        for t, path, c in pages
    ]
    path = tmp_path / "blog.WordPress.xml"
    path.write_bytes(wxr_of(items))
    db = tmp_path / "db"
    env = environ(server, db, chunk_tokens="300")

    run = run_cli(["ingest", str(path), "--include-pages", "--json"], env)
    assert run.code == 0 and run.report["failed"] == 0 and not run.report["errors"], run.stderr[-3000:]
    assert stored_urls(db) == {
        "pricing": f"{WOODSHOP}/services/pricing/",  # the first keeps its slug (a pricing.md is the same post)
        "workshops-pricing": f"{WOODSHOP}/workshops/pricing/",
        "courses-pricing": f"{WOODSHOP}/courses/pricing/",
    }
    assert (
        f"warning {path}: item 2 ('Workshop pricing'): has the slug 'pricing' of another post" in run.stderr
    )
    again = run_cli(["ingest", str(path), "--include-pages", "--json"], env)  # the same ids again
    assert again.code == 0 and again.report["unchanged"] == 3 and again.report["new"] == 0, again.stderr[
        -3000:
    ]


TWEET = "PVA beats hide glue every time, fight me."  # someone else's words, embedded in the posts


def test_embedded_tweets_and_link_previews_are_not_stored_as_the_authors_words(
    server, site, tmp_path
) -> None:
    ghost_html = (
        "<p>Hide glue is what I use.</p>"
        '<figure class="kg-card kg-embed-card"><blockquote class="twitter-tweet"><p lang="en">'
        f'{TWEET}</p>&mdash; Bob (@bob) <a href="https://twitter.com/bob/status/1">March 1, 2023</a>'
        '</blockquote><script async src="https://platform.twitter.com/widgets.js"></script>'
        "<figcaption>Bob disagrees with me.</figcaption></figure>"
        '<figure class="kg-card kg-bookmark-card"><a class="kg-bookmark-container" href="https://other.example/">'
        '<div class="kg-bookmark-content"><div class="kg-bookmark-title">Ten reasons glue fails</div>'
        '<div class="kg-bookmark-description">Glue fails in the cold, says another site.</div>'
        '<div class="kg-bookmark-metadata"><span class="kg-bookmark-author">Other Site</span></div></div></a></figure>'
        "<p>It can be undone with heat.</p>"
    )
    post = {"id": "1", "title": "Glue", "slug": "glue", "html": ghost_html, "status": "published"}
    ghost = {"db": [{"meta": {"exported_on": 1717236932000}, "data": {"posts": [post]}}]}
    substack_html = (
        "<p>My lathe arrived.</p>"
        '<div class="tweet" data-attrs="{}"><a class="tweet-link-top" href="https://twitter.com/x/status/1">'
        '<div class="tweet-header"><span class="tweet-author-name">Bob </span></div>'
        f'<div class="tweet-text">{TWEET}</div></a></div>'
        '<div class="embedded-post-wrap"><div class="embedded-post"><div class="embedded-post-title">Other post</div>'
        '<div class="embedded-post-body">Someone else on chisels.</div>'
        '<div class="embedded-post-cta-wrapper"><span class="embedded-post-cta">Read more</span></div>'
        '<div class="embedded-post-meta">3 years ago · 2 likes · Other Author</div></div></div>'
        "<p>It turns ash well.</p>"
    )
    csv = "post_id,post_date,is_published,type,audience,title\n77.lathe,2023-02-14T09:00:00.000Z,true,newsletter,everyone,Lathe\n"
    paths = [tmp_path / "blog.ghost.json", tmp_path / "substack.zip"]
    paths[0].write_text(json.dumps(ghost))
    paths[1].write_bytes(zip_of({"posts.csv": csv.encode(), "posts/77.lathe.html": substack_html.encode()}))
    db = tmp_path / "db"

    run = run_cli(["ingest", *map(str, paths), "--json"], {**environ(server, db), "INKWELL_SITE_URL": SITE})
    assert run.code == 0 and not run.report["errors"], run.stderr[-3000:]
    text = {c["post_id"]: c["text"] for c in Store(db).list_chunks()}
    assert text == {
        "glue": "Hide glue is what I use.\n\nBob disagrees with me.\n\nIt can be undone with heat.",
        "lathe": "My lathe arrived.\n\nIt turns ash well.",
    }


def test_substacks_share_and_subscribe_calls_to_action_stay_out_of_the_posts(site, tmp_path) -> None:
    body = (  # as Substack writes a post with a "share" button and a subscribe widget
        "<p>The steam box is a drainpipe.</p>"
        '<div class="captioned-button-wrap" data-attrs="{}" data-component-name="CaptionedButtonToDOM">'
        '<div class="preamble"><p class="cta-caption">Thanks for reading Hollow Wood! This post is public so '
        'feel free to share it.</p></div><p class="button-wrapper" data-attrs="{}"><a class="button primary" '
        'href="https://hollow.example/p/steam?action=share"><span>Share</span></a></p></div>'
        '<div class="subscription-widget-wrap-editor" data-attrs="{}"><div class="subscription-widget show-subscribe">'
        '<div class="preamble"><p class="cta-caption">Hollow Wood is a reader-supported publication.</p></div>'
        '<form class="subscription-widget-subscribe"><input type="email" name="email"></form></div></div>'
        "<p>An hour per inch of thickness.</p>"
    )
    csv = "post_id,post_date,is_published,type,audience,title\n5.steam,2023-02-14T09:00:00.000Z,true,newsletter,everyone,Steam\n"
    path = tmp_path / "substack.zip"
    path.write_bytes(zip_of({"posts.csv": csv.encode(), "posts/5.steam.html": body.encode()}))
    result = parse_paths(path)
    assert not result.errors, result.errors
    assert [b.text for b in result.posts[0].blocks] == [
        "The steam box is a drainpipe.",
        "An hour per inch of thickness.",
    ]


def test_ghost_players_file_sizes_and_buttons_stay_out_of_the_chunks(server, site, tmp_path) -> None:
    cards = (  # as Ghost 5 renders its audio, video, file, button and product cards into a post's html
        "<p>Listen to the shop.</p>"
        '<div class="kg-card kg-audio-card"><div class="kg-audio-player-container"><audio src="a.mp3"></audio>'
        '<div class="kg-audio-title">Workshop tour</div><div class="kg-audio-player">'
        '<button class="kg-audio-play-icon"><svg></svg></button><span class="kg-audio-current-time">0:00</span>'
        '<div class="kg-audio-time">/<span class="kg-audio-duration">3:45</span></div></div></div></div>'
        '<figure class="kg-card kg-video-card"><div class="kg-video-container"><video src="v.mp4"></video>'
        '<div class="kg-video-player-container"><div class="kg-video-player"><span class="kg-video-current-time">'
        '0:00</span><div class="kg-video-time">/<span class="kg-video-duration">1:23</span></div></div></div>'
        "</div><figcaption>Planing a board.</figcaption></figure>"
        '<div class="kg-card kg-file-card"><a class="kg-file-card-container" href="f.pdf"><div class="kg-file-card-contents">'
        '<div class="kg-file-card-title">Cutting list</div><div class="kg-file-card-metadata">'
        '<div class="kg-file-card-filename">list.pdf</div><div class="kg-file-card-filesize">24 KB</div></div></div></a></div>'
        '<div class="kg-card kg-button-card kg-align-center"><a href="https://x/" class="kg-btn">Subscribe</a></div>'
        '<div class="kg-card kg-product-card"><div class="kg-product-card-container"><h4 class="kg-product-card-title">'
        'My plane</h4><div class="kg-product-card-description"><p>It takes a fine shaving.</p></div>'
        '<a href="x" class="kg-product-card-button"><span>Buy</span></a></div></div>'
    )
    post = {"id": "1", "title": "Media", "slug": "media", "html": cards, "status": "published"}
    path = tmp_path / "blog.ghost.json"
    path.write_text(json.dumps({"db": [{"meta": {}, "data": {"posts": [post]}}]}))
    db = tmp_path / "db"

    run = run_cli(["ingest", str(path), "--json"], {**environ(server, db), "INKWELL_SITE_URL": SITE})
    assert run.code == 0 and not run.report["errors"], run.stderr[-3000:]
    assert "\n\n".join(c["text"] for c in Store(db).list_chunks()) == (
        "Listen to the shop.\n\nWorkshop tour\n\nPlaning a board.\n\nCutting list\n\nIt takes a fine shaving."
    )


def test_a_gallery_or_video_post_of_an_export_is_left_out_with_a_warning(server, tmp_path) -> None:
    wxr = (FIXTURES / "wordpress.xml").read_text()
    start = wxr.index("<![CDATA[<!-- wp:paragraph -->\n<p>For eleven years")
    end = wxr.index("]]></content:encoded>", start)
    path = tmp_path / "blog.WordPress.xml"
    path.write_text(
        wxr[:start] + '<![CDATA[[gallery ids="1,2,3"]\n\nhttps://www.youtube.com/watch?v=xyz' + wxr[end:]
    )
    db = tmp_path / "db"
    env = environ(server, db, chunk_tokens="300")

    run = run_cli(["ingest", str(path), "--json"], env)
    assert run.code == 0, run.stderr[-3000:]
    assert not run.report["errors"] and run.report["failed"] == 0
    assert f"warning {path}: item 2 ('Why I Left Software'): has no text after cleaning" in run.stderr
    assert "left out" in run.stderr and "invisible" not in run.stderr
    again = run_cli(["ingest", str(path)], env)  # every re-import (a sync) alike: nothing failed
    assert again.code == 0 and "0 failed" in again.stdout, again.stderr[-3000:]
    assert "; 1 file read with warnings" in again.stdout  # its two warnings (this post, the drafts)
    assert set(stored(db)) == {"oiling-the-walnut-bench", "cafe-tables"}
    # A file of its own with no text is still an error: it is what was asked for.
    alone = parse_bytes("gallery.md", b"![kiln](kiln.jpg)\n\n![bowl](bowl.jpg)\n")
    assert [e.message for e in alone.errors] == ["has no text after cleaning (only markup, code or images?)"]


def test_ghost_and_substack_without_a_site_url_say_so_once_per_file(server, tmp_path, monkeypatch) -> None:
    paths = write_exports(tmp_path / "exports")
    db = tmp_path / "db"
    env = environ(server, db, chunk_tokens="300")  # no INKWELL_SITE_URL
    files = [paths["ghost.json"], paths["substack.zip"], paths["medium.zip"]]

    run = run_cli(["ingest", *map(str, files)], env)

    assert run.code == 0, run.stderr[-3000:]
    lines = [line for line in run.stderr.splitlines() if "INKWELL_SITE_URL" in line]
    assert lines == [
        f"warning {paths['ghost.json']}: no web addresses for its 3 published posts: the export has no site "
        "URL setting, so addresses need INKWELL_SITE_URL (the blog's address, e.g. https://blog.example); "
        "set it and ingest again",
        f"warning {paths['substack.zip']}: no web addresses for its 1 published post: the export names no "
        "site, so addresses need INKWELL_SITE_URL (the blog's address, e.g. https://blog.example); set it "
        "and ingest again",
    ]  # Medium's posts carry their own links
    urls = {p["post_id"]: p["url"] for p in Store(db).list_posts()}
    assert urls["the-steam-box"] == urls["sharpening-a-plane-iron"] == ""
    # A Ghost export with its own url setting needs no INKWELL_SITE_URL.
    monkeypatch.delenv("INKWELL_SITE_URL", raising=False)
    ghost = json.loads(paths["ghost.json"].read_text())
    ghost["db"][0]["data"]["settings"].append({"key": "url", "value": "https://ghost.example/"})
    sited = parse_bytes("ghost.json", json.dumps(ghost).encode())
    assert sited.posts[0].url == "https://ghost.example/sharpening-a-plane-iron/"
    assert not any("INKWELL_SITE_URL" in w.message for w in sited.warnings)


def test_a_wxr_overlapping_markdown_posts_does_not_duplicate_them(server, tmp_path) -> None:
    folder, db = tmp_path / "posts", tmp_path / "db"
    folder.mkdir()
    (folder / "oiling-the-walnut-bench.md").write_text(
        "---\ntitle: Oiling the Walnut Bench\ndate: 2021-04-03\n---\n\nThe walnut bench gets oiled twice a year.\n"
    )
    (folder / "2020-01-15-why.md").write_text(
        "---\ntitle: Why I Left Software\nslug: why-i-left-software\n---\n\nFor eleven years I wrote billing software.\n"
    )
    env = environ(server, db, chunk_tokens="300")
    assert run_cli(["ingest", str(folder)], env).code == 0
    wxr = str(FIXTURES / "wordpress.xml")

    run = run_cli(["ingest", wxr, "--json"], env)
    assert run.code == 1  # the two overlapping posts are refused, named, not stored twice
    failed = {p["post_id"]: p["message"] for p in run.report["posts"] if p["status"] == "failed"}
    assert set(failed) == {"oiling-the-walnut-bench", "why-i-left-software"}
    assert all("another file" in m and "--replace" in m for m in failed.values())
    posts = Store(db).list_posts()
    assert sorted(p["post_id"] for p in posts) == [
        "cafe-tables",
        "oiling-the-walnut-bench",
        "why-i-left-software",
    ]

    replaced = run_cli(["ingest", wxr, "--replace", "--json"], env)
    assert replaced.code == 0, replaced.stderr[-3000:]
    posts = {p["post_id"]: p for p in Store(db).list_posts()}
    assert sorted(posts) == ["cafe-tables", "oiling-the-walnut-bench", "why-i-left-software"]
    assert {p["source"] for p in posts.values()} == {wxr}
    assert posts["oiling-the-walnut-bench"]["tags"] == ["Finishing", "Furniture", "walnut"]


def test_a_newer_export_of_the_same_blog_replaces_edited_posts_without_replace(server, tmp_path) -> None:
    folder, db = tmp_path / "exports", tmp_path / "db"
    folder.mkdir()
    wxr = (FIXTURES / "wordpress.xml").read_bytes()
    older, newer = folder / "woodshop.WordPress.2024-01-01.xml", folder / "woodshop.WordPress.2024-06-01.xml"
    older.write_bytes(wxr)
    newer.write_bytes(wxr.replace(b"once in autumn", b"once in late summer"))
    os.utime(older, (1_700_000_000, 1_700_000_000))  # the newer export was saved later
    env = environ(server, db, chunk_tokens="300")
    assert run_cli(["ingest", str(older)], env).code == 0

    run = run_cli(["ingest", str(newer), "--json"], env)
    assert run.code == 0, run.stderr[-3000:]
    statuses = {p["post_id"]: (p["status"], p.get("message", "")) for p in run.report["posts"]}
    assert statuses["oiling-the-walnut-bench"] == (
        "updated",
        f"replaced the post read from {older}, an earlier WordPress export",
    )
    assert run.report["unchanged"] == 2 and run.report["new"] == 0
    assert f"replaced the post read from {older}" in run.stderr
    bench = next(p for p in Store(db).posts.search().to_list() if p["post_id"] == "oiling-the-walnut-bench")
    assert bench["source"] == str(newer) and "late summer" in bench["raw"]

    # The older export does not take the post back; another kind of file with the same id is refused.
    back = run_cli(["ingest", str(older), "--json"], env)
    assert back.code == 1
    (failed,) = [p for p in back.report["posts"] if p["status"] == "failed"]
    assert failed["post_id"] == "oiling-the-walnut-bench"
    assert f"taken by {newer}, a newer WordPress export" in failed["message"]
    ghost = json.loads((FIXTURES / "ghost.json").read_text())
    ghost["db"][0]["data"]["posts"][0]["slug"] = "cafe-tables"
    (folder / "ghost.json").write_text(json.dumps(ghost))
    (folder / "oiling-the-walnut-bench.md").write_text("# Oiling\n\nI oil the bench in May.\n")
    others = run_cli(
        ["ingest", str(folder / "ghost.json"), str(folder / "oiling-the-walnut-bench.md"), "--json"], env
    )
    assert others.code == 1
    failed = {p["post_id"]: p["message"] for p in others.report["posts"] if p["status"] == "failed"}
    assert set(failed) == {"cafe-tables", "oiling-the-walnut-bench"}
    assert failed["cafe-tables"].endswith(
        f"taken by {older}, another file; not replaced (ingest with --replace to let this Ghost export's "
        "post replace it)"
    )
    assert "front matter" in failed["oiling-the-walnut-bench"]
    rows = {p["post_id"]: p["source"] for p in Store(db).list_posts()}
    assert rows["cafe-tables"] == str(older) and rows["oiling-the-walnut-bench"] == str(
        newer
    )  # unchanged: kept


@pytest.mark.parametrize("dated_by", ["content", "name"])
def test_an_older_export_saved_later_does_not_undo_a_newer_one(server, tmp_path, dated_by) -> None:
    folder, db = tmp_path / "exports", tmp_path / "db"
    folder.mkdir()
    jan, jun, sep = (datetime(2024, month, 1, 9, tzinfo=UTC) for month in (1, 6, 9))

    def export(made: datetime, bench: str) -> Path:
        """The export made at `made`, dated in its content (undated name) or in its name only."""
        if dated_by == "content":
            path, data = folder / f"woodshop-{made:%b}.xml", wxr_made(made, bench)
        else:
            path, data = folder / f"woodshop.WordPress.{made:%Y-%m-%d}.xml", wxr_made(None, bench)
        path.write_bytes(data)
        return path

    newer = export(jun, "once in late summer")
    os.utime(newer, (1_700_000_000, 1_700_000_000))  # saved long before the copy below
    env = environ(server, db, chunk_tokens="300")
    assert run_cli(["ingest", str(newer)], env).code == 0
    copy = export(jan, "once in autumn")  # January's export, copied here today: the newest file

    run = run_cli(["ingest", str(copy), "--json"], env)
    assert run.code == 1
    (failed,) = [p for p in run.report["posts"] if p["status"] == "failed"]
    assert failed["post_id"] == "oiling-the-walnut-bench" and failed["source"] == str(copy)
    assert f"taken by {newer}, a newer WordPress export" in failed["message"]
    assert f"{copy}" in run.stderr and "replaced the post read from" not in run.stderr
    bench = bench_row(db)
    assert bench["source"] == str(newer) and "late summer" in bench["raw"]

    # A genuinely newer export still replaces it, though its file is the oldest here.
    newest = export(sep, "once in early autumn")
    os.utime(newest, (1_600_000_000, 1_600_000_000))
    run = run_cli(["ingest", str(newest), "--json"], env)
    assert run.code == 0, run.stderr[-3000:]
    statuses = {p["post_id"]: (p["status"], p.get("message", "")) for p in run.report["posts"]}
    assert statuses["oiling-the-walnut-bench"] == (
        "updated",
        f"replaced the post read from {newer}, an earlier WordPress export",
    )
    bench = bench_row(db)
    assert bench["source"] == str(newest) and "early autumn" in bench["raw"]


def test_an_uploaded_export_counts_by_its_own_date_not_the_upload_time(server, tmp_path) -> None:
    folder, db = tmp_path / "exports", tmp_path / "db"
    folder.mkdir()
    newer = folder / "woodshop.WordPress.2024-06-01.xml"
    newer.write_bytes(wxr_made(datetime(2024, 6, 1, tzinfo=UTC), "once in late summer"))
    env = environ(server, db, chunk_tokens="300")
    assert run_cli(["ingest", str(newer)], env).code == 0
    settings = settings_from(env)

    def upload(name: str, data: bytes):
        """The Ingest page's upload: the file's bytes parsed by its name, then ingested."""
        parsed = parse_bytes(name, data)
        return ingest_posts(parsed.posts, settings, errors=parsed.errors, warnings=parsed.warnings)

    # An upload of January's export, dated by its content or only by its name.
    for name, data in [
        ("woodshop-export.xml", wxr_made(datetime(2024, 1, 1, tzinfo=UTC))),
        ("woodshop.WordPress.2024-01-01.xml", wxr_made(None)),
    ]:
        report = upload(name, data)
        (failed,) = [o for o in report.outcomes if o.status == "failed"]
        assert failed.post_id == "oiling-the-walnut-bench" and failed.source == name
        assert f"taken by {newer}, a newer WordPress export" in failed.message
        assert "late summer" in bench_row(db)["raw"]

    report = upload("woodshop.WordPress.2024-09-01.xml", wxr_made(None, "once in early autumn"))
    (updated,) = [o for o in report.outcomes if o.status == "updated"]
    assert updated.message == f"replaced the post read from {newer}, an earlier WordPress export"
    assert "early autumn" in bench_row(db)["raw"]


HOSTILE = {
    "laughs.xml": (BILLION_LAUGHS, "billion laughs"),
    "xxe.xml": (EXTERNAL_ENTITY, "external entity"),
    "broken.xml": (MALFORMED_WXR, "not well-formed XML"),
    "bomb.zip": (zip_bomb(), "zip bomb"),
    "escape.zip": (escaping_zip(), "leaves the archive"),
    "cut-off.zip": (corrupt_zip(), "not a readable zip"),
    "photos.zip": (zip_of({"IMG_0001.jpg": b"\xff\xd8\xff" + b"x" * 100}), "neither a Substack"),
    "locked.pdf": (essay_pdf(password="sesame"), "encrypted"),
    "scan.pdf": (make_pdf([[], [], []], image_only=True), "no text: scanned?"),
    "damaged.pdf": (
        b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF",
        "not a readable PDF",
    ),
    "renamed.docx": (b"PK\x03\x04 not really a zip", "not a readable zip"),
}


RSS_FILE = f"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel><title>Woodshop</title>
<item><title>Planing Oak</title><link>{WOODSHOP}/2024/03/planing-oak/</link>
<pubDate>Tue, 05 Mar 2024 10:00:00 +0000</pubDate><category>oak</category><category>planes</category>
<description>Only the summary.</description>
<content:encoded><![CDATA[<p>Quartersawn white oak tears out when the plane iron is dull.</p>]]></content:encoded></item>
<item><title>Beeswax Finish</title><link>{WOODSHOP}/beeswax/</link><pubDate>Wed, 06 Mar 2024 10:00:00 +0000</pubDate>
<description>&lt;p&gt;I melt beeswax into mineral oil for cutting boards.&lt;/p&gt;</description></item>
<item><title>Just A Link</title><link>{WOODSHOP}/just-a-link/</link></item>
</channel></rss>"""
ATOM_FILE = f"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>Woodshop</title><id>urn:w</id><updated>2024-02-02T10:00:00Z</updated>
<entry><title>Sharpening Chisels</title><link href="{WOODSHOP}/chisels.html"/><id>urn:1</id>
<updated>2024-02-01T10:00:00Z</updated><category term="tools"/>
<content type="html">&lt;p&gt;A chisel is sharp when it pares end grain cleanly.&lt;/p&gt;</content></entry>
<entry><title>Hide Glue</title><link href="{WOODSHOP}/hide-glue/"/><id>urn:2</id><updated>2024-02-02T10:00:00Z</updated>
<summary>Hide glue gives you time to assemble a chair.</summary></entry>
</feed>"""
# post_id → (title, date, tags), address, the text its post holds
FEED_POSTS = {
    "planing-oak": (("Planing Oak", "2024-03-05", ["oak", "planes"]), "/2024/03/planing-oak/", "Quartersawn"),
    "beeswax": (("Beeswax Finish", "2024-03-06", []), "/beeswax/", "I melt beeswax"),
    "chisels": (("Sharpening Chisels", "2024-02-01", ["tools"]), "/chisels.html", "A chisel is sharp"),
    "hide-glue": (("Hide Glue", "2024-02-02", []), "/hide-glue/", "Hide glue gives"),
}


def test_a_feed_file_is_ingested_from_its_entries_own_text(server, tmp_path) -> None:
    """Was "is XML but not a WordPress export": an RSS or Atom feed saved as a file gives one post per
    entry from its content (else its summary), with its title, date, tags and link as the address; an
    entry with neither is named, and the others go in."""
    rss, atom = write(tmp_path / "feed.xml", RSS_FILE), write(tmp_path / "atom.xml", ATOM_FILE)
    db = tmp_path / "db"
    result = run_cli(["ingest", str(rss), str(atom), "--json"], environ(server, db))
    assert result.code == 1 and result.report["new"] == 4, result.stderr[-3000:]  # 1: the textless entry
    assert "entry 'Just A Link': has no content or summary in the file" in result.stderr
    assert f"{WOODSHOP}/just-a-link/, is read when the feed is ingested by its address" in result.stderr
    assert "not a WordPress export" not in result.stderr
    assert stored(db) == {pid: row for pid, (row, _, _) in FEED_POSTS.items()}
    assert stored_urls(db) == {pid: WOODSHOP + path for pid, (_, path, _) in FEED_POSTS.items()}
    for post_id, (_, _, text) in FEED_POSTS.items():
        chunks = Store(db).list_chunks(post_id)
        assert chunks[0]["text"].startswith(text) and "Only the summary" not in chunks[0]["text"]
    for post in parse_paths(rss).posts:  # each rebuilds from what is stored
        assert rebuild_post({**post.__dict__, "tags": post.tags}).blocks == post.blocks


def test_a_feed_files_relative_links_are_on_the_site_it_names(server, tmp_path) -> None:
    # An entry's "/posts/trout/" was stored without an address (a file has none to resolve it against),
    # though the feed names its site; without one, the CLI says why (the warning was shown only in --json).
    entry = (
        '<entry><title>Trout</title><link href="/posts/trout/"/><id>urn:t</id><updated>2024-01-01T00:00:00Z'
        '</updated><content type="html">&lt;p&gt;Brook trout spawn in October in the upper pond.&lt;/p&gt;'
        "</content></entry>"
    )
    head = '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>F</title><id>urn:f</id>'
    named = write(tmp_path / "named.xml", f'{head}<link href="{WOODSHOP}/"/>{entry}</feed>')
    result = run_cli(["ingest", str(named), "--json"], environ(server, tmp_path / "db"))
    assert result.code == 0 and stored_urls(tmp_path / "db") == {"trout": f"{WOODSHOP}/posts/trout/"}
    bare = write(tmp_path / "bare.xml", f"{head}{entry}</feed>")
    result = run_cli(["ingest", str(bare)], environ(server, tmp_path / "db2"))
    assert result.code == 0 and "is a path on the site, but no site URL is set" in result.stderr


def test_a_feed_file_uploaded_on_the_ingest_page_goes_in(tmp_path, monkeypatch) -> None:
    data_dir = isolate_app(monkeypatch, tmp_path / "db")
    at = open_app("pages/posts.py")
    files = [
        ("feed.xml", RSS_FILE.encode(), "application/rss+xml"),
        ("atom.xml", ATOM_FILE.encode(), "text/xml"),
    ]
    at.file_uploader(key="upload_files").set_value(files).run()
    assert not at.exception
    assert "2 files → 4 posts, 1 problem." in texts(at.caption)
    assert not any("WordPress" in w for w in shown(at.warning))
    at.button(key="upload_ingest").click().run()
    assert not at.exception
    assert stored(data_dir) == {pid: row for pid, (row, _, _) in FEED_POSTS.items()}
    assert stored_urls(data_dir) == {pid: WOODSHOP + path for pid, (_, path, _) in FEED_POSTS.items()}


def test_an_export_with_blank_lines_before_its_declaration_or_control_characters_goes_in(
    server, tmp_path
) -> None:
    wxr = (FIXTURES / "wordpress.xml").read_bytes()
    # A theme printing blank lines before the export; a form feed and a backspace pasted from Word.
    blank_lines = b"\n\n  " + wxr
    controls = wxr.replace(b"once in autumn", b"once in\x0c autumn\x08")
    hostile = b"\n" + BILLION_LAUGHS  # still refused for what it is, not for its blank line
    folder, db = tmp_path / "exports", tmp_path / "db"
    folder.mkdir()
    for name, data in [
        ("blank.WordPress.xml", blank_lines),
        ("controls.xml", controls),
        ("lol.xml", hostile),
    ]:
        (folder / name).write_bytes(data)

    run = run_cli(["ingest", str(folder / "blank.WordPress.xml"), "--json"], environ(server, db))
    assert run.code == 0 and not run.report["errors"], run.stderr[-3000:]
    assert stored(db) == expected_rows("wordpress.xml")
    assert (
        "has blank lines before its XML declaration, which XML does not allow; read without them"
        in run.stderr
    )
    assert export_file(folder / "blank.WordPress.xml").exported == "2024-02-10T09:12:44"  # its own date

    result = parse_paths(folder / "controls.xml")
    assert not result.errors, result.errors
    bench = next(p for p in result.posts if p.post_id == "oiling-the-walnut-bench")
    assert "once in autumn" in bench.text
    mended = "has 2 control characters, which XML does not allow; read without them"
    assert mended in [w.message for w in result.warnings]
    refused = parse_paths(folder / "lol.xml")
    assert not refused.posts and "declares XML entities" in refused.errors[0].message


def test_hostile_exports_are_refused_by_name_and_the_rest_goes_in(server, tmp_path) -> None:
    folder, db = tmp_path / "batch", tmp_path / "db"
    paths = write_exports(folder)
    for name, (data, _) in HOSTILE.items():
        (folder / name).write_bytes(data)
    env = {**environ(server, db, chunk_tokens="300"), "INKWELL_SITE_URL": SITE}

    run = run_cli(["ingest", str(folder), "--json"], env)

    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    assert run.code == 1
    errors = {Path(e["source"]).name: e["message"] for e in run.report["errors"]}
    assert set(errors) == set(HOSTILE)
    for name, (_, reason) in HOSTILE.items():
        assert reason.lower() in errors[name].lower(), (name, errors[name])
        assert f"skipped {folder / name}: " in run.stderr
    assert stored(db) == expected_rows(*EXPECTED)  # every good export went in
    assert stored_urls(db) == expected_urls(*EXPECTED)
    assert len(paths) == 6


# The Ingest page -------------------------------------------------------------------------------------


def test_every_format_through_the_ingest_page_upload(site, tmp_path, monkeypatch) -> None:
    data_dir = isolate_app(monkeypatch, tmp_path / "db")
    monkeypatch.setenv("INKWELL_SITE_URL", SITE)
    files = [(name, data, "application/octet-stream") for name, data in export_files().items()]
    files.append(("bomb.zip", zip_bomb(), "application/zip"))
    at = open_app("pages/posts.py")
    at.file_uploader(key="upload_files").set_value(files).run()
    assert not at.exception
    published = sum(map(len, EXPECTED.values()))
    assert f"7 files → {published} posts, 1 problem." in texts(at.caption)
    assert any("bomb.zip" in w and "zip bomb" in w for w in shown(at.warning))
    assert any("left out 1 draft, 1 page" in i for i in shown(at.info))

    at.checkbox(key="upload_drafts").check().run()
    with_drafts = published + sum(map(len, DRAFTS.values()))
    assert f"7 files → {with_drafts} posts, 1 problem." in texts(at.caption)
    at.checkbox(key="upload_drafts").uncheck().run()
    at.checkbox(key="upload_members").check().run()
    with_members = published + sum(map(len, MEMBERS.values()))
    assert f"7 files → {with_members} posts, 1 problem." in texts(at.caption)
    at.checkbox(key="upload_members").uncheck().run()

    at.button(key="upload_ingest").click().run()
    assert not at.exception
    assert stored(data_dir) == expected_rows(*EXPECTED)
    assert stored_urls(data_dir) == expected_urls(*EXPECTED)


def test_other_post_types_through_the_ingest_page(tmp_path, monkeypatch) -> None:
    isolate_app(monkeypatch, tmp_path / "db")
    data = wxr_of(
        [
            {"title": "On Walnut", "link": "https://b.example/walnut/", "slug": "walnut",
             "content": "<p>Walnut is the one wood I buy that is not really local.</p>"},
            {"title": "Episode 1", "link": "https://b.example/ep1/", "slug": "ep1",
             "content": "<p>In the first episode I talk about sawdust and lungs.</p>", "type": "podcast"},
        ]
    )  # fmt: skip
    at = open_app("pages/posts.py")
    at.file_uploader(key="upload_files").set_value([("blog.xml", data, "application/xml")]).run()
    assert not at.exception
    assert "1 file → 1 post, 0 problems." in texts(at.caption)
    assert any("of type 'podcast'" in i for i in shown(at.info)), shown(at.info)
    at.text_input(key="upload_types").set_value("Podcast").run()
    assert "1 file → 2 posts, 0 problems." in texts(at.caption)


def test_a_ghost_newsletter_sent_by_email_only_is_no_draft_and_comes_with_the_members_posts() -> None:
    # A post sent as a newsletter only (status "sent") went to members and is not on the site: it was
    # counted and read as a draft.
    def row(number: int, slug: str, status: str) -> dict:
        return {"id": f"p{number}", "title": slug.title(), "slug": slug, "status": status, "type": "post",
                "html": f"<p>The {slug} post says something about bees in spring.</p>",
                "published_at": f"2023-0{number}-01T08:00:00.000Z"}  # fmt: skip

    posts = [row(1, "open-hives", "published"), row(2, "spring-letter", "sent"), row(3, "notes", "draft")]
    data = json.dumps({"db": [{"meta": {"version": "5.78.0"}, "data": {"posts": posts}}]}).encode()
    plain = parse_bytes("ghost.json", data)
    assert [p.post_id for p in plain.posts] == ["open-hives"]
    [warning] = [w.message for w in plain.warnings if "left out" in w.message]
    assert (
        "1 draft, 1 post sent by email only" in warning and "--include-drafts / --include-members" in warning
    )
    drafts = parse_bytes("ghost.json", data, options=ImportOptions(include_drafts=True))
    assert sorted(p.post_id for p in drafts.posts) == ["notes", "open-hives"]  # a newsletter is no draft
    members = parse_bytes("ghost.json", data, options=ImportOptions(include_members=True))
    emailed = {p.post_id: p for p in members.posts}["spring-letter"]
    assert emailed.url == ""  # never on the site: no address to link to
