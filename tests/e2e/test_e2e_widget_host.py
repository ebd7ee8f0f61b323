"""The widget on blogs that are not kind to it, with no Inkwell running: a loopback "blog" serves the
widget's own script (core/serve/widget.js) and its tag points `data-api` at a small loopback server that
plays a broken answer service. Debian's headless Chromium, through Playwright, as a reader sees it: a
theme whose rules reach the widget's element, an answer stream that stops before its end."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.e2e_support import ROOT, browser_page
from tests.static_support import serve_folder, serving

pytestmark = pytest.mark.browser

TIMEOUT = 20_000  # ms: nothing here loads a model
SHADOW = "document.querySelector('[data-inkwell]').shadowRoot"
CUT_OFF = "The answer was cut off before it finished. Please ask again."
META = b'event: meta\ndata: {"mode": "extractive", "searched_for": null}\n\n'
# A blog's keyboard shortcuts, as themes write them: not while the reader types in a text box.
SHORTCUTS = """document.addEventListener("keydown", e => {
  if (["INPUT", "TEXTAREA"].includes(e.target.tagName)) return;
  if (e.key === "/") { e.preventDefault(); document.getElementById("search").focus(); }
  if (e.key === "j") window.__scrolled = (window.__scrolled || 0) + 1;
});"""
HALF = b'event: delta\ndata: {"text": "Half an ans", "plain": "Half an ans"}\n\n'


class _CutStream(BaseHTTPRequestHandler):
    """An answer service whose stream ends before `done`, as behind a proxy's time limit: the events in
    `self.server.events`, then the connection closes. CORS allows any origin."""

    def log_message(self, *args) -> None:
        pass

    def _cors(self) -> None:
        self.send_header("Access-Control-Allow-Origin", self.headers.get("Origin") or "*")
        self.send_header("Access-Control-Allow-Headers", "Content-Type, Accept")
        self.send_header("Access-Control-Allow-Methods", "GET, POST")

    def do_OPTIONS(self) -> None:
        self.send_response(200)
        self._cors()
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:  # /api/welcome: none, the widget asks without it
        self.send_response(404)
        self._cors()
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self._cors()
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(self.server.events)  # type: ignore[attr-defined]
        self.wfile.flush()
        self.close_connection = True


@contextlib.contextmanager
def blog(folder: Path, style: str, api: str, script: str = "") -> Iterator[str]:
    """A one-page blog with the widget's tag (its script served beside the page), the blog's `style` and
    its own `script`."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "core" / "serve" / "widget.js", folder / "widget.js")
    (folder / "index.html").write_text(
        f"<!doctype html><html><head><meta charset=utf-8><style>{style}</style><script>{script}</script>"
        '</head><body><h1>A blog</h1><input id="search" aria-label="Search the blog">'
        '<div class="post" style="height: 3000px"><p>A long post.</p></div>'
        f'<script src="widget.js" defer data-api="{api}" data-title="Ask Mara"></script></body></html>'
    )
    with serve_folder(folder) as url:
        yield url.rstrip("/")


@pytest.fixture
def page(browser):
    with browser_page(browser, TIMEOUT) as page:
        yield page


def ask(page, question: str) -> str:
    page.get_by_role("button", name="Ask", exact=True).click()
    box = page.get_by_role("textbox", name="Your question")
    box.fill(question)
    box.press("Enter")
    page.wait_for_function(
        f"() => {SHADOW}.querySelector('p.a') && !{SHADOW}.querySelector('form button').disabled"
    )
    return page.evaluate(f"() => {SHADOW}.querySelector('p.a').textContent")


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


@pytest.mark.parametrize("events", [META, META + HALF], ids=["before-any-text", "mid-answer"])
def test_an_answer_stream_cut_before_its_end_says_so(page, tmp_path, events):
    """It left "Writing…" for good, or half an answer that looked whole, with the form free again."""
    service = ThreadingHTTPServer(("127.0.0.1", 0), _CutStream)
    service.events = events  # type: ignore[attr-defined]
    with serving(service) as api, blog(tmp_path / "blog", "", api) as site:
        page.goto(site)
        assert ask(page, "Why did you start the blog?") == CUT_OFF


def test_keys_typed_into_the_widget_are_not_the_blogs_shortcuts(page, tmp_path):
    """A key typed in the widget reaches the blog's listeners from the widget's element, not from a text
    box: "/" (the blog's search) took the focus away mid-question, "j" scrolled the blog."""
    with blog(tmp_path / "blog", "", "http://127.0.0.1:9", SHORTCUTS) as site:
        page.goto(site)
        page.get_by_role("button", name="Ask", exact=True).click()
        box = page.get_by_role("textbox", name="Your question")
        box.press_sequentially("joints 1/2 inch")
        assert box.input_value() == "joints 1/2 inch"
        assert page.evaluate("() => [document.getElementById('search').value, window.__scrolled]") == [
            "",
            None,
        ]
        box.press("Escape")  # the widget's own keys still work
        assert page.get_by_role("dialog").is_hidden()
        page.keyboard.press("/")  # and the blog's, outside the widget
        assert page.evaluate("() => document.activeElement.id") == "search"
