"""The widget as a reader with a keyboard, a screen reader or a phone meets it, with no Inkwell running: a
loopback "blog" serves the widget's own script (core/serve/widget.js) and its tag points `data-api` at a
small loopback server that streams a whole answer word by word, with a source, a note and a question id
(so the thumbs show). Debian's headless Chromium, through Playwright; each test reads the DOM, the focus
or computed styles, so it is fast (nothing loads a model)."""

from __future__ import annotations

import contextlib
import json
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
LONG_URL = "https://blog.example/" + "a" * 160
LONG_WORD = "Donaudampfschifffahrtsgesellschaftskapitänswitwenrentenversicherungsanstalt"
ANSWER = f"From Joinery:\nThe plans are at {LONG_URL} and the {LONG_WORD} paid for them."
DONE = {
    "question": "q",
    "searched_for": None,
    "mode": "extractive",
    "answer": ANSWER,
    "answer_text": ANSWER,
    "sources": [{"post_id": "p1", "title": "Plans " + "x" * 80, "url": LONG_URL, "link": LONG_URL}],
    "sentences": [],
    "suggestions": [],
    "note": "A note under the sources.",
    "question_id": "q1",
    "lang": "de",  # as a German blog's answer says it (the blog's page below is lang="en")
}
WELCOME = {"greeting": "Hello.", "starters": ["Why the blog?"], "question_log": True, "privacy_note": "Kept."}


