"""End to end in a real browser: `streamlit run` on loopback, Debian's headless Chromium, Playwright.

One server for the module, with the demo blog (data/demo/posts) ingested through core first so the chat
has real content. Then, as a person would, through the sidebar: upload posts on the Ingest page and read
the summary, ask a question on the chat page and get the author's own sentences (each checked verbatim
against the post it links to) with the sources, ask an off-topic one and get the honest reply with the
closest posts, browse and query the chunks in the inspector, and read what readers asked on the Readers
page.

Screenshots go to a temp dir; `INKWELL_UPDATE_SCREENSHOTS=1 make test` (or pytest -m browser) refreshes
docs/screenshot-*.png, which the README and docs/evaluation.md show.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from core.config import Settings
from core.ingest import ingest_paths
from core.store import Store
from tests.conftest import DEMO, write
from tests.e2e_support import (
    ANSWER_TIMEOUT,
    PAGE_TIMEOUT,
    VIEWPORT,
    AppServer,
    Screenshots,
    app_environ,
    assert_no_errors,
    idle,
    metric,
    open_page,
    png_size,
    streamlit_server,
)

pytestmark = pytest.mark.browser

AUTHOR = "Mara Quill"
QUESTION = "Why did you start the blog?"

NEW_POST = """\
---
title: "Sharpening on a Cold Morning"
date: 2025-02-03
slug: sharpening-on-a-cold-morning
tags: [sharpening, chisels, winter]
---

The barn was nine degrees when I came in this morning, too cold for glue and too cold for finish, so I
sharpened. Every chisel I own, in order, from the eighth-inch mortise chisel up to the big paring chisel
Ezra gave me the winter I arrived.

## Why I like it

Sharpening is the one job in the shop that has no customer. Nobody will ever see the back of a chisel.
I flatten it anyway, on the coarse diamond plate and then the fine stone, until the scratch pattern is
even and the edge catches the light in one clean line.
"""


# Fixtures ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory, embedder) -> Path:
    """The demo blog (20 posts in three collections), ingested through core into a fresh data dir."""
    path = tmp_path_factory.mktemp("e2e") / "db"
    settings = Settings.load({"data_dir": path}, environ={})
    report = ingest_paths([DEMO / "posts"], settings, embedder=embedder)
    assert report.ok and report.count("new") == 20, report.summary()
    return path


@pytest.fixture(scope="module")
def server(data_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    env = app_environ(
        INKWELL_DATA_DIR=str(data_dir),
        INKWELL_AUTHOR_NAME=AUTHOR,
        INKWELL_AUTHOR_DESCRIPTION="a furniture maker in Vermont who left software to learn the craft",
        INKWELL_MAX_TOKENS="200",  # a short answer: quicker, and it fits the screenshot
    )
    with streamlit_server(tmp_path_factory.mktemp("streamlit"), env) as app:
        yield app


@pytest.fixture
def page(browser, server: AppServer):
    """A fresh browser context (its own Streamlit session) on the app's home page, the chat."""
    context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
    context.set_default_timeout(PAGE_TIMEOUT)
    page = context.new_page()
    page.goto(server.url)
    page.get_by_test_id("stChatInputTextArea").wait_for()
    idle(page)
    try:
        yield page
    finally:
        context.close()


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Screenshots:
    return Screenshots(tmp_path_factory.mktemp("screenshots"))


# Helpers -------------------------------------------------------------------------------------------------


# Tests ---------------------------------------------------------------------------------------------------


def test_ingest_page_uploads_files_and_shows_the_summary(page, server, data_dir, tmp_path, screenshots):
    open_page(page, "Ingest", "Ingest posts")
    page.get_by_role("tab", name="Upload files").click()
    new_post = write(tmp_path / "sharpening-on-a-cold-morning.md", NEW_POST)
    already_stored = DEMO / "posts" / "writings" / "leaving-the-feed.md"
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files([str(new_post), str(already_stored)])
    page.get_by_text("2 files → 2 posts, 0 problems.").wait_for()

    upload_tab = page.get_by_role("tabpanel", name="Upload files")
    upload_tab.get_by_role("button", name="Preview chunks").click()
    preview = page.get_by_test_id("stExpander").filter(has_text="Sharpening on a Cold Morning · writings")
    preview.wait_for()
    assert re.search(r"· \d+ chunks", preview.inner_text())

    upload_tab.get_by_role("button", name="Ingest 2 posts").click()
    page.get_by_text(re.compile(r"^Ingested: 1 new, 0 updated, 1 unchanged, 0 failed")).wait_for()
    idle(page)
    assert metric(page, "New") == "1"
    assert metric(page, "Unchanged") == "1"
    assert metric(page, "Failed") == "0"
    assert int(metric(page, "Chunks embedded")) >= 1
    assert_no_errors(page, server)
    # The sidebar's counts are drawn after the page ran, so they include the new post.
    posts, chunks = Store(data_dir).counts()
    assert posts == 21
    page.get_by_test_id("stSidebar").get_by_text(f"21 posts · {chunks} chunks").wait_for()
    screenshots.take(page, "screenshot-ingest.png")


