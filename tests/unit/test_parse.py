"""Parsing and cleaning, on real files written to tmp_path."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from core.models import Block, ParseResult, Post
from core.parse import MAX_FILE_BYTES, SUPPORTED_SUFFIXES, parse_bytes, parse_paths, parse_text, slugify
from core.parse.clean import html_to_blocks, markdown_to_blocks, text_to_blocks
from core.parse.fields import read_date
from core.parse.options import ImportOptions

REF = "[REF: Smith 2019, The Long Road]"
IMAGE = "[IMAGE: a photo of my_dog *Rex* at the beach]"

PAGE = f"""<!DOCTYPE html>
<html lang="en"><head><title>Walking the Camino | Jane's Blog</title>
<meta property="og:title" content="Walking the Camino">
<meta property="article:published_time" content="2021-05-04T10:00:00Z"></head>
<body>
<header><nav><ul><li><a href="/">Home</a></li><li><a href="/about">About me</a></li>
<li><a href="/archive">Archive of all posts</a></li></ul></nav></header>
<main><article>
<h1>Walking the Camino</h1>
<p>Last spring I walked eight hundred kilometres across northern Spain, from Saint-Jean to
Santiago. It took me thirty-four days and two pairs of boots. {IMAGE}</p>
<h2>Why I went</h2>
<p>After my father died I needed time to think, and walking has always been the way I think best.
A friend had done it the year before and came back changed. {REF}</p>
<p>I trained for three months, mostly on the hills behind our house, carrying a pack of books.</p>
<pre><code>print("not prose")</code></pre>
<h2>What I learned</h2>
<p>That people are kind, that blisters heal, and that <em>slowness</em> is a gift.</p>
</article>
<aside><h3>Popular posts</h3><ul><li><a href="/x">Ten tips for sourdough beginners</a></li></ul></aside>
</main>
<footer><p>Copyright 2024 Jane Doe. Subscribe to my newsletter for updates.</p></footer>
</body></html>
"""


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def only_post(result: ParseResult) -> Post:
    assert result.errors == [], [str(e) for e in result.errors]
    assert len(result.posts) == 1
    return result.posts[0]


def error_text(result: ParseResult) -> str:
    return "\n".join(str(e) for e in result.errors)


# clean: markdown ------------------------------------------------------------------------------------


def test_a_markdown_list_is_one_block_that_says_it_is_a_list() -> None:
    md = "Steps:\n\n1. Flatten the back.\n2. Hone the edge.\n   - then strop it\n\nDone.\n"
    assert markdown_to_blocks(md) == [
        Block("Steps:"),
        Block("Flatten the back.\nHone the edge.\nthen strop it", list_style="ordered"),
        Block("Done."),
    ]


def test_markdown_strips_syntax_and_keeps_structure() -> None:
    md = """# Title with *emphasis*

