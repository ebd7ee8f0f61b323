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
    '<h2 class="inkwell-asked">Where are the plans?</h2>'
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


# Every shown text's colour and its background's as shown (the nearest opaque background, else the page's
# white), the text's faded by its and its ancestors' opacity; with its font size and weight.
SHOWN_COLOURS = """() => [...document.querySelectorAll('.inkwell *')].filter(e => e.getClientRects().length &&
  [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())).map(e => {
  const rgba = c => (c.match(/[\\d.]+/g).map(Number).concat([1])).slice(0, 4);
  let back = [255, 255, 255];
  for (let n = e; n; n = n.parentElement) {
    const c = rgba(getComputedStyle(n).backgroundColor);
    if (c[3] === 1) { back = c.slice(0, 3); break; }
  }
  let alpha = 1;
  for (let n = e; n; n = n.parentElement) alpha *= parseFloat(getComputedStyle(n).opacity);
  const text = rgba(getComputedStyle(e).color).slice(0, 3);
  return [e.className || e.tagName, text.map((c, i) => c * alpha + back[i] * (1 - alpha)), back,
          parseFloat(getComputedStyle(e).fontSize), getComputedStyle(e).fontWeight];
})"""


def luminance(rgb: list[float]) -> float:
    """WCAG 2's relative luminance of an sRGB colour."""
    linear = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def test_every_text_has_aa_contrast_earlier_turns_too(phone):
    """Earlier turns were faded with opacity 0.85: their grey notes ("Searched for: …", "The author's own
    sentences, …") came out at 4.1:1 on white, under WCAG AA's 4.5:1 for text of their size."""
    shown = phone.evaluate(SHOWN_COLOURS)
    assert any("inkwell-note" in name for name, *_ in shown)
    for name, text, back, size, weight in shown:
        large = size >= 24 or (size >= 18.66 and int(weight) >= 700)
        light, dark = sorted((luminance(text), luminance(back)), reverse=True)
        ratio = (light + 0.05) / (dark + 0.05)
        assert ratio >= (3 if large else 4.5), (name, text, back, round(ratio, 2))


def test_the_question_box_is_outlined_at_3_to_1(phone):
    """The box's border was #bbb, 1.9:1 on white: once the reader typed (the placeholder gone), its edge
    was hard to make out, under the 3:1 a control's boundary needs (WCAG 1.4.11)."""
    edge = phone.evaluate(
        "() => getComputedStyle(document.getElementById('inkwell-question')).borderTopColor"
        ".match(/[\\d.]+/g).slice(0, 3).map(Number)"
    )
    light, dark = sorted((luminance(edge), luminance([255, 255, 255])), reverse=True)
    assert (light + 0.05) / (dark + 0.05) >= 3, edge
