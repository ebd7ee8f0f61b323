"""The widget on a blog, end to end: a static "blog" on one loopback port with the widget's tag pointing
at Inkwell (`streamlit run server.py`) on another, so the browser's CORS check is real; Debian's headless
Chromium driven by Playwright, as a reader would: open the panel, ask, read the answer and its sources,
move to another page of the blog and find the conversation still there; rate answers (a declined one
too) with a thumb and a comment by keyboard, each landing on its row of the question log, under the note
on what is kept. A blog on an origin the owner did not list is refused, and a post whose title and text
hold HTML runs nothing."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest

from core.answer.owner import save_owner
from core.config import Settings
from core.ingest import ingest_posts
from core.models import Block, Post
from core.store import Store
from core.store.questions import PRIVACY_NOTE, QuestionLog
from core.text.labels import labels
from tests.conftest import BEES
from tests.e2e_support import AppServer, app_environ, browser_page, free_port, streamlit_server
from tests.static_support import serve_folder

pytestmark = pytest.mark.browser

GREETING = "Ask me about bees."
STARTERS = ["When does swarming season start?", "How often are mites counted?", "Why keep bees?"]
TIMEOUT = 90_000  # ms: the first question loads the embedding model on a loaded 2-core machine
HOSTILE_TITLE = 'Smoke <img src=x onerror="window.__pwned = 1"> & "quotes"'
HOSTILE = [
    'A smoker calms the bees <img src=x onerror="window.__pwned = 2"> before the hive is opened.',
    "Cool smoke from pine needles <script>window.__pwned = 3</script> works best in the smoker.",
]


@contextlib.contextmanager
def blog(folder: Path, widget_src: str, port: int | None = None) -> Iterator[str]:
    """A static blog of two pages, each with the widget's tag, served from `folder` on 127.0.0.1."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, title, body in (
        ("index.html", "Home", "<p>A blog about bees.</p>"),
        ("other.html", "Another post", "<p>Another post.</p>"),
        ("bees.html", "On Bees", "".join(f"<p>{p}</p>" for p in BEES)),  # the post itself
    ):
        (folder / name).write_text(
            f"<!doctype html><html><head><title>{title}</title></head><body><h1>{title}</h1>{body}"
            f'<a id="next" href="other.html">Another post</a>'
            f'<script src="{widget_src}" defer data-title="Ask the beekeeper"></script></body></html>'
        )
    with serve_folder(folder, port or 0) as url:
        yield url.rstrip("/")


@pytest.fixture(scope="module")
def blog_port() -> int:
    return free_port()


@pytest.fixture(scope="module")
def widget_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The served table's data directory (the question log is read from it)."""
    return tmp_path_factory.mktemp("widget") / "db"


@pytest.fixture(scope="module")
def inkwell(
    widget_dir: Path, tmp_path_factory: pytest.TempPathFactory, embedder, blog_port: int
) -> Iterator[AppServer]:
    data_dir = widget_dir
    settings = Settings.load({"data_dir": data_dir, "chunk_tokens": 30}, environ={})
    posts = [
        Post(
            "bees",
            "On Bees",
            [Block(p) for p in BEES],
            raw="\n\n".join(BEES),
            source="bees.txt",
            url=f"http://127.0.0.1:{blog_port}/bees.html",
        ),
        Post(
            "smoke", HOSTILE_TITLE, [Block(p) for p in HOSTILE], raw="\n\n".join(HOSTILE), source="smoke.txt"
        ),
    ]
    assert ingest_posts(posts, settings, store=Store(data_dir), embedder=embedder).ok
    save_owner(Store(data_dir), {"greeting": GREETING, "starters": STARTERS})
    env = app_environ(
        INKWELL_DATA_DIR=str(data_dir),
        INKWELL_CHUNK_TOKENS="30",
        INKWELL_ALLOWED_ORIGINS=f"http://127.0.0.1:{blog_port}",
        INKWELL_ROUTING="off",
    )
    with streamlit_server(tmp_path_factory.mktemp("widget-server"), env, script="server.py") as server:
        yield server


@pytest.fixture
def page(browser):
    with browser_page(browser, TIMEOUT) as page:
        yield page


def ask(page, question: str) -> str:
    """Open the panel if needed, ask, and return the last answer's text once it is complete."""
    if page.get_by_role("dialog").is_hidden():
        page.get_by_role("button", name="Ask", exact=True).first.click()
    before = page.locator("p.a").count()
    box = page.get_by_role("textbox", name="Your question")
    box.fill(question)
    box.press("Enter")
    answer = page.locator("p.a").nth(before)
    answer.wait_for()
    page.wait_for_function(
        "el => el.textContent && el.textContent !== 'Writing…'", arg=answer.element_handle(), timeout=TIMEOUT
    )
    page.wait_for_function("() => !document.querySelector('[data-inkwell]').shadowRoot"
                           ".querySelector('form button').disabled")  # fmt: skip
    return answer.inner_text()