A [link text](https://example.com/x) with **bold**, `inline code`, ![alt words](a.png) and <span>html</span>.

- first item
- second *item*

> quoted words

```python
fenced_code_here()
```

    indented_code_here()

<div>block <b>html</b> here</div>

| Year | Place |
|------|-------|
| 2019 | Spain |

Setext heading
--------------
"""
    blocks = markdown_to_blocks(md)
    assert blocks == [
        Block("Title with emphasis", heading=True),
        Block("A link text with bold, inline code, and html."),
        Block("first item\nsecond item", list_style="bullet"),
        Block("quoted words"),
        Block("block html here"),
        Block("Year | Place\n2019 | Spain"),
        Block("Setext heading", heading=True),
    ]
    text = "\n".join(b.text for b in blocks)
    for gone in ("example.com", "alt words", "fenced_code_here", "indented_code_here", "*", "<"):
        assert gone not in text


def test_markdown_keeps_tags_verbatim() -> None:
    # `[REF: x]: y` at a line start is a link reference definition to markdown-it: it would vanish.
    md = f"Walked far {REF} and home.\n\n{IMAGE}\n\n[REF: Doe 2020]: the second source\n\n- item {REF}\n"
    blocks = markdown_to_blocks(md)
    assert blocks[0].text == f"Walked far {REF} and home."
    assert blocks[1].text == IMAGE  # its *Rex* and my_dog are not emphasis
    assert blocks[2].text == "[REF: Doe 2020]: the second source"
    assert blocks[3].text == f"item {REF}"


# clean: text ----------------------------------------------------------------------------------------


def test_footnote_markers_leave_the_sentence_and_the_notes_stay() -> None:
    md = (
        "The chair must be light.[^1] It should last a century.[^krenov]\n\n"
        "Wood moves with the seasons.[3] Ten m² of floor, moved¹ twice.\n\n"
        "[^1]: A light chair gets moved.\n[^krenov]: In his notebook.\n"
    )
    texts = [b.text for b in markdown_to_blocks(md)]
    assert texts == [
        "The chair must be light. It should last a century.",
        "Wood moves with the seasons. Ten m² of floor, moved twice.",
        "A light chair gets moved.",
        "In his notebook.",
    ]
    page = (
        '<p>The chair must be light.<sup id="r1"><a href="#fn1">1</a></sup> Wood moves'
        '<a class="footnote-ref" href="#fn2"><sup>[2]</sup></a> with the seasons.<sup>3</sup> '
        "A room of 10 m<sup>2</sup>, on the 1<sup>st</sup> floor.</p>"
        '<ol><li id="fn1">A light chair gets moved. <a href="#r1">↩</a></li></ol>'
    )
    post = parse_text(page, "Notes", format="html")
    assert post.text.split("\n\n") == [
        "The chair must be light. Wood moves with the seasons. A room of 10 m2, on the 1st floor.",
        "A light chair gets moved.",
    ]
    assert (
        text_to_blocks("Light.¹ See [12] and [^n]; a year [2019].")[0].text
        == "Light. See and ; a year [2019]."
    )


def test_text_paragraphs_on_blank_lines_and_whitespace_normalised() -> None:
    text = "First  para\r\nwraps here.\r\n\r\n  \r\n# Not a heading\tat all\r\n\r\nLast."
    assert text_to_blocks(text) == [
        Block("First para wraps here."),
        Block("# Not a heading at all"),
        Block("Last."),
    ]


def test_text_without_blank_lines_is_one_paragraph_per_line() -> None:
    assert text_to_blocks("One line.\nTwo  line.\n\nThree.") != text_to_blocks("One line.\nTwo line.")
    assert text_to_blocks("One line.\n  Two  line.\n") == [Block("One line."), Block("Two line.")]
    long_line = "A sentence that goes on. " * 400
    assert text_to_blocks(long_line) == [Block(long_line.strip())]
    assert text_to_blocks(f"x {REF}  y {IMAGE}")[0].text == f"x {REF} y {IMAGE}"


# clean: html ----------------------------------------------------------------------------------------


def test_html_article_without_navigation_or_footer() -> None:
    title, blocks = html_to_blocks(PAGE)
    text = "\n".join(b.text for b in blocks)
    assert title == "Walking the Camino"
    assert Block("Why I went", heading=True) in blocks
    assert "thirty-four days" in text and "slowness is a gift" in text
    assert REF in text and IMAGE in text
    for furniture in (
        "About me",
        "Archive of all posts",
        "sourdough",
        "Copyright",
        "newsletter",
        "not prose",
    ):
        assert furniture not in text


def test_html_small_page_falls_back_without_menu() -> None:
    page = "<html><head><title>Short</title></head><body><nav><a href='/'>Home</a></nav><p>Tiny.</p></body></html>"
    assert html_to_blocks(page) == ("Short", [Block("Tiny.")])


# parse: markdown ------------------------------------------------------------------------------------


def test_markdown_front_matter_fields(tmp_path: Path) -> None:
    content = (
        "---\ntitle: On Walking\ndate: 2021-05-04\nid: walk-01\ntags: [travel, Spain]\n"
        "collection: journeys\n---\n# Heading\n\nBody **text**.\n"
    )
    post = only_post(parse_paths([write(tmp_path / "walking.md", content)]))
    assert (post.post_id, post.title, post.date, post.tags) == (
        "walk-01",
        "On Walking",
        "2021-05-04",
        ["travel", "Spain"],
    )
    assert post.collection == "journeys"
    assert post.format == "markdown"
    assert post.raw == content
    assert post.blocks == [Block("Heading", heading=True), Block("Body text.")]
    assert post.source == str(tmp_path / "walking.md")


def test_markdown_slug_comma_tags_and_datetime(tmp_path: Path) -> None:
    content = "---\nslug: my-slug\ntags: a, b ,c\ndate: 2021-05-04 10:30:00\n---\nText.\n"
    post = only_post(parse_paths([write(tmp_path / "x.md", content)]))
    assert (post.post_id, post.tags, post.date) == ("my-slug", ["a", "b", "c"], "2021-05-04T10:30:00")


def test_markdown_title_fallbacks(tmp_path: Path) -> None:
    h1 = only_post(parse_paths([write(tmp_path / "a.md", "## Sub first\n\n# The Real Title\n\nText.")]))
    assert h1.title == "The Real Title"
    assert h1.post_id == "a"
    named = only_post(parse_paths([write(tmp_path / "2020-03-01-my_first-post.markdown", "## Sub\n\nText.")]))
    assert (named.title, named.post_id, named.date) == (
        "My first post",
        "2020-03-01-my-first-post",
        "2020-03-01",
    )


def test_markdown_bad_front_matter_is_reported(tmp_path: Path) -> None:
    write(tmp_path / "bad.md", "---\ntitle: [unclosed\n---\nText.\n")
    write(tmp_path / "good.md", "Fine text.")
    result = parse_paths([tmp_path])
    assert [p.post_id for p in result.posts] == ["good"]
    assert "bad.md: front matter is not valid YAML" in error_text(result)


def test_an_unquoted_colon_in_a_front_matter_value_names_the_line_and_the_quoting(tmp_path: Path) -> None:
    """PyYAML's "mapping values are not allowed in this context" named neither the line a blogger must
    fix nor how: the file is still refused (it is not valid YAML), with the value quoted to write."""
    write(tmp_path / "wax.md", "\n---\nslug: wax\ntitle: Melting Wax: A Solar Extractor\n---\nText.\n")
    assert error_text(parse_paths([tmp_path / "wax.md"])) == (
        f"{tmp_path / 'wax.md'}: front matter is not valid YAML at line 4 (title: Melting Wax: A Solar "
        "Extractor): mapping values are not allowed in this context; a value with a colon in it must be "
        'quoted: title: "Melting Wax: A Solar Extractor"'
    )
    write(tmp_path / "q.md", '---\ntitle: Wax: the "solar" way\n---\nText.\n')  # its own quotes kept
    assert error_text(parse_paths([tmp_path / "q.md"])).endswith("""quoted: title: 'Wax: the "solar" way'""")


def test_hugo_toml_front_matter_is_read_not_quoted(tmp_path: Path) -> None:
    """Hugo writes TOML front matter between `+++` lines; it was kept as the post's first paragraph."""
    toml = '+++\ntitle = "Propolis, the Bees\' Glue"\ndate = 2024-08-10\ntags = ["propolis"]\n+++\n\nResin.\n'
    post = only_post(parse_paths([write(tmp_path / "propolis.md", toml)]))
    assert (post.title, post.date, post.tags) == ("Propolis, the Bees' Glue", "2024-08-10", ["propolis"])
    assert post.blocks == [Block("Resin.")]
    write(tmp_path / "bad.md", "+++\ntitle = Unquoted\n+++\nText.\n")
    assert "bad.md: front matter is not valid TOML" in error_text(parse_paths([tmp_path / "bad.md"]))


def test_front_matter_drafts_are_left_out_unless_asked_for(tmp_path: Path) -> None:
    """A Hugo `draft: true` or Jekyll `published: false` post was stored and quoted to readers."""
    folder = tmp_path / "posts"
    write(folder / "hugo.md", "---\ntitle: Prices\ndraft: true\n---\nTwelve euros a jar, maybe.\n")
    write(folder / "jekyll.md", "---\ntitle: Excluders\npublished: false\n---\nNot sure yet.\n")
    write(folder / "toml.md", '+++\ntitle = "Wax"\ndraft = "true"\n+++\nA solar melter.\n')
    write(folder / "out.md", "---\ntitle: Out\ndraft: false\npublished: true\n---\nPublished.\n")
    result = parse_paths([folder])
    assert [p.post_id for p in result.posts] == ["out"] and result.errors == []
    assert sorted(str(w) for w in result.warnings) == [
        f"{folder / 'hugo.md'}: is a draft (front matter draft: true): left out; --include-drafts reads it",
        f"{folder / 'jekyll.md'}: is a draft (front matter published: false): left out; --include-drafts "
        "reads it",
        f"{folder / 'toml.md'}: is a draft (front matter draft: true): left out; --include-drafts reads it",
    ]
    every = parse_paths([folder], options=ImportOptions(include_drafts=True))
    assert sorted(p.post_id for p in every.posts) == ["hugo", "jekyll", "out", "toml"]


# parse: collections and folders ---------------------------------------------------------------------


def test_page_bundle_index_named_after_folder_and_raw_kept_verbatim(tmp_path: Path) -> None:
    post = only_post(parse_paths([write(tmp_path / "my-trip" / "index.md", "Line one\r\n\r\nLine two\r\n")]))
    assert (post.post_id, post.title) == ("my-trip", "My trip")
    assert post.raw == "Line one\r\n\r\nLine two\r\n"
    assert post.blocks == [Block("Line one"), Block("Line two")]


def test_collection_rules(tmp_path: Path) -> None:
    root = tmp_path / "posts"
    write(root / "books" / "novel.md", "About a novel.")
    write(root / "books" / "older" / "classic.txt", "About a classic.")
    write(root / "top.txt", "At the top.")
    write(root / "books" / "own.md", "---\ncollection: reviews\n---\nOwn collection.")
    by_id = {p.post_id: p.collection for p in parse_paths([root]).posts}
    assert by_id == {"novel": "books", "classic": "books", "top": "writings", "own": "reviews"}
    forced = parse_paths([str(root)], collection="everything")
    assert {p.collection for p in forced.posts} == {"everything"}
    # A file named directly has no folder collection.
    assert only_post(parse_paths([root / "books" / "novel.md"])).collection == "writings"


def test_hugo_leaf_bundles_are_posts_not_collections(tmp_path: Path) -> None:
    """`content/posts/<slug>/index.md`: ingesting content/posts/ made each bundle its own collection."""
    posts = tmp_path / "content" / "posts"
    write(posts / "propolis" / "index.md", "---\ntitle: Propolis\n---\nResin from buds.")
    write(posts / "propolis" / "frame.jpg", b"\xff\xd8\xff")  # the bundle's image
    write(posts / "wax.md", "A solar melter.")
    write(posts / "notes" / "index.md", "The notes section's page.")
    write(posts / "notes" / "queens.md", "Queens raised at home.")  # a folder of posts: a collection
    by_id = {p.post_id: p.collection for p in parse_paths([posts]).posts}
    assert by_id == {"propolis": "writings", "wax": "writings", "notes": "notes", "queens": "notes"}
    from_content = {p.post_id: p.collection for p in parse_paths([tmp_path / "content"]).posts}
    assert set(from_content.values()) == {"posts"}


def test_folder_walk_sorted_skips_hidden_and_assets_reports_unsupported(tmp_path: Path) -> None:
    write(tmp_path / "b.txt", "Bee.")
    write(tmp_path / "a" / "z.txt", "Zed.")
    write(tmp_path / "a.txt", "Ay.")
    write(tmp_path / ".hidden.txt", "Secret.")
    write(tmp_path / ".git" / "notes.md", "Git internals.")
    write(tmp_path / ".DS_Store", b"\x00\x01")
    write(tmp_path / "a" / "photo.JPG", b"\xff\xd8\xff")  # a post's image: not worth a warning
    write(tmp_path / "paper.odt", b"PK\x03\x04")
    result = parse_paths(tmp_path)  # a single path, not a list, is accepted too
    assert [p.post_id for p in result.posts] == ["z", "a", "b"]  # path order: a/z.txt < a.txt < b.txt
    assert [str(e) for e in result.errors] == [
        f"{tmp_path / 'paper.odt'}: unsupported file type .odt; supported: .docx, .htm, .html, .json, "
        ".jsonl, .markdown, .md, .pdf, .txt, .xml, .zip"
    ]
    assert parse_paths([tmp_path / ".git"]).posts[0].post_id == "notes"  # hidden only when walked into


def test_same_file_twice_is_read_once_and_missing_path_reported(tmp_path: Path) -> None:
    f = write(tmp_path / "a.txt", "Ay.")
    result = parse_paths([tmp_path, f, tmp_path / "nope"])
    assert [p.post_id for p in result.posts] == ["a"]
    assert error_text(result) == f"{tmp_path / 'nope'}: does not exist"


# parse: bundles -------------------------------------------------------------------------------------


def test_txt_bundle(tmp_path: Path) -> None:
    content = (
        "Header line outside posts.\n"
        "=== POST START: First Post ===\nHello there.\n\nSecond para.\n=== POST END ===\n"
        "  ===  POST START:   Café Notes!  ===  \n# stays text\n   === POST END ===   \n"
    )
    result = parse_paths([write(tmp_path / "bundle.txt", content)])
    assert result.errors == []
    first, second = result.posts
    assert (first.post_id, first.title, first.raw) == (
        "first-post",
        "First Post",
        "Hello there.\n\nSecond para.",
    )
    assert first.blocks == [Block("Hello there."), Block("Second para.")]
    assert (second.post_id, second.title, second.text, second.format) == (
        "cafe-notes",
        "Café Notes!",
        "# stays text",
        "text",
    )
    assert second.source == str(tmp_path / "bundle.txt")


def test_bundle_missing_end_keeps_complete_posts(tmp_path: Path) -> None:
    content = (
        "=== POST START: One ===\nFirst.\n=== POST END ===\n"
        "=== POST START: Broken ===\nNever closed.\n"  # line 4
        "=== POST START: Three ===\nThird.\n=== POST END ===\n"
        "=== POST START: Tail ===\nRuns off the end.\n"  # line 9
    )
    result = parse_paths([write(tmp_path / "b.txt", content)])
    assert [p.title for p in result.posts] == ["One", "Three"]
    messages = [str(e) for e in result.errors]
    assert len(messages) == 2
    assert "b.txt" in messages[0] and "'Broken'" in messages[0] and "line 4" in messages[0]
    assert "'Tail'" in messages[1] and "line 9" in messages[1] and "end of the file" in messages[1]


def test_markdown_bundle(tmp_path: Path) -> None:
    content = "=== POST START: Md One ===\n**Bold** and [a link](http://x.y).\n=== POST END ===\n"
    post = only_post(parse_paths([write(tmp_path / "b.md", content)]))
    assert (post.post_id, post.text, post.format) == ("md-one", "Bold and a link.", "markdown")


# parse: html ----------------------------------------------------------------------------------------


def test_html_file(tmp_path: Path) -> None:
    post = only_post(parse_paths([write(tmp_path / "camino-walk.html", PAGE)]))
    assert (post.post_id, post.title, post.format, post.date) == (
        "camino-walk",
        "Walking the Camino",
        "html",
        "2021-05-04",
    )
    assert REF in post.text and IMAGE in post.text
    assert "Archive of all posts" not in post.text and "Copyright" not in post.text
    assert post.raw == PAGE


# parse: json / jsonl --------------------------------------------------------------------------------


def test_json_list_of_posts(tmp_path: Path) -> None:
    posts = [
        {
            "id": 7,
            "title": "Seven",
            "text": "# Part\n\nSome **markdown**.",
            "date": "2020-01-01",
            "tags": ["x"],
        },
        {"title": "No Id Here", "content": "Plain content.", "collection": "notes"},
        {"title": "Body key", "body": "Line one\nLine two"},
        {"title": "Empty"},
        "not an object",
    ]
    result = parse_paths([write(tmp_path / "export.json", json.dumps(posts))])
    seven, no_id, body = result.posts
    assert (seven.post_id, seven.date, seven.tags, seven.format) == ("7", "2020-01-01", ["x"], "markdown")
    assert seven.blocks == [Block("Part", heading=True), Block("Some markdown.")]
    assert (no_id.post_id, no_id.collection, no_id.text) == ("no-id-here", "notes", "Plain content.")
    assert body.blocks == [Block("Line one"), Block("Line two")]  # plain text: one paragraph per line
    errors = error_text(result)
    assert "item 4: has no text" in errors and "item 5 is not a JSON object" in errors


def test_json_wordpress_rendered_html(tmp_path: Path) -> None:
    post = {
        "id": 101,
        "title": {"rendered": "Spring &#8217;21 <em>notes</em>"},
        "content": {"rendered": f"<h2>Part</h2>\n<p>First <strong>para</strong>. {REF}</p>\n<p>Second.</p>"},
    }
    result = parse_paths([write(tmp_path / "wp.json", json.dumps({"posts": [post]}))])
    got = only_post(result)
    assert (got.post_id, got.title) == ("101", "Spring ’21 notes")
    assert got.blocks == [Block("Part", heading=True), Block(f"First para. {REF}"), Block("Second.")]


def test_json_single_object_and_invalid_json(tmp_path: Path) -> None:
    write(tmp_path / "one.json", json.dumps({"title": "Solo", "text": f"Alone {REF}"}))
    write(tmp_path / "broken.json", '[{"title": "x",\n "text": "y"')
    result = parse_paths([tmp_path])
    assert [(p.post_id, p.text) for p in result.posts] == [("solo", f"Alone {REF}")]
    assert "broken.json: is not valid JSON" in error_text(result) and "line 2" in error_text(result)


def test_chunks_json_grouped_by_source(tmp_path: Path) -> None:
    chunks = [
        {
            "id": "c1",
            "text": "Alpha one.",
            "source": "Alpha Post.md",
            "section": "Intro",
            "keywords": ["a", "b"],
        },
        {"id": "c2", "text": "Beta one.", "source": "Beta", "section": "", "keywords": []},
        {"id": "c3", "text": "Alpha two.", "source": "Alpha Post.md", "section": "Intro", "keywords": "c, d"},
    ]
    result = parse_paths([write(tmp_path / "chunks.json", json.dumps(chunks))])
    assert result.errors == []
    alpha, beta = result.posts
    assert (alpha.post_id, alpha.title, alpha.format) == ("alpha-post-md", "Alpha Post.md", "chunks")
    assert alpha.prechunked is not None and beta.prechunked is not None
    assert [(c.chunk_id, c.text, c.section, c.keywords) for c in alpha.prechunked] == [
        ("c1", "Alpha one.", "Intro", ["a", "b"]),
        ("c3", "Alpha two.", "Intro", ["c", "d"]),
    ]
    assert alpha.blocks == [Block("Intro", heading=True), Block("Alpha one."), Block("Alpha two.")]
    assert [c.chunk_id for c in beta.prechunked] == ["c2"]
    assert [c["id"] for c in json.loads(alpha.raw)] == ["c1", "c3"]


def test_jsonl_beir_style_with_a_bad_line(tmp_path: Path) -> None:
    lines = [
        json.dumps({"id": "4983", "title": "White matter", "text": "Ions ([M + K](+)) in (*2*2) mice."}),
        "{not json",
        "",
        json.dumps({"id": "0012", "title": "Second", "text": "More."}),
    ]
    result = parse_paths([write(tmp_path / "corpus.jsonl", "\n".join(lines))])
    assert [p.post_id for p in result.posts] == ["4983", "0012"]  # ids verbatim, not slugified
    assert result.posts[0].text == "Ions ([M + K](+)) in (*2*2) mice."  # plain text is not markdown
    assert [str(e) for e in result.errors] == [
        f"{tmp_path / 'corpus.jsonl'}: line 2 is not valid JSON (Expecting property name enclosed in "
        "double quotes, column 2); skipped"
    ]


# parse: tags in every format ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("a.txt", f"Before {REF} after.\n\n{IMAGE}"),
        ("a.md", f"---\ntitle: T\n---\nBefore {REF} after.\n\n{IMAGE}\n"),
        ("a.html", PAGE),
        ("a.json", json.dumps({"title": "T", "text": f"**B** {REF}\n\n{IMAGE}"})),
        ("a.jsonl", json.dumps({"id": "1", "title": "T", "text": f"{REF} {IMAGE}"})),
        ("a.md", f"=== POST START: T ===\n_x_ {REF}\n\n{IMAGE}\n=== POST END ==="),
    ],
)
def test_tags_survive_verbatim(tmp_path: Path, name: str, content: str) -> None:
    post = only_post(parse_paths([write(tmp_path / name, content)]))
    assert REF in post.text and IMAGE in post.text