def test_chat_quotes_the_author_and_says_what_she_has_not_written_about(page, server, data_dir, screenshots):
    page.get_by_role("heading", name=f"Ask {AUTHOR}", level=1).wait_for()
    chat_input = page.get_by_test_id("stChatInputTextArea")
    assert chat_input.get_attribute("placeholder") == f"Ask {AUTHOR} something"
    chat_input.fill(QUESTION)
    chat_input.press("Enter")

    messages = page.get_by_test_id("stChatMessage")
    messages.first.get_by_text(QUESTION).wait_for()
    answer = messages.nth(1)
    note = answer.get_by_test_id("stCaptionContainer").filter(has_text="The author's own sentences")
    note.wait_for(timeout=ANSWER_TIMEOUT)
    idle(page)
    assert_no_errors(page, server)
    assert messages.count() == 2
    assert answer.get_by_test_id("stChatMessageAvatarAssistant").count() == 1

    # Every sentence of the answer occurs verbatim in the post its "From <title>:" line links to.
    body = answer.get_by_test_id("stMarkdown").first
    links = body.locator("a")
    assert links.count() >= 1
    posts = {post["post_id"]: post for post in Store(data_dir).list_posts()}
    chunks = Store(data_dir).list_chunks(columns=["post_id", "text", "section"])
    groups = re.split(r"^From (.+):$", body.inner_text().strip(), flags=re.MULTILINE)
    assert groups[0].strip() == "" and len(groups) >= 3, groups
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    pairs = list(zip(groups[1::2], groups[2::2], strict=True))  # (title, quoted sentences) per post
    for (title, quoted), href in zip(pairs, hrefs, strict=True):
        post_id = parse_qs(urlsplit(href).query)["post"][0]  # the reader page (read?post=…&q=…)
        assert posts[post_id]["title"] == title
        text = " ".join(c["text"] for c in chunks if c["post_id"] == post_id)
        assert "…" not in quoted  # a passage is the author's text as written, never glued across a gap
        lines = [" ".join(line.split()) for line in quoted.splitlines() if line.strip()]  # line breaks kept
        # … and a line that is no sentence is the heading of a section the passage goes on into.
        headings = {c["section"] for c in chunks if c["post_id"] == post_id}
        assert lines and all(line in " ".join(text.split()) or line in headings for line in lines), (
            title,
            lines,
        )
    assert "why-this-blog-exists" in [parse_qs(urlsplit(h).query)["post"][0] for h in hrefs]  # retrieval
    sources = answer.get_by_test_id("stMarkdown").filter(has_text=re.compile(r"^Sources")).last
    assert not any("relevance" in s for s in sources.locator("li").all_inner_texts())  # the owner's detail

    # Top of the exchange in view for the screenshot: question, quoted answer and the sources.
    messages.first.evaluate("el => el.scrollIntoView({block: 'start'})")
    screenshots.take(page, "screenshot-chat.png")

    chat_input.fill("What is the capital of Australia?")
    chat_input.press("Enter")
    honest = messages.nth(3)
    honest.get_by_text("I haven't written about that, so I can't answer it from my posts.").wait_for(
        timeout=ANSWER_TIMEOUT
    )
    idle(page)
    assert_no_errors(page, server)
    closest = honest.get_by_test_id("stMarkdown").filter(has_text="The closest posts I have written:")
    assert 1 <= closest.locator("li a").count() <= 3
    assert honest.get_by_test_id("stCaptionContainer").filter(has_text="Answered by").count() == 0


def test_inspector_browses_chunks_and_tests_a_query(page, server, data_dir, screenshots):
    open_page(page, "Inspect chunks", "Inspect chunks")
    _, chunks = Store(data_dir).counts()
    page.get_by_text(f"{chunks} of {chunks} chunks. Select a row to see the whole chunk.").wait_for()
    page.get_by_test_id("stDataFrame").wait_for()  # exactly one (strict), once its component has loaded

    # The search box filters the table.
    search = page.get_by_label("Search text, titles, sections, keywords")
    search.fill("sawmill")
    search.press("Enter")
    caption = page.get_by_text(re.compile(rf"^(?!{chunks} of)\d+ of {chunks} chunks\."))
    caption.wait_for()
    shown = int(caption.inner_text().split()[0])
    assert 0 < shown < chunks
    idle(page)
    assert_no_errors(page, server)
    screenshots.take(page, "screenshot-inspect.png")

    # Query mode: every candidate with its relevance, which ones are used, and the chart.
    page.get_by_test_id("stRadio").get_by_text("Test a query").click()
    question = page.get_by_label("Question")
    question.fill("How do you pick wood at the sawmill?")
    question.press("Enter")
    page.get_by_test_id("stMetricLabel").filter(has_text="Candidates").wait_for()
    idle(page)
    assert_no_errors(page, server)
    assert int(metric(page, "Candidates")) >= int(metric(page, "Used")) > 0
    page.get_by_test_id("stVegaLiteChart").wait_for()
    page.get_by_test_id("stDataFrame").wait_for()
    screenshots.take(page, "screenshot-inspect-query.png")


