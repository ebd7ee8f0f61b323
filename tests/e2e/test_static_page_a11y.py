"""The static site's page (core/publish/assets: index.html and inkwell-static.css) as a reader on a phone
or with low vision meets it: its own page and stylesheet served on 127.0.0.1 without the engine (nothing
loads a model, so the tests are fast), a conversation put in as the page's `render` draws one, and the
layout and colours read from headless Chromium's computed styles."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from tests.e2e_support import ROOT, browser_page
from tests.static_support import serve_folder

pytestmark = pytest.mark.browser

TIMEOUT = 20_000  # ms
ASSETS = ROOT / "core" / "publish" / "assets"
LONG_URL = "https://blog.example/" + "a" * 160
# An earlier turn and the latest, as inkwell-static.mjs `render` and `mount` draw them.
TURN = (
    '<p class="inkwell-asked">Where are the plans?</p>'
    '<p class="inkwell-note inkwell-searched">Searched for: the plans</p>'
    '<div class="inkwell-passage"><p class="inkwell-from">From <a href="#">Plans</a>:</p>'
    f'<blockquote class="inkwell-quote"><span class="inkwell-sentence">They are at {LONG_URL}.</span>'
    "</blockquote></div>"
    '<p class="inkwell-note">The author\'s own sentences, quoted from the posts (no model wrote them).</p>'
)
CONVERSATION = f"""() => {{
  const earlier = document.createElement('article');
  earlier.className = 'inkwell-turn';
  earlier.innerHTML = {TURN!r};
  document.getElementById('inkwell-conversation').append(earlier);
  document.getElementById('inkwell-answer').innerHTML = {TURN!r};
}}"""


@pytest.fixture
def phone(browser, tmp_path) -> Iterator:
    """The page on a 320 px wide phone, holding a conversation of two turns."""
    site = tmp_path / "site"
    site.mkdir()
    for name in ("index.html", "inkwell-static.css"):
        shutil.copy(ASSETS / name, site / name)
    with serve_folder(site) as url, browser_page(browser, TIMEOUT, 320, 568) as page:
        page.goto(url + "index.html")
        page.evaluate(CONVERSATION)
        yield page


def test_the_ask_button_stays_on_a_phones_screen(phone):
    """At 320 px the question box kept its default width and pushed the Ask button 20 px past the
    screen's edge: the page scrolled sideways and the button was cut off."""
    send = phone.locator("#inkwell-form button").bounding_box()
    assert send and send["x"] + send["width"] <= 320, send


def test_a_long_address_in_a_quote_wraps_on_a_phone(phone):
    """A post's long address (or a long compound word) in a quoted sentence kept to one line and ran
    1,500 px past a 320 px screen: the page scrolled sideways to read it."""
    assert phone.evaluate("() => document.documentElement.scrollWidth") <= 320