# parse: bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("empty.txt", b"", "is empty"),
        ("blank.md", b"  \n\n\t\n", "is empty"),
        ("nul.txt", b"hello\x00world" * 10, "looks binary"),
        ("image.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "looks binary"),
        (
            "cyrillic.txt",
            "Привет, как дела? Всё хорошо.".encode("cp1251"),
            "is not UTF-8 (byte 0xCF at offset 0)",
        ),
        ("mixed.txt", "café ok, then ".encode() + b"\xe9 broken", "is not UTF-8 (byte 0xE9 at offset 15)"),
        ("data.xyz", b"text", "unsupported file type .xyz; supported: .docx, .htm, .html, .json"),
        ("README", b"text", "unsupported file without an extension"),
        ("code-only.md", b"```\nprint(1)\n```\n![img](x.png)\n", "has no text after cleaning"),
    ],
)
def test_bad_inputs_are_reported_and_others_still_parsed(
    tmp_path: Path, name: str, data: bytes, reason: str
) -> None:
    bad = write(tmp_path / name, data)
    good = write(tmp_path / "good.txt", "Still here.")
    result = parse_paths([bad, good])
    assert [p.post_id for p in result.posts] == ["good"]
    assert len(result.errors) == 1
    assert result.errors[0].source == str(bad)
    assert reason in result.errors[0].message


