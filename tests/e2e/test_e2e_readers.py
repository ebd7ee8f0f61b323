"""End to end in a real browser (issue #12): a new user whose readers ask in Turkish.

A fresh data dir and `streamlit run` on loopback, Debian's headless Chromium through Playwright (as
tests/e2e/test_e2e_browser.py). The user names the readers' languages on the Ingest page, uploads the demo
blog's English writings, is told the table gets the multilingual model, then asks in Turkish on the chat
page and gets the post that answers the question first among the sources.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.embed.multilingual import MODEL_ID
from core.store import Store
from core.text.labels import labels
from tests.conftest import DEMO
from tests.e2e_support import (
    ANSWER_TIMEOUT,
    PAGE_TIMEOUT,
    VIEWPORT,
    AppServer,
    app_environ,
    assert_no_errors,
    idle,
    launch_chromium,
    metric,
    open_page,
    streamlit_server,
)

pytestmark = pytest.mark.browser

AUTHOR = "Mara Quill"
TURKISH = "Bu bloga neden başladın?"  # "Why did you start this blog?"
ANSWERING_POST = "Why This Blog Exists"


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("readers") / "db"  # empty: a new user


@pytest.fixture(scope="module")
def server(data_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    env = app_environ(INKWELL_DATA_DIR=str(data_dir), INKWELL_AUTHOR_NAME=AUTHOR, INKWELL_MAX_TOKENS="200")
    with streamlit_server(tmp_path_factory.mktemp("streamlit"), env) as app:
        yield app


def test_a_new_user_sets_reader_languages_and_a_turkish_question_finds_the_post(
    server: AppServer, data_dir: Path
):
    from playwright.sync_api import sync_playwright

    files = sorted(str(p) for p in (DEMO / "posts" / "writings").iterdir())
    with sync_playwright() as playwright:
        chromium = launch_chromium(playwright)
        context = chromium.new_context(viewport=VIEWPORT, device_scale_factor=1)
        context.set_default_timeout(PAGE_TIMEOUT)
        page = context.new_page()
        try:
            page.goto(server.url)
            page.get_by_test_id("stChatInputTextArea").wait_for()
            idle(page)
            open_page(page, "Ingest", "Ingest posts")
            languages = page.get_by_role("textbox", name="Readers' languages")
            languages.fill("en,tr")
            languages.press("Enter")
            idle(page)
            page.get_by_role("tab", name="Upload files").click()
            page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(files)
            upload_tab = page.get_by_role("tabpanel", name="Upload files")
            button = upload_tab.get_by_role("button", name=r"Ingest")
            button.wait_for()
            button.click()
            page.get_by_text(re.compile(r"^Ingested: .*readers ask in Turkish as well as English")).wait_for(
                timeout=ANSWER_TIMEOUT
            )
            idle(page)
            assert int(metric(page, "New")) >= len(files)
            assert_no_errors(page, server)
            assert Store(data_dir).model_id() == MODEL_ID

            open_page(page, "Ask", f"Ask {AUTHOR}")
            box = page.get_by_test_id("stChatInputTextArea")
            box.fill(TURKISH)
            box.press("Enter")
            answer = page.get_by_test_id("stChatMessage").nth(1)
            # The captions in the reader's language: the sources list is "Kaynaklar".
            sources = answer.get_by_test_id("stMarkdown").filter(has_text=labels("tr")["sources_title"]).last
            sources.wait_for(timeout=ANSWER_TIMEOUT)
            idle(page)
            assert_no_errors(page, server)
            first = sources.locator("li").first.inner_text()
            assert ANSWERING_POST in first, sources.inner_text()
        finally:
            context.close()
            chromium.close()