def shadow_focus(page) -> str | None:
    """The aria-label of what has the keyboard focus inside the widget."""
    return page.evaluate(
        "() => { const f = document.querySelector('[data-inkwell]').shadowRoot.activeElement;"
        " return f && f.getAttribute('aria-label'); }"
    )


def logged_row(widget_dir: Path, question: str):
    (row,) = [r for r in QuestionLog(Store(widget_dir)).query() if r.question == question]
    return row


def test_a_reader_asks_on_the_blog_and_keeps_the_conversation_across_pages(
    page, inkwell, widget_dir, blog_port, tmp_path
):
    with blog(tmp_path / "blog", f"{inkwell.url}/widget.js", blog_port) as site:
        page.goto(site)
        text = ask(page, "When does swarming season start?")
        assert "Swarming season starts in May." in text
        lines = [line.strip() for line in text.split("\n") if line.strip() and not line.startswith("From ")]
        assert lines and all(any(line in p for p in BEES) for line in lines), text  # verbatim
        assert page.get_by_role("listitem").filter(has_text="On Bees").count() >= 1  # the source
        page.get_by_text(PRIVACY_NOTE).wait_for()  # the server keeps questions: the widget says so
        page.get_by_role("button", name="Helpful", exact=True).click()  # the reader's thumbs up
        page.get_by_text("Thank you: the author will see this.").wait_for()
        # Then an optional comment: the focus is on its box, so the keyboard writes and sends it.
        assert shadow_focus(page) == "Anything to add? (optional)"
        page.keyboard.type("More on swarm traps, please")
        page.keyboard.press("Enter")
        page.get_by_text("Thank you: the author will see your comment.").wait_for()
        row = logged_row(widget_dir, "When does swarming season start?")
        assert (row.source, row.feedback, row.comment) == ("widget", 1, "More on swarm traps, please")
        # The source opens the post on the blog at the quoted sentences (a text fragment).
        href = page.get_by_role("link", name="On Bees").first.get_attribute("href")
        assert href.startswith(f"{site}/bees.html#:~:text=")
        directives = href.split(":~:", 1)[1].split("&")
        quoted = [[unquote(piece) for piece in d.removeprefix("text=").split(",")] for d in directives]
        page.goto(href)
        body = page.locator("body").inner_text()
        assert all(piece in body for directive in quoted for piece in directive), (href, body)
        assert ["Swarming season starts in May."] in quoted
        page.go_back()
        declined = ask(page, "Who won the football world cup in 2018?")
        assert declined.startswith("I haven't written about that")
        assert page.get_by_text("The closest posts:").count() == 1
        page.get_by_role("button", name="Not helpful", exact=True).click()  # declined answers are rated too
        page.get_by_text("Thank you: the author will see this.").wait_for()
        row = logged_row(widget_dir, "Who won the football world cup in 2018?")
        assert (row.declined, row.feedback, row.comment) == (True, -1, "")
        page.locator("#next").click()  # another page of the blog
        page.wait_for_url("**/other.html")
        assert page.get_by_role("dialog").is_visible()  # still open, and the conversation with it
        assert page.get_by_text("When does swarming season start?").count() == 1
        assert page.locator("p.a").count() == 2


def test_a_post_holding_html_runs_nothing_in_the_widget(page, inkwell, blog_port, tmp_path):
    with blog(tmp_path / "blog", f"{inkwell.url}/widget.js", blog_port) as site:
        page.goto(site)
        text = ask(page, "How does a smoker calm the bees before the hive is opened?")
        assert "<img src=x onerror=" in text  # shown as text
        # The title as written: no Markdown escapes, entities or emphasis (the API's plain answer_text).
        assert f"From {HOSTILE_TITLE}:" in text, text
        assert not any(mark in text for mark in ("&amp;", "&lt;", "*", "\\_")), text
        assert page.get_by_role("listitem").filter(has_text="<img src=x").count() >= 1  # the title, as text
        assert page.evaluate("window.__pwned") is None
        assert (
            page.locator("[data-inkwell]").evaluate(
                "h => h.shadowRoot.querySelectorAll('img, script').length"
            )
            == 0
        )