def test_legacy_encodings_that_can_be_read(tmp_path: Path) -> None:
    write(tmp_path / "cp1252.txt", "Un café à Paris — très bien.".encode("cp1252"))
    write(tmp_path / "bom.txt", "\ufeffWith a BOM.".encode())
    write(tmp_path / "utf16.txt", "Notepad Unicode.".encode("utf-16"))
    result = parse_paths([tmp_path])
    assert result.errors == []
    assert [p.text for p in result.posts] == [
        "With a BOM.",
        "Un café à Paris — très bien.",
        "Notepad Unicode.",
    ]


def test_an_html_file_is_read_in_the_charset_it_declares(tmp_path: Path) -> None:
    """Was read as Windows-1252 with "is not UTF-8 … re-save it as UTF-8" even when the page said
    `<meta charset="windows-1252">`, and a Greek page declaring ISO-8859-7 was refused: a declared
    charset the bytes decode in is read as such, without a warning."""
    page = "<html><head>{meta}<title>{t}</title></head><body><article><h1>{t}</h1><p>{p}</p></article></body></html>"
    western = page.format(
        meta='<meta charset="windows-1252">', t="Café notes", p="Crème brûlée at the café – on Fridays."
    )
    greek = page.format(
        meta='<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-7">',
        t="Ξυλουργική",
        p="Το ξύλο της βελανιδιάς σχίζεται όταν η λεπίδα είναι στομωμένη.",
    )
    write(tmp_path / "western.html", western.encode("cp1252"))
    write(tmp_path / "greek.html", greek.encode("iso-8859-7"))
    result = parse_paths([tmp_path / "western.html", tmp_path / "greek.html"])
    assert result.errors == [] and result.warnings == []
    assert [(p.title, p.text) for p in result.posts] == [
        ("Café notes", "Café notes\n\nCrème brûlée at the café – on Fridays."),
        ("Ξυλουργική", "Ξυλουργική\n\nΤο ξύλο της βελανιδιάς σχίζεται όταν η λεπίδα είναι στομωμένη."),
    ]
    # A page whose declaration is wrong (says UTF-8, is not) is still guessed, with the warning.
    wrong = write(tmp_path / "wrong.html", western.replace("windows-1252", "utf-8").encode("cp1252"))
    guessed = parse_paths([wrong])
    assert guessed.posts[0].title == "Café notes" and "is not UTF-8" in guessed.warnings[0].message


