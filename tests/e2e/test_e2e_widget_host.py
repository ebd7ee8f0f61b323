"""The widget on blogs that are not kind to it, with no Inkwell running: a loopback "blog" serves the
widget's own script (core/serve/widget.js). Debian's headless Chromium, through Playwright, as a reader
sees it: a theme whose rules reach the widget's element."""

from __future__ import annotations

import contextlib
import shutil
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.e2e_support import ROOT

pytestmark = pytest.mark.browser

TIMEOUT = 20_000  # ms: nothing here loads a model


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@contextlib.contextmanager
def serving(server: ThreadingHTTPServer) -> Iterator[str]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def blog(folder: Path, style: str, api: str) -> Iterator[str]:
    """A one-page blog with the widget's tag (its script served beside the page) and the blog's `style`."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "core" / "serve" / "widget.js", folder / "widget.js")
    (folder / "index.html").write_text(
        f"<!doctype html><html><head><meta charset=utf-8><style>{style}</style></head><body>"
        '<h1>A blog</h1><div class="post" style="height: 3000px"><p>A long post.</p></div>'
        f'<script src="widget.js" defer data-api="{api}" data-title="Ask Mara"></script></body></html>'
    )
    handler = lambda *a, **kw: _Quiet(*a, directory=str(folder), **kw)  # noqa: E731
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), handler)) as url:
        yield url


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    context.set_default_timeout(TIMEOUT)
    page = context.new_page()
    try:
        yield page
    finally:
        context.close()


@pytest.mark.parametrize(
    "style",
    [
        "div:empty { display: none; }",  # a theme hiding empty boxes hid the whole widget
        "body > div:empty { display: none !important; }",
    ],
)
def test_a_theme_hiding_empty_boxes_does_not_hide_the_widget(page, tmp_path, style):
    with blog(tmp_path / "blog", style, "http://127.0.0.1:9") as site:
        page.goto(site)
        button = page.get_by_role("button", name="Ask", exact=True)
        button.wait_for(state="attached")
        assert button.is_visible(), style
        box = button.bounding_box()
        # In the viewport's bottom-right corner, where the widget puts it (right: 20px; bottom: 20px).
        assert box and 1200 - 40 - box["width"] <= box["x"] and 900 - 40 - box["height"] <= box["y"] < 900, (
            box
        )