def test_evaluate_page_compares_configurations_side_by_side(page, server, screenshots):
    open_page(page, "Evaluate", "Evaluate retrieval")
    page.get_by_text("2 configurations: dense, hybrid").wait_for()
    page.get_by_role("button", name="Run evaluation").click()
    page.get_by_role("heading", name="Summary").wait_for(timeout=PAGE_TIMEOUT * 2)
    idle(page)
    assert_no_errors(page, server)
    page.get_by_text("Baseline: dense; the × columns divide each row's figure by the baseline's.").wait_for()
    page.get_by_role("heading", name="Per query").wait_for()
    frames = page.get_by_test_id("stDataFrame")
    frames.nth(1).wait_for()  # the grids draw once their component has loaded
    assert frames.count() == 2  # the summary and the per-query rows
    page.get_by_role("button", name="Download JSON").wait_for()
    screenshots.take(page, "screenshot-evaluate.png")


@pytest.mark.parametrize(
    ("path", "heading", "url"),
    [
        ("ask", f"Ask {AUTHOR}", "/"),  # the chat's own link: it used to open "Page not found" over the chat
        ("ask?c=kept", f"Ask {AUTHOR}", "/?c=kept"),  # the conversation id survives the redirect
        ("", f"Ask {AUTHOR}", "/"),
        ("posts", "Ingest posts", "/posts"),
        ("chunks", "Inspect chunks", "/chunks"),
        ("quality", "Evaluate retrieval", "/quality"),
    ],
)
def test_deep_links_open_their_pages(browser, server, path, heading, url):
    """Every page's link opens it, with no "Page not found" dialog, once the server has served a page
    (a fresh server's first run: test_a_fresh_servers_first_link_opens_its_page)."""
    warm = browser.new_context(viewport=VIEWPORT)
    warm.new_page().goto(server.url)
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(PAGE_TIMEOUT)
    try:
        warm.pages[0].get_by_test_id("stChatInputTextArea").wait_for(timeout=PAGE_TIMEOUT)
        page = context.new_page()
        page.goto(f"{server.url}/{path}")
        page.get_by_role("heading", name=heading, level=1).wait_for()
        idle(page)
        page.wait_for_timeout(500)  # the dialog, when there is one, comes with the page's first run
        assert page.get_by_role("dialog").count() == 0, page.get_by_role("dialog").all_inner_texts()
        assert page.url == server.url + url
        assert_no_errors(page, server)
    finally:
        context.close()
        warm.close()


def test_the_browser_tab_names_the_chat_and_the_cited_post(browser, server):
    """Citations open in new tabs: each tab says which post it holds, not "Inkwell" like all the others."""
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(PAGE_TIMEOUT)
    try:
        page = context.new_page()
        page.goto(server.url)
        page.get_by_role("heading", name=f"Ask {AUTHOR}", level=1).wait_for()
        expect(page).to_have_title(f"Ask {AUTHOR}")
        page.goto(f"{server.url}/read?post=why-this-blog-exists&q=It+is+a+fair+question.")
        page.get_by_role("heading", name="Why This Blog Exists", level=1).wait_for()
        expect(page).to_have_title("Why This Blog Exists")
        assert_no_errors(page, server)
    finally:
        context.close()