def test_huge_file_refused_without_reading_it(tmp_path: Path) -> None:
    huge = tmp_path / "huge.txt"
    with huge.open("wb") as f:  # sparse: 50 MB on paper, nothing on disk
        f.write(b"text ")
        f.truncate(60 * 1024 * 1024)
    tracemalloc.start()
    try:
        result = parse_paths([huge])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.posts == []
    assert str(result.errors[0]) == f"{huge}: is 60.0 MB, over the 50 MB limit"
    assert peak < 5 * 1024 * 1024  # the file was never loaded
    assert MAX_FILE_BYTES == 50 * 1024 * 1024


def test_file_size_limit_is_configurable(tmp_path: Path) -> None:
    f = write(tmp_path / "a.txt", "x" * 3000)
    assert parse_paths([f], max_file_bytes=2048).errors[0].message == "is 0.0 MB, over the 2,048 bytes limit"
    assert len(parse_paths([f], max_file_bytes=4096).posts) == 1


def test_duplicate_ids_keep_first(tmp_path: Path) -> None:
    write(tmp_path / "a" / "same.md", "First version.")
    write(tmp_path / "b" / "same.txt", "Second version.")
    write(tmp_path / "c.md", "---\nid: same\n---\nThird.")
    result = parse_paths([tmp_path])
    assert [(p.post_id, p.text) for p in result.posts] == [("same", "First version.")]
    assert len(result.errors) == 2
    first = str(tmp_path / "a" / "same.md")
    assert result.errors[0].source == str(tmp_path / "b" / "same.txt")
    assert f"already used by 'Same' from {first}" in result.errors[0].message
    assert result.errors[1].source == str(tmp_path / "c.md")