class _Service(BaseHTTPRequestHandler):
    """An answer service: GET is the welcome, POST /api/feedback is accepted, POST /api/ask streams
    ANSWER a word per `delta` event, then `done`. CORS allows any origin."""

    def log_message(self, *args) -> None:
        pass

    def _head(self, content_type: str, length: int | None = None) -> None:
        self.send_response(200)
        self.send_header("Access-Control-Allow-Origin", self.headers.get("Origin") or "*")
        self.send_header("Access-Control-Allow-Headers", "Content-Type, Accept")
        self.send_header("Access-Control-Allow-Methods", "GET, POST")
        self.send_header("Content-Type", content_type)
        if length is not None:
            self.send_header("Content-Length", str(length))
        self.end_headers()

    def do_OPTIONS(self) -> None:
        self._head("text/plain", 0)

    def _json(self, data: dict) -> None:
        body = json.dumps(data).encode()
        self._head("application/json", len(body))
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._json(WELCOME)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path.endswith("/feedback"):
            self._json({})
            return
        self._head("text/event-stream")
        for word in ANSWER.split(" "):
            delta = {"text": word + " ", "plain": word + " "}
            self.wfile.write(f"event: delta\ndata: {json.dumps(delta)}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(f"event: done\ndata: {json.dumps(DONE)}\n\n".encode())
        self.close_connection = True


@contextlib.contextmanager
def blog(folder: Path) -> Iterator[str]:
    """A one-page blog (a phone's viewport tag) with the widget's tag, and its answer service."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "core" / "serve" / "widget.js", folder / "widget.js")
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), _Service)) as api:
        (folder / "index.html").write_text(
            '<!doctype html><html lang="en"><head><meta charset=utf-8><meta name="viewport" '
            'content="width=device-width, initial-scale=1"></head><body><h1>A blog</h1>'
            f'<script src="widget.js" defer data-api="{api}" data-title="Ask Mara"></script></body></html>'
        )
        with serve_folder(folder) as url:
            yield url


@pytest.fixture
def phone(browser, tmp_path):
    """The blog on a 320 px wide phone."""
    with blog(tmp_path / "blog") as url, browser_page(browser, TIMEOUT, 320, 568) as page:
        page.goto(url)
        yield page


def ask(page, question: str) -> None:
    """Open the panel and ask by keyboard; back once the answer is finished."""
    page.get_by_role("button", name="Ask", exact=True).focus()
    page.keyboard.press("Enter")
    page.keyboard.type(question)
    page.keyboard.press("Enter")
    page.wait_for_function(
        f"() => {SHADOW}.querySelector('.rate') && !{SHADOW}.querySelector('form button').disabled"
    )


def test_long_words_and_addresses_in_an_answer_wrap_on_a_phone(phone):
    """A post's address or a long German compound ran out of the 280 px panel: the answer and the
    source's title were cut off at its edge, readable only by scrolling the conversation sideways."""
    ask(phone, "Where are the plans?")
    widths = phone.evaluate(
        f"() => {{ const log = {SHADOW}.querySelector('.log'); return [log.scrollWidth, log.clientWidth]; }}"
    )
    assert widths[0] <= widths[1], widths
    assert phone.evaluate("() => document.documentElement.scrollWidth") <= 320


# Each text an answer was given, with whether the conversation (the live region) was busy then: the records
# come in the order of the changes, the busy state followed through them (the answer is set, never edited).
WATCH_ANSWERS = f"""() => {{
  const log = {SHADOW}.querySelector('.log');
  window.__changes = [];
  let busy = null;
  new MutationObserver(records => records.forEach((r, i) => {{
    // An attribute record holds the value before: the value after is the next one's before, or the current.
    const next = records.slice(i + 1).find(n => n.type === 'attributes');
    if (r.type === 'attributes') busy = next ? next.oldValue : log.getAttribute('aria-busy');
    else if (r.target.matches('p.a')) r.addedNodes.forEach(n => window.__changes.push([busy, n.textContent]));
  }})).observe(log, {{subtree: true, childList: true, attributeFilter: ['aria-busy'], attributeOldValue: true}});
}}"""


def test_a_streamed_answer_is_announced_once_when_finished(phone):
    """The conversation is a polite live region, and every streamed word rewrote the answer in it: a
    screen reader read the answer again and again as it grew. It is busy while the words stream in,
    and the finished answer is written once more when it is not."""
    phone.get_by_role("button", name="Ask", exact=True).click()
    phone.evaluate(WATCH_ANSWERS)
    box = phone.get_by_role("textbox", name="Your question")
    box.fill("Where are the plans?")
    box.press("Enter")
    phone.wait_for_function(f"() => {SHADOW}.querySelector('.rate')")
    changes = phone.evaluate("() => window.__changes")
    assert len(changes) > 3, changes  # "Writing…", the words, the finished answer
    writing, *streamed, last = changes
    assert writing == [None, "Writing…"]  # read: the reader hears the question is being answered
    assert all(busy == "true" for busy, _ in streamed), streamed
    assert last == [None, ANSWER]  # the finished answer, in a region no longer busy
    assert phone.evaluate(f"() => {SHADOW}.querySelector('.log').getAttribute('aria-busy')") is None


def active(page) -> str:
    """The focused element's accessible name (in the widget, or the blog's element's tag)."""
    return page.evaluate(
        f"""() => {{ const a = {SHADOW}.activeElement;
        return a ? a.getAttribute('aria-label') || a.textContent : document.activeElement.tagName; }}"""
    )


def test_after_a_comment_is_sent_by_keyboard_the_focus_stays_in_the_widget(phone):
    """The comment's box and button were replaced by the thanks: the focus fell to the blog's page, and a
    keyboard reader's next Tab started from the top of the blog."""
    ask(phone, "Where are the plans?")
    phone.keyboard.press("Shift+Tab")  # from the question box: the thumbs are just before it
    phone.keyboard.press("Shift+Tab")
    assert active(phone) == "Helpful"
    phone.keyboard.press("Enter")
    phone.get_by_role("textbox", name="Anything to add? (optional)").wait_for()
    assert active(phone) == "Anything to add? (optional)"
    phone.keyboard.type("Clear plans, thank you.")
    phone.keyboard.press("Enter")
    phone.get_by_text("Thank you: the author will see your comment.").wait_for()
    assert active(phone) == "Your question"


def contrast(a: list[float], b: list[float]) -> float:
    """WCAG 2's contrast ratio of two sRGB colours."""

    def luminance(rgb: list[float]) -> float:
        lin = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


# The focused element's outline colour and the panel's background, as rgb lists.
FOCUS_RING = f"""() => {{
  const rgb = c => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const r = {SHADOW};
  return [r.activeElement.tagName, rgb(getComputedStyle(r.activeElement).outlineColor),
          rgb(getComputedStyle(r.querySelector('.panel')).backgroundColor)];
}}"""


def test_the_focus_ring_inside_the_panel_stands_out_from_its_white(phone):
    """The focus ring was the same orange everywhere: right on the accent-coloured header and button,
    but 2.2:1 on the panel's white, under the 3:1 a focus indicator needs (WCAG 1.4.11)."""
    ask(phone, "Where are the plans?")  # the focus is back in the question box
    phone.keyboard.press("Shift+Tab")  # a thumb, in the conversation
    for _ in range(2):
        tag, ring, panel = phone.evaluate(FOCUS_RING)
        assert contrast(ring, panel) >= 3, (tag, ring, panel)
        phone.keyboard.press("Tab")


def test_escape_closes_the_panel_from_its_launcher_too(phone):
    """Escape closed the panel only from inside it: a keyboard reader who went back to the Ask button
    (Shift+Tab from the panel's first button) pressed Escape and the panel stayed over the blog."""
    launcher = phone.locator("[data-inkwell] button.btn")  # the panel's own button is "Ask" too
    launcher.focus()
    phone.keyboard.press("Enter")
    assert active(phone) == "Your question"
    launcher.focus()
    phone.keyboard.press("Escape")
    assert phone.get_by_role("dialog").is_hidden()
    assert launcher.get_attribute("aria-expanded") == "false" and active(phone) == "Ask"


def test_the_answer_carries_the_language_the_server_gives_it(phone):
    """A German answer on a blog whose page says lang="en" inherited English: a screen reader read the
    German sentences with English pronunciation. The answer's element takes the server's `lang`, on the
    blog's next page (the conversation restored) too."""
    ask(phone, "Where are the plans?")
    langs = f"() => [...{SHADOW}.querySelectorAll('p.a')].map(p => p.lang)"
    assert phone.evaluate(langs) == ["de"]
    phone.reload()
    phone.wait_for_function(f"() => {SHADOW}.querySelector('p.a')")
    assert phone.evaluate(langs) == ["de"]


def test_the_launchers_focus_ring_stands_out_from_a_white_blog(phone):
    """The launcher's ring was orange, 2.2:1 on a white blog, under the 3:1 a focus indicator needs."""
    phone.keyboard.press("Tab")  # the blog has no links: the first Tab lands on the launcher
    assert active(phone) == "Ask"
    ring = phone.evaluate(
        f"() => getComputedStyle({SHADOW}.activeElement).outlineColor.match(/[\\d.]+/g).slice(0, 3).map(Number)"
    )
    assert contrast(ring, [255, 255, 255]) >= 3, ring


def test_the_question_box_is_outlined_at_3_to_1(phone):
    """The question box's border was #bbb, 1.9:1 on the panel's white: once the reader typed (the
    placeholder gone), the box's edge was hard to make out, under the 3:1 a control's boundary needs."""
    phone.locator("[data-inkwell] button.btn").click()
    edge = phone.evaluate(
        f"() => getComputedStyle({SHADOW}.querySelector('form input')).borderTopColor"
        ".match(/[\\d.]+/g).slice(0, 3).map(Number)"
    )
    assert contrast(edge, [255, 255, 255]) >= 3, edge


def test_the_launcher_and_the_send_button_have_different_names(phone):
    """With the panel open, the launcher and the form's button were both "Ask": a screen reader's list
    of buttons showed two of one name. The form's button sends."""
    phone.get_by_role("button", name="Ask", exact=True).click()
    assert phone.get_by_role("button", name="Ask", exact=True).count() == 1
    box = phone.get_by_role("textbox", name="Your question")
    box.fill("Where are the plans?")
    phone.get_by_role("button", name="Send", exact=True).click()
    phone.wait_for_function(f"() => {SHADOW}.querySelector('.rate')")