@pytest.mark.parametrize(
    ("path", "heading", "url", "sidebar"),
    [
        ("chunks?post=leaving-the-feed", "Inspect chunks", "/chunks?post=leaving-the-feed", "Embedder:"),
        # A reader's chat names no embedder (the owner's Details do): the toggle is its sidebar's own.
        ("ask?c=kept", f"Ask {AUTHOR}", "/?c=kept", "Details"),
    ],
)
def test_a_fresh_servers_first_link_opens_its_page(browser, data_dir, tmp_path, path, heading, url, sidebar):
    """The very first request to a new server process is a deep link (a quote's link to its post, or
    /ask): Streamlit runs that first run as a legacy pages/ app (pages/shared/entry.py), which used to
    show "Page not found" over the page and skip the entry point."""
    env = app_environ(INKWELL_DATA_DIR=str(data_dir), INKWELL_AUTHOR_NAME=AUTHOR)
    with streamlit_server(tmp_path / "streamlit", env) as fresh:
        context = browser.new_context(viewport=VIEWPORT)
        context.set_default_timeout(PAGE_TIMEOUT)
        try:
            page = context.new_page()
            page.goto(f"{fresh.url}/{path}")
            page.get_by_role("heading", name=heading, level=1).wait_for()
            idle(page)
            page.wait_for_timeout(500)  # the dialog, when there is one, comes with the page's first run
            assert page.get_by_role("dialog").count() == 0, page.get_by_role("dialog").all_inner_texts()
            assert page.url == fresh.url + url
            # Through the entry point: its navigation (the four pages, not the files) and sidebar status.
            nav = page.get_by_test_id("stSidebarNav").inner_text()
            assert "Inspect chunks" in nav and "quality" not in nav, nav
            page.get_by_text(sidebar).first.wait_for()
            assert_no_errors(page, fresh)
        finally:
            context.close()


def ask_in(page, question: str) -> None:
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(question)
    box.press("Enter")


def test_a_pasted_essay_does_not_delay_another_reader(browser, server):
    """Two readers at once: one pastes 20,000 characters (refused before any work), the other is answered."""
    contexts = [browser.new_context(viewport=VIEWPORT) for _ in range(2)]
    try:
        pasting, asking = (c.new_page() for c in contexts)
        for p in (pasting, asking):
            p.set_default_timeout(PAGE_TIMEOUT)
            p.goto(server.url)
            p.get_by_test_id("stChatInputTextArea").wait_for()
        ask_in(pasting, "Why did you start the blog? " * 720)
        ask_in(asking, "How do you pick wood at the sawmill?")
        asking.get_by_test_id("stChatMessage").nth(1).get_by_test_id("stCaptionContainer").filter(
            has_text="The author's own sentences"
        ).wait_for(timeout=ANSWER_TIMEOUT)
        refusal = pasting.get_by_test_id("stAlertContentWarning").filter(
            has_text="questions are limited to 1,000"
        )
        refusal.wait_for()
        assert pasting.get_by_test_id("stChatMessage").count() == 0  # neither shown nor answered
        for p in (pasting, asking):
            assert_no_errors(p, server)
    finally:
        for c in contexts:
            c.close()


def test_a_reload_keeps_the_conversation(page, server):
    page.get_by_test_id("stChatInputTextArea").wait_for()
    ask_in(page, "What moisture content should wood have before you build indoor furniture?")
    messages = page.get_by_test_id("stChatMessage")
    messages.nth(1).get_by_test_id("stCaptionContainer").filter(
        has_text="The author's own sentences"
    ).wait_for(timeout=ANSWER_TIMEOUT)
    idle(page)
    answer = messages.nth(1).get_by_test_id("stMarkdown").first.inner_text()
    assert "?c=" in page.url
    page.reload()
    page.get_by_text("What moisture content should wood have before you build indoor furniture?").wait_for()
    idle(page)
    assert messages.count() == 2
    assert messages.nth(1).get_by_test_id("stMarkdown").first.inner_text() == answer
    assert_no_errors(page, server)


def test_readers_page_shows_what_readers_asked(page, server, screenshots):
    """After readers asked (two answered, two about something never written), the owner's Readers page
    counts them, charts them by day and groups the declined ones into a topic with its examples."""
    asked = [
        ("How do you pick wood at the sawmill?", "The author's own sentences"),
        ("Why did you start the blog?", "The author's own sentences"),
        ("What is the capital of Australia?", "I haven't written about that"),
        ("Which city is the capital of Australia?", "I haven't written about that"),
    ]
    messages = page.get_by_test_id("stChatMessage")
    for i, (question, reply) in enumerate(asked):
        ask_in(page, question)
        messages.nth(2 * i + 1).get_by_text(reply).first.wait_for(timeout=ANSWER_TIMEOUT)
        idle(page)

    open_page(page, "Readers", "Readers")
    page.get_by_role("heading", name="Asked but not written about").wait_for()
    page.get_by_text("“Which city is the capital of Australia?”").wait_for(timeout=PAGE_TIMEOUT)
    page.get_by_test_id("stVegaLiteChart").wait_for()
    idle(page)
    assert_no_errors(page, server)
    assert int(metric(page, "Questions")) >= len(asked)  # earlier tests' readers are in the log too
    assert metric(page, "Answered") != "0%" and metric(page, "Declined") != "0%"
    # The whole page, so the README shows the topics too, not just what fits the viewport.
    shot = screenshots.take(page, "screenshot-readers.png", full_page=True)
    assert png_size(shot)[1] > VIEWPORT["height"]