# uploads, pasted text, slugs ------------------------------------------------------------------------


def test_parse_bytes_upload() -> None:
    post = only_post(parse_bytes("notes.md", b"---\ntitle: Up\n---\nUploaded text.", collection="uploads"))
    assert (post.source, post.title, post.collection, post.post_id) == ("notes.md", "Up", "uploads", "notes")
    assert str(parse_bytes("x.doc", b"\xd0\xcf").errors[0]).startswith("x.doc: unsupported file type .doc")
    assert parse_bytes("big.txt", b"y" * 100, max_file_bytes=10).errors[0].message.startswith("is 0.0 MB")
    assert parse_bytes("e.txt", b"").errors[0].message == "is empty"


def test_parse_text() -> None:
    post = parse_text("Pasted  para.\n\nAnother one.", "My Thoughts", date="2024-01-02")
    assert (post.post_id, post.title, post.collection, post.format) == (
        "my-thoughts",
        "My Thoughts",
        "writings",
        "text",
    )
    assert post.blocks == [Block("Pasted para."), Block("Another one.")]
    md = parse_text("# Head\n\n*Hi* there", "T", format="markdown", post_id=" 42 ", collection="misc")
    assert (md.post_id, md.text, md.collection) == ("42", "Head\n\nHi there", "misc")
    page = parse_text(PAGE, "Camino", format="html")  # a stored .html raw rebuilds like the file
    assert page.blocks == only_post(parse_bytes("camino.html", PAGE.encode())).blocks
    assert "Archive of all posts" not in page.text
    fm = parse_text("---\ntitle: From FM\n---\nBody.", "", format="markdown")
    assert (fm.title, fm.text, fm.post_id) == ("From FM", "Body.", "from-fm")
    with pytest.raises(ValueError, match="empty"):
        parse_text("```\ncode\n```", "T", format="markdown")
    with pytest.raises(ValueError, match="format"):
        parse_text("x", "T", format="pdf")


