"""The owner password lockout survives a reload, in a real browser (issue #11, part 4).

`streamlit run` with INKWELL_ADMIN_PASSWORD, Debian's headless Chromium through Playwright: wrong
passwords on the Ingest page lock it (2 s, 4 s, 8 s, 16 s), and neither reloading the page (a new
Streamlit session) nor a fresh browser context (no cookies, as another browser on the same machine)
unlocks it early: the count lives in the server process, per client address (core/serve/guard.py).
Once the lock has run out, the right password opens the page.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.e2e_support import (
    AppServer,
    app_environ,
    idle,
    streamlit_server,
)

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery staple"
TIMEOUT = 90_000  # ms: a page's first run on a loaded 2-core machine


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    data_dir = tmp_path_factory.mktemp("lockout") / "db"
    env = app_environ(INKWELL_DATA_DIR=str(data_dir), INKWELL_ADMIN_PASSWORD=PASSWORD)
    with streamlit_server(tmp_path_factory.mktemp("streamlit-lockout"), env) as app:
        yield app


def open_ingest(context, server: AppServer, page=None):
    page = page or context.new_page()
    page.goto(server.url)
    # Pages are opened from the sidebar: deep links 404 on a fresh server (streamlit/streamlit#9992).
    page.get_by_test_id("stSidebarNavLink").filter(has_text="Ingest").click()
    page.get_by_label("Admin password").wait_for()
    idle(page)
    return page


def submit(page, password: str, expect: str | None = None) -> str:
    """Type a password, press Unlock, return the error shown (the form clears itself). The previous
    error stays on screen until the rerun ends, so pass the `expect`ed text when one is showing."""
    page.get_by_label("Admin password").fill(password)
    page.get_by_role("button", name="Unlock").click()
    errors = page.locator('[data-testid="stAlertContentError"]')
    error = errors.filter(has_text=expect).last if expect else errors.last
    error.wait_for()
    idle(page)
    return error.inner_text().strip()


def test_a_reload_does_not_reset_the_lockout(browser, server: AppServer) -> None:
    context = browser.new_context()
    context.set_default_timeout(TIMEOUT)
    page = open_ingest(context, server)
    for guess, message in enumerate(["(2 tries before a pause).", "(1 try before a pause)."], 1):
        assert submit(page, f"guess {guess}", f"Wrong password {message}") == f"Wrong password {message}"
    for guess, lock in [(3, 2), (4, 4), (5, 8), (6, 16)]:
        message = f"Wrong password. Try again in {lock} s."
        assert submit(page, f"guess {guess}", message) == message
        locked_at = time.monotonic()
        if lock < 16:
            time.sleep(lock + 0.3)

    # Load the app again in the same tab: a new Streamlit session in the same browser. (From the root:
    # reloading /ingest itself runs the page outside the app's navigation, streamlit/streamlit#9992.)
    page = open_ingest(context, server, page)
    refused = submit(page, PASSWORD)
    assert refused.startswith("Too many wrong passwords: try again in"), refused

    other = browser.new_context()  # no cookies: another browser on the same machine
    other.set_default_timeout(TIMEOUT)
    elsewhere = open_ingest(other, server)
    assert submit(elsewhere, PASSWORD).startswith("Too many wrong passwords"), (
        "a fresh context unlocked early"
    )

    time.sleep(max(0.0, 16.5 - (time.monotonic() - locked_at)))
    page.get_by_label("Admin password").fill(PASSWORD)
    page.get_by_role("button", name="Unlock").click()
    page.get_by_role("tab", name="Upload files").wait_for()  # the Ingest page itself
    idle(page)
    assert page.get_by_label("Admin password").count() == 0
    context.close()
    other.close()


def test_the_server_log_has_no_traceback(server: AppServer) -> None:
    log = Path(server.log).read_text(errors="replace")
    assert "Traceback" not in log, server.log_tail()
