"""Helpers for the browser tests: a real `streamlit run` server and Debian's headless Chromium.

The browser is Debian's `chromium` (/usr/bin/chromium, installed by `make browser`), driven by Playwright
for Python. Playwright's own browser download (`playwright install`) is never used: it needs the internet.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path(os.environ.get("INKWELL_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]
STARTUP_TIMEOUT = 90  # seconds until /_stcore/health answers (imports torch, lancedb, streamlit)
VIEWPORT = {"width": 1400, "height": 1000}
PAGE_TIMEOUT = 90_000  # ms: a page's first run on a loaded 2-core machine loads the embedding model
ANSWER_TIMEOUT = 180_000  # ms: starts the built-in llama.cpp server, reads ~20 excerpts, writes the answer


def missing_browser(reason: str) -> None:
    """Fail under CI (a missing browser must not pass silently), skip with the reason elsewhere."""
    message = f"{reason}. Run `make browser` (Debian: apt-get install chromium chromium-driver)."
    if os.environ.get("CI", "").lower() in ("true", "1"):
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def chromium_path() -> Path:
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        missing_browser(f"Chromium is not installed at {CHROMIUM}")
    return CHROMIUM


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def app_environ(**settings: str) -> dict[str, str]:
    """This process's environment without the developer's keys, URLs or INKWELL_* settings, plus these."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("INKWELL_", "STREAMLIT_")) and k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")
    }
    env.update(
        OMP_WAIT_POLICY="PASSIVE", HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false", PYTHONUNBUFFERED="1"
    )
    env.update(settings)
    return env


@dataclass
class AppServer:
    url: str
    process: subprocess.Popen
    log: Path

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


@contextlib.contextmanager
def streamlit_server(
    workdir: Path, env: Mapping[str, str], script: str = "streamlit_app.py"
) -> Iterator[AppServer]:
    """`streamlit run <script>` on a free loopback port, until /_stcore/health answers; killed after.
    `script` is streamlit_app.py (the app alone) or server.py (the app with the HTTP API, as `make run`).

    It runs in the project folder (for .streamlit/config.toml: the theme and upload size) but reads its
    secrets from an empty file in `workdir`, so a developer's own .streamlit/secrets.toml is not used.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    secrets = workdir / "secrets.toml"
    secrets.write_text('inkwell_e2e = "1"\n')  # a value that no setting reads
    port = free_port()
    log = workdir / "streamlit.log"
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        script,
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        "--secrets.files",
        str(secrets),
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: the teardown ends it and only it
        )
    server = AppServer(f"http://127.0.0.1:{port}", process, log)
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not _healthy(server.url):
            if process.poll() is not None:
                pytest.fail(
                    f"streamlit exited with {process.returncode} before serving:\n{server.log_tail()}",
                    pytrace=False,
                )
            if time.monotonic() > deadline:
                pytest.fail(
                    f"streamlit did not answer {server.url}/_stcore/health within {STARTUP_TIMEOUT} s:\n"
                    f"{server.log_tail()}",
                    pytrace=False,
                )
            time.sleep(0.5)
        yield server
    finally:
        stop(process)


def stop(process: subprocess.Popen) -> None:
    """SIGTERM to the server's own process group, SIGKILL after 15 s."""
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=15)


def launch_chromium(playwright):
    """Debian's Chromium, headless, with a fresh profile (Playwright makes a temporary user data dir)."""
    return playwright.chromium.launch(
        executable_path=str(chromium_path()), headless=True, args=CHROMIUM_ARGS, timeout=60_000
    )


# How far the page's content runs past the viewport: Streamlit scrolls inside its main container, not the
# document, so this is the biggest overflow of any scrolling element (0: everything is in view).
_OVERFLOW = """() => Array.from(document.querySelectorAll("*")).reduce((most, e) => {
  const y = getComputedStyle(e).overflowY;
  return y === "auto" || y === "scroll" ? Math.max(most, e.scrollHeight - e.clientHeight) : most;
}, 0)"""


def png_size(path: Path) -> tuple[int, int]:
    """A PNG's (width, height), from its header."""
    header = path.read_bytes()[16:24]
    return int.from_bytes(header[:4], "big"), int.from_bytes(header[4:], "big")


class Screenshots:
    """Screenshots go to a temp dir; with INKWELL_UPDATE_SCREENSHOTS=1 they also refresh docs/."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.tmp.mkdir(parents=True, exist_ok=True)
        self.update_docs = os.environ.get("INKWELL_UPDATE_SCREENSHOTS", "") not in ("", "0")
        self.docs = ROOT / "docs"

    def take(self, page, name: str, *, full_page: bool = False) -> Path:
        """The page as shown (the viewport), or with `full_page` all of it: the viewport is stretched to
        the content's height for the shot and restored after (Playwright's own full_page sees only the
        document, which Streamlit does not scroll). AssertionError if the content still overflows."""
        path = self.tmp / name
        # No focus ring and no hover effects (the sidebar shows its collapse button while hovered).
        page.evaluate("document.activeElement && document.activeElement.blur()")
        size = page.viewport_size or dict(VIEWPORT)
        shot = dict(size)
        try:
            for _ in range(3 if full_page else 0):  # a taller viewport can reflow the page: measure again
                extra = page.evaluate(_OVERFLOW)
                if extra <= 0:
                    break
                shot["height"] += extra
                page.set_viewport_size(shot)
                page.wait_for_timeout(300)
            assert not full_page or page.evaluate(_OVERFLOW) <= 0, "the page still overflows"
            page.mouse.move(shot["width"] - 5, shot["height"] - 5)
            page.wait_for_timeout(300)
            page.screenshot(path=str(path), animations="disabled", caret="hide")
        finally:
            if shot != size:
                page.set_viewport_size(size)
        if self.update_docs:
            self.docs.mkdir(exist_ok=True)
            shutil.copyfile(path, self.docs / name)
        return path


# A Streamlit page in Playwright ------------------------------------------------------------------------


def idle(page) -> None:
    """Wait until the script run is over (call after waiting for the run's expected output)."""
    page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for()


def open_page(page, title: str, heading: str) -> None:
    """Open a page from the sidebar and wait for its run to end."""
    page.get_by_test_id("stSidebarNavLink").filter(has_text=title).click()
    page.get_by_role("heading", name=heading, level=1).wait_for()
    idle(page)


def assert_no_errors(page, server: AppServer) -> None:
    """No exception and no error box on the page (the server log's tail in the message)."""
    exceptions = page.get_by_test_id("stException")
    assert exceptions.count() == 0, exceptions.first.inner_text() + "\n" + server.log_tail()
    errors = page.locator('[data-testid="stAlertContentError"]')
    assert errors.count() == 0, errors.all_inner_texts()


def metric(page, label: str) -> str:
    """The value shown by the st.metric labelled `label`."""
    box = page.get_by_test_id("stMetric").filter(
        has=page.get_by_test_id("stMetricLabel").filter(has_text=label)
    )
    return box.get_by_test_id("stMetricValue").inner_text().strip()


@contextlib.contextmanager
def browser_page(browser: Any, timeout_ms: int, width: int = 1200, height: int = 900) -> Iterator[Any]:
    """A new page of `browser` in its own context (no cookies or storage shared with other tests), at
    `width` × `height`, waiting at most `timeout_ms` for anything; closed when the block ends."""
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(timeout_ms)
    try:
        yield context.new_page()
    finally:
        context.close()