def test_line_ends_of_any_system_before_front_matter_in_every_format(tmp_path: Path) -> None:
    """Issue #31: CR-only (old Mac) and CRLF files read as LF ones, front matter and all."""
    front = "---\nid: mac\ntitle: Mac Title\ncollection: old\n---\n\nFirst line\nsame paragraph.\n\nSecond.\n"
    lf = only_post(parse_bytes("mac.md", front.encode()))
    for ending in ("\r", "\r\n"):
        post = only_post(parse_bytes("mac.md", front.replace("\n", ending).encode()))
        assert (post.post_id, post.title, post.collection, post.blocks) == (
            "mac",
            "Mac Title",
            "old",
            lf.blocks,
        )
        assert post.raw == front.replace("\n", ending)  # the file as written
        pasted = parse_text(front.replace("\n", ending), "", format="markdown")
        assert (pasted.title, pasted.text) == ("Mac Title", lf.text)
        bundle = (
            "=== POST START: One ===\nA.\n=== POST END ===\n=== POST START: Two ===\nB.\n=== POST END ===\n"
        )
        assert [p.title for p in parse_bytes("b.txt", bundle.replace("\n", ending).encode()).posts] == [
            "One",
            "Two",
        ]
        jsonl = '{"id": "a", "title": "A", "text": "x"}\n{"id": "b", "title": "B", "text": "y"}\n'
        assert [
            p.post_id for p in only_posts(parse_bytes("c.jsonl", jsonl.replace("\n", ending).encode()))
        ] == ["a", "b"]


def only_posts(result: ParseResult) -> list[Post]:
    assert result.errors == [], [str(e) for e in result.errors]
    return result.posts


def test_invisible_text_is_no_text_and_an_invisible_title_no_title() -> None:
    zero = "\u200b\u200c\u200d\u2060\ufeff\u00ad\u3164\u2800 \u034f"
    for name in ("z.md", "z.txt", "z.html"):
        assert parse_bytes(name, zero.encode()).errors[0].message.startswith("has no visible text"), name
    with pytest.raises(ValueError, match="no visible text"):
        parse_text(zero, "T")
    assert parse_text("Some words here.", zero).title == "Some words here."
    md = only_post(parse_bytes("note.md", f'---\ntitle: "{zero.strip()}"\n---\n# {zero}\n\nBody.'.encode()))
    assert (md.title, md.blocks) == ("Note", [Block("Body.")])
    page = f"<html><head><title>{zero}</title></head><body><h1>{zero}</h1><p>Page body.</p></body></html>"
    assert only_post(parse_bytes("page.html", page.encode())).title == "Page"
    items = json.dumps(
        [{"id": "a", "title": zero, "text": "Oak is planed."}, {"id": "b", "title": "B", "text": zero}]
    )
    result = parse_bytes("l.json", items.encode())
    assert [p.title for p in result.posts] == ["Oak is planed."]
    assert [e.message for e in result.errors] == [
        "item 2: has no visible text (only zero-width or other invisible characters)"
    ]
    # Visible text keeps its zero-width characters: a joiner inside a word is the author's.
    assert only_post(parse_bytes("j.txt", "Ke\u200dep this.".encode())).text == "Ke\u200dep this."


