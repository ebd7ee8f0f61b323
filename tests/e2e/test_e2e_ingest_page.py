"""The owner's Ingest page keeps its state in a real browser: `streamlit run` on loopback, Debian's
headless Chromium, Playwright.

The open tab and an opened section stay open when an action shows a message above them (Undo) and on
the next run after it, where the message goes away again. A pasted post not ingested yet is still in
the form after a visit to another page.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from core.config import Settings
from core.ingest import ingest_posts
from core.models import Block, Post
from core.store import Store
from tests.e2e_support import PAGE_TIMEOUT, AppServer, app_environ, idle, open_page, streamlit_server

pytestmark = pytest.mark.browser

POSTS = {
    "bees": ("On Bees", "Swarming season starts in May; a colony that runs out of space leaves."),
    "walks": ("On Walking", "I walk along the canal every morning before work."),
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, embedder):
    """Two posts, ingested one at a time: two changes, so Undo has something to undo twice."""
    data_dir = tmp_path_factory.mktemp("ingest-page") / "db"
    settings = Settings.load({"data_dir": data_dir}, environ={})
    for post_id, (title, text) in POSTS.items():
        post = Post(post_id, title, [Block(text)], raw=text, source=f"{post_id}.txt")
        assert ingest_posts([post], settings, store=Store(data_dir), embedder=embedder).ok
    env = app_environ(INKWELL_DATA_DIR=str(data_dir), INKWELL_ROUTING="off")
    with streamlit_server(tmp_path_factory.mktemp("streamlit-ingest-page"), env) as app:
        yield app


@pytest.fixture
def page(browser, server: AppServer):
    context = browser.new_context()
    context.set_default_timeout(PAGE_TIMEOUT)
    page = context.new_page()
    page.goto(server.url)
    idle(page)
    open_page(page, "Ingest", "Ingest posts")
    yield page
    context.close()


def open_tab(page) -> str:
    return page.locator('[role="tab"][aria-selected="true"]').inner_text()


# Set before a field is committed, true once the app has run since: `idle` alone may look before the
# rerun has started, and a page switched to then would never have been sent the value.
WATCH_RUN = """() => {
    window.inkwellRan = false;
    // The whole document, not one element: the app may draw its root anew, and an observer of the old
    // one would never see the run. A state changed from "running" counts too: it may be over by the time
    // the observer is called.
    const state = '[data-testid="stApp"]';
    new MutationObserver((changes) => {
        const app = document.querySelector(state);
        if ((app && app.dataset.testScriptState === "running")
            || changes.some((c) => c.oldValue === "running")) {
            window.inkwellRan = true;
        }
    }).observe(document, {
        attributes: true, attributeOldValue: true, childList: true, subtree: true,
        attributeFilter: ["data-test-script-state"],
    });
}"""
RAN = """() => window.inkwellRan
    && document.querySelector('[data-testid="stApp"]').dataset.testScriptState === 'notRunning'"""


def commit(page, label: str, text: str) -> None:
    """Type into a text field and commit it, as leaving the field would; return after the run it caused."""
    box = page.get_by_role("textbox", name=label, exact=True)
    box.fill(text)
    page.evaluate(WATCH_RUN)
    box.press("Control+Enter" if box.evaluate("e => e.tagName") == "TEXTAREA" else "Enter")
    page.wait_for_function(RAN)
    idle(page)


def test_the_open_tab_and_section_stay_open_around_a_message(page):
    page.get_by_role("tab", name="Stored posts").click()
    page.get_by_role("button", name="Undo last change").click()
    message = page.get_by_text("Undone: ingest of 1 post.")
    message.wait_for()  # above the tabs
    idle(page)
    assert open_tab(page) == "Stored posts"

    routing = page.get_by_test_id("stExpander").filter(has_text="Collections routing")
    routing.locator("summary").click()
    commit(page, "Rules (TOML)", "this is [not toml")  # the run after the message: it goes away
    expect(message).to_have_count(0)
    page.get_by_role("button", name="Save rules").click()
    error = routing.get_by_text("Not saved, the rules file is unchanged")
    error.wait_for()
    idle(page)
    assert error.is_visible() and open_tab(page) == "Stored posts"


def test_a_pasted_draft_is_still_there_after_another_page(page):
    commit(page, "Title", "A draft about queens")
    commit(page, "Text", "The new queen hatches on day sixteen and fights her sisters.")
    open_page(page, "Inspect chunks", "Inspect chunks")
    open_page(page, "Ingest", "Ingest posts")
    assert page.get_by_role("textbox", name="Title", exact=True).input_value() == "A draft about queens"
    text = page.get_by_role("textbox", name="Text", exact=True).input_value()
    assert text == "The new queen hatches on day sixteen and fights her sisters."


def test_the_server_log_has_no_traceback(server: AppServer) -> None:
    log = Path(server.log).read_text(errors="replace")
    assert "Traceback" not in log, server.log_tail()