def test_an_over_long_question_is_refused_as_typed_not_cut_and_answered(page, inkwell, blog_port, tmp_path):
    """A pasted question longer than the server takes is refused with the server's message, not cut
    short by the input box and answered as something the reader did not ask."""
    with blog(tmp_path / "blog", f"{inkwell.url}/widget.js", blog_port) as site:
        page.goto(site)
        text = ask(page, "When does swarming season start? " + "why " * 300)
        assert "questions are limited to 1,000. Please ask a shorter question." in text, text
        # Scrolled to, under the long question: the reader sees why, without looking for it.
        in_view = """a => { const r = a.getBoundingClientRect(), l = a.closest('.log').getBoundingClientRect();
                            return r.top >= l.top && r.bottom <= l.bottom + 1; }"""
        assert page.locator("p.a").last.evaluate(in_view)


def test_a_blog_the_owner_did_not_list_is_refused(page, inkwell, tmp_path):
    with blog(tmp_path / "elsewhere", f"{inkwell.url}/widget.js") as site:  # another port: not listed
        page.goto(site)
        text = ask(page, "When does swarming season start?")
        assert "Swarming" not in text and "Failed to fetch" not in text
        # Said in plain words, with what the owner can do (the browser stops the call: no status to read).
        assert text.startswith("The answer service could not be reached from this site."), text
        assert "INKWELL_ALLOWED_ORIGINS" in text
        assert page.locator("p.a").count() == 1


def test_a_follow_up_says_what_was_searched_and_a_new_conversation_forgets_it(
    page, inkwell, blog_port, tmp_path
):
    with blog(tmp_path / "blog", f"{inkwell.url}/widget.js", blog_port) as site:
        page.goto(site)
        ask(page, "When does swarming season start?")
        ask(page, "tell me more")
        page.get_by_text("Searched for: When does swarming season start?").wait_for()
        page.get_by_role("button", name="New conversation").click()
        assert page.locator("p.a").count() == 0 and page.locator("p.q").count() == 0
        page.get_by_text(GREETING).wait_for()  # the owner's greeting and starters, as for a first visit
        assert page.get_by_role("button", name=STARTERS[0]).count() == 1
        assert shadow_focus(page) == "Your question"
        ask(page, "tell me more")  # nothing before it now: asked as it is
        assert page.get_by_text("Searched for:").count() == 0
        page.reload()  # and the blog's next page does not bring the old conversation back
        page.locator("p.a").first.wait_for()
        assert page.locator("p.q").all_inner_texts() == ["tell me more"]


def test_the_owners_starter_questions_ask_in_one_click(page, inkwell, blog_port, tmp_path):
    with blog(tmp_path / "blog", f"{inkwell.url}/widget.js", blog_port) as site:
        page.goto(site)
        page.get_by_role("button", name="Ask", exact=True).first.click()
        page.get_by_text(GREETING).wait_for()
        page.get_by_role("button", name=STARTERS[0]).click()
        answer = page.locator("p.a").first
        page.wait_for_function("el => el.textContent.includes('May')", arg=answer.element_handle())
        assert page.get_by_role("button", name=STARTERS[1]).count() == 0  # the starters make way


def test_a_german_reader_gets_the_widgets_words_in_german(page, inkwell, blog_port, tmp_path):
    """The server sends each reply's labels in the question's language (core/text/labels.py): the thumbs,
    the thanks and the comment box under a German question's answer are German, and so is the question
    box after it; an English question after it brings English back."""
    german, english = labels("de"), labels("en")
    with blog(tmp_path / "blog", f"{inkwell.url}/widget.js", blog_port) as site:
        page.goto(site)
        page.get_by_role("button", name="Ask", exact=True).first.click()  # the blog's language: English
        box = page.get_by_role("textbox", name="Your question")
        box.fill("Wann beginnt bei den Bienen die Schwarmzeit?")
        box.press("Enter")
        page.get_by_role("button", name=german["helpful"], exact=True).click()  # was "Helpful"
        page.get_by_text(german["thanks"]).wait_for()
        assert shadow_focus(page) == german["comment"]
        box = page.get_by_role("textbox", name=german["question"])  # was "Your question"
        assert box.get_attribute("placeholder") == german["placeholder"]
        assert page.get_by_text(english["thanks"]).count() == 0
        assert ask_as(page, box, "When does swarming season start?")
        assert (
            page.get_by_role("textbox", name=english["question"]).get_attribute("placeholder")
            == (english["placeholder"])
        )


def ask_as(page, box, question: str) -> str:
    """Ask in `box` (named in whatever language the widget speaks now); the new answer once complete."""
    before = page.locator("p.a").count()
    box.fill(question)
    box.press("Enter")
    answer = page.locator("p.a").nth(before)
    page.wait_for_function("() => !document.querySelector('[data-inkwell]').shadowRoot"
                           ".querySelector('form button').disabled")  # fmt: skip
    return answer.inner_text()
