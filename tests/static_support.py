"""A static site served as a static host would serve it, and its page driven in headless Chromium.

    with serve_folder(site) as url, static_page(playwright, url) as page:
        reply = ask(page, "Why did you start the blog?")

Shared by tests/e2e/test_static_browser.py and bench/static.py. The server is Python's own http.server on
127.0.0.1, in a thread: no Inkwell process runs while the page answers.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.e2e_support import launch_chromium

LOAD_TIMEOUT = 180_000  # ms: a cold page on a busy 2-core machine compiles 14 MB of WebAssembly


class QuietHandler(SimpleHTTPRequestHandler):
    """Python's file server, without a log line per request."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serving(server: ThreadingHTTPServer) -> Iterator[str]:
    """`server` in a thread for as long as the block runs; its address, http://127.0.0.1:<port>."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@contextmanager
def serve_folder(folder: Path, port: int = 0) -> Iterator[str]:
    """http://127.0.0.1:<port>/ serving `folder`, for as long as the block runs."""
    handler = functools.partial(QuietHandler, directory=str(folder))
    with serving(ThreadingHTTPServer(("127.0.0.1", port), handler)) as url:
        yield f"{url}/"


@contextmanager
def static_page(
    playwright: Any, url: str, errors: list[str] | None = None, outside: list[str] | None = None
) -> Iterator[Any]:
    """The site's page in a fresh headless Chromium (cold cache), once its model has loaded. Page errors
    and failed requests go to `errors`, requests for anything but `url`'s folder to `outside`."""
    browser = launch_chromium(playwright)
    try:
        page = browser.new_page()
        if outside is not None:
            page.on("request", lambda r: None if r.url.startswith(url) else outside.append(r.url))
        if errors is not None:
            page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
            page.on(
                "requestfailed",
                lambda request: errors.append(f"request failed: {request.url}"),
            )
        page.goto(url + "index.html")
        # A selector, not wait_for_function: the page's Content-Security-Policy forbids eval.
        page.wait_for_selector("#inkwell-form[data-ready=true]", state="attached", timeout=LOAD_TIMEOUT)
        yield page
    finally:
        browser.close()


def ask(page: Any, question: str) -> dict:
    """The page engine's reply to `question` (what the widget renders), with its `seconds`."""
    return page.evaluate("q => window.inkwell.ask(q)", question)


def first_post(reply: dict) -> str | None:
    """The post an answer quotes first, None for a decline (either side's reply)."""
    if "groups" in reply:  # the page's
        return reply["groups"][0]["post"] if reply.get("mode") == "extractive" else None
    sentences = reply.get("sentences") or []  # `inkwell ask --json`'s
    return sentences[0]["post_id"] if reply.get("answer_mode") == "extractive" and sentences else None
