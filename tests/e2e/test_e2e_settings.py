"""The owner's settings reach readers without a restart, in a real browser (issue #32).

`streamlit run` with INKWELL_ADMIN_PASSWORD and a scripted OpenAI-compatible server on 127.0.0.1, Debian's
headless Chromium through Playwright. A reader's chat offers no starter questions; the owner unlocks
Settings in another browser context, types a persona prompt and three starter questions and saves; the
reader loads the chat again (a new session on the same server process): the starters are buttons, one
click asks, and the model server records the new persona as the system prompt. A reader who opens
Settings gets the password form only.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config import Settings
from core.ingest import ingest_posts
from core.models import Block, Post
from core.store import Store
from tests.e2e_support import (
    AppServer,
    app_environ,
    idle,
    streamlit_server,
)
from tests.servers import Reply, ScriptedOpenAIServer

pytestmark = pytest.mark.browser

PASSWORD = "owner pass phrase"
TIMEOUT = 120_000  # ms: a page's first run (and the first answer) on a loaded 2-core machine
PERSONA = "You are {author_name}, a beekeeper. Answer in one plain sentence, only from the excerpts."
STARTERS = ["When does swarming season start?", "How do you count mites?", "Where do you walk?"]
ANSWER = "Swarming season starts in May."
POSTS = {
    "bees": ("On Bees", "Swarming season starts in May. We count mites on a sticky board every two weeks."),
    "walks": ("On Walking", "I walk along the canal every morning before work."),
}


@pytest.fixture(scope="module")
def model_server():
    with ScriptedOpenAIServer() as server:
        server.responder = lambda body: Reply(chat_text=ANSWER)
        yield server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, model_server, embedder):
    data_dir = tmp_path_factory.mktemp("settings") / "db"
    settings = Settings.load({"data_dir": data_dir}, environ={})
    posts = [
        Post(pid, title, [Block(text)], raw=text, source=f"{pid}.txt") for pid, (title, text) in POSTS.items()
    ]
    assert ingest_posts(posts, settings, store=Store(data_dir), embedder=embedder).ok
    env = app_environ(
        INKWELL_DATA_DIR=str(data_dir),
        INKWELL_ADMIN_PASSWORD=PASSWORD,
        OPENAI_BASE_URL=model_server.base_url,
        INKWELL_ROUTING="off",
        INKWELL_TRANSLATE_QUESTION="false",
    )
    with streamlit_server(tmp_path_factory.mktemp("streamlit-settings"), env) as app:
        yield app


def open_page(context, server: AppServer, name: str | None = None):
    page = context.new_page()
    page.goto(server.url)
    page.get_by_test_id("stChatInput").wait_for()
    idle(page)
    if name:  # from the sidebar: deep links 404 on a fresh server (streamlit/streamlit#9992)
        page.get_by_test_id("stSidebarNavLink").filter(has_text=name).click()
        page.get_by_role("heading", name=name).wait_for()
        idle(page)
    return page


def type_into(page, label: str, text: str) -> None:
    box = page.get_by_label(label, exact=True)
    box.fill(text)
    box.press("Control+Enter" if box.evaluate("e => e.tagName") == "TEXTAREA" else "Enter")
    idle(page)


def test_the_owners_persona_and_starters_reach_a_reader_without_a_restart(browser, server, model_server):
    reader = browser.new_context()
    reader.set_default_timeout(TIMEOUT)
    chat = open_page(reader, server)
    assert chat.get_by_role("button", name=STARTERS[0]).count() == 0

    owner = browser.new_context()
    owner.set_default_timeout(TIMEOUT)
    settings = open_page(owner, server, "Settings")
    settings.get_by_label("Admin password").fill(PASSWORD)
    settings.get_by_role("button", name="Unlock").click()
    settings.get_by_label("Persona prompt", exact=True).wait_for()
    idle(settings)
    type_into(settings, "Author's name", "Maya")
    type_into(settings, "Persona prompt", PERSONA)
    type_into(settings, "Starter questions (one per line)", "\n".join(STARTERS))
    settings.get_by_role("button", name="Save").click()
    settings.get_by_text("Saved. Readers get them with their next question.").wait_for()

    chat.reload()  # a new session on the same server process: no restart
    chat.get_by_test_id("stChatInput").wait_for()
    idle(chat)
    starters = [chat.get_by_role("button", name=q, exact=True) for q in STARTERS]
    starters[0].wait_for()
    assert all(button.count() == 1 for button in starters), chat.inner_text("body")
    before = len(model_server.chat_requests)
    starters[0].click()
    # .first: the "Copy the answer" expander holds the same text in a code block
    chat.get_by_role("paragraph").filter(has_text=ANSWER).first.wait_for()
    idle(chat)
    sent = model_server.chat_requests[before:]
    assert sent and sent[-1].body["messages"][0] == {
        "role": "system",
        "content": PERSONA.replace("{author_name}", "Maya"),
    }
    assert chat.get_by_role("button", name=STARTERS[1], exact=True).count() == 0  # asked: gone

    lurker = open_page(reader, server, "Settings")  # a reader opening Settings gets the password form only
    lurker.get_by_label("Admin password").wait_for()
    assert lurker.get_by_label("Persona prompt", exact=True).count() == 0
    reader.close()
    owner.close()


def test_the_server_log_has_no_traceback(server: AppServer) -> None:
    log = Path(server.log).read_text(errors="replace")
    assert "Traceback" not in log, server.log_tail()
