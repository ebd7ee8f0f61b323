"""A reader who asks again while an answer is being written, in a real browser: the first answer shows
"Writing…" (never an empty bubble) while the model has not answered yet, and after the second question
both questions stay on the page, the first marked as stopped, the second answered. The model is a
scripted OpenAI-compatible server on 127.0.0.1 whose first reply is slow."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from core.config import Settings
from core.ingest import ingest_posts
from core.store import Store
from tests.conftest import bees_post
from tests.e2e_support import AppServer, app_environ, streamlit_server
from tests.servers import ScriptedOpenAIServer

pytestmark = pytest.mark.browser

TIMEOUT = 90_000
FIRST = "When does swarming season start?"
SECOND = "What is the real enemy of the bees?"


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as server:
        yield server


@pytest.fixture(scope="module")
def app(
    tmp_path_factory: pytest.TempPathFactory, embedder, model: ScriptedOpenAIServer
) -> Iterator[AppServer]:
    data_dir: Path = tmp_path_factory.mktemp("turns") / "db"
    settings = Settings.load({"data_dir": data_dir, "chunk_tokens": 30}, environ={})
    posts = [bees_post()]
    assert ingest_posts(posts, settings, store=Store(data_dir), embedder=embedder).ok
    env = app_environ(
        INKWELL_DATA_DIR=str(data_dir),
        INKWELL_CHUNK_TOKENS="30",
        INKWELL_ANSWER_MODE="generative",
        INKWELL_TRANSLATE_QUESTION="false",
        INKWELL_ROUTING="off",
        OPENAI_BASE_URL=model.base_url,
    )
    with streamlit_server(tmp_path_factory.mktemp("turns-server"), env) as server:
        yield server


def test_a_second_question_while_the_first_is_written_keeps_both(browser, app, model):
    model.chat("Swarming season starts in May.", delay=20)  # the first answer is slow to start
    model.chat("Varroa mites are the real enemy.")
    page = browser.new_page()
    try:
        page.set_default_timeout(TIMEOUT)
        page.goto(app.url)
        box = page.get_by_test_id("stChatInputTextArea")
        box.fill(FIRST)
        box.press("Enter")
        page.get_by_text("Writing…").wait_for()  # the first answer waits for the model, and says so
        box.fill(SECOND)
        box.press("Enter")
        # Four messages (question, stopped answer, question, answer), the last one answered: waiting for
        # the answer's words anywhere would also find them in the stopped answer's excerpts.
        messages = page.get_by_test_id("stChatMessage")
        expect(messages).to_have_count(4, timeout=TIMEOUT)
        expect(messages.nth(3)).to_contain_text("Varroa mites are the real enemy.", timeout=TIMEOUT)
        expect(messages.nth(3)).not_to_contain_text("Writing…", timeout=TIMEOUT)
        page.wait_for_function("() => !document.querySelector('[data-testid=stStatusWidget]')")
        texts = [m.inner_text() for m in messages.all()]
        assert any(FIRST in t for t in texts) and any(SECOND in t for t in texts), texts
        assert any("This answer was stopped" in t for t in texts), texts
        assert not any("Writing…" in t for t in texts), texts
    finally:
        page.close()