@pytest.mark.parametrize(
    ("written", "day"),
    [
        ("2021-12-31T23:59:00+05:00", "2021-12-31T23:59:00+05:00"),  # ISO: as it is
        ("2023-05-02 06:00:00", "2023-05-02 06:00:00"),
        ("March 5, 2020", "2020-03-05"),
        ("Thursday, March 5th, 2020", "2020-03-05"),
        ("5 Mar 2020", "2020-03-05"),
        ("Thu, 05 Mar 2020 23:30:00 -0800", "2020-03-05"),  # RFC 2822: the day as written
        ("2020/3/5", "2020-03-05"),
        ("05.03.2020", "2020-03-05"),  # dots: day first
        ("13/04/2021", "2021-04-13"),
        ("04/13/2021", "2021-04-13"),
        ("04/04/2021", "2021-04-04"),
        ("03/04/2021", ""),  # March or April
        ("Thu 03/04/2021", ""),
        ("March 2020", ""),  # no day
        ("5.3.20", ""),
        ("31/02/2021", ""),
        ("2020", ""),
        ("soon", ""),
    ],
)
def test_dates_are_read_only_when_they_can_be_read_for_sure(written: str, day: str) -> None:
    got, problem = read_date(written)
    assert got == day and bool(problem) == (not day), (written, got, problem)


def test_slugify() -> None:
    assert slugify("  Café, Tea & Me! ") == "cafe-tea-me"
    assert slugify("snake_case_Name") == "snake-case-name"
    assert slugify("東京の夏") == "東京の夏"
    assert slugify("!!!") == ""
    assert len(slugify("word " * 100)) <= 80


def test_supported_suffixes() -> None:
    text = {".txt", ".md", ".markdown", ".html", ".htm", ".json", ".jsonl"}
    assert text | {".xml", ".zip", ".pdf", ".docx"} == SUPPORTED_SUFFIXES  # exports, PDF, Word


# Links, special files and names (issue #11) ---------------------------------------------------------------


def test_links_inside_the_folder_are_followed_once(tmp_path: Path) -> None:
    import os

    root = tmp_path / "posts"
    write(root / ".drafts" / "draft.md", "# Draft\n\nLinked in from the folder.\n")
    write(root / "shared" / "note.md", "# Note\n\nIn a linked folder.\n")
    os.symlink(".drafts/draft.md", root / "draft-link.md")
    os.symlink("shared", root / "alias")  # the same folder twice: read once
    parsed = parse_paths(root)
    assert sorted(p.post_id for p in parsed.posts) == ["draft-link", "note"]
    assert [e.message for e in parsed.errors] == ["is a link to a folder read already (a loop); skipped"]


def test_a_fifo_named_on_the_command_line_is_refused_without_blocking(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "x.md"
    os.mkfifo(fifo)
    parsed = parse_paths([fifo])
    assert [e.message for e in parsed.errors] == ["is a FIFO (named pipe), not a regular file; skipped"]


def test_encodings_by_byte_order_mark_and_a_warning_naming_a_legacy_file(tmp_path: Path) -> None:
    for codec in ("utf-32", "utf-32-be", "utf-16", "utf-8-sig"):
        data = "\ufeffTitle line\n\nBody in this encoding." if codec.endswith("be") else "Title line\n\nBody."
        write(tmp_path / f"{codec}.txt", data.encode(codec))
    write(tmp_path / "legacy.txt", "Caf\u00e9 cr\u00e8me.".encode("cp1252"))
    parsed = parse_paths(tmp_path)
    assert not parsed.errors
    assert all(
        "\x00" not in p.text and p.title == "Title line" for p in parsed.posts if p.post_id != "legacy"
    )
    assert [(w.source, w.message.split(":")[0]) for w in parsed.warnings] == [
        (str(tmp_path / "legacy.txt"), "is not UTF-8 (byte 0xE9 at offset 3)")
    ]


@pytest.mark.parametrize("text", ["", "   \n\t", "\u200b\u200b"])
def test_pasted_text_with_nothing_visible_is_refused_in_plain_words(text):
    """Not "the text has no visible text": the paste box and `inkwell ingest -` say it is empty."""
    with pytest.raises(
        ValueError, match=r"^the text is empty: no visible text, only spaces or invisible characters$"
    ):
        parse_text(text, "A title")
