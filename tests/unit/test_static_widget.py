"""What the static export adds for the blog's widget (core/publish/site.py): the tag the owner pastes and
the welcome the widget shows before the first question."""

from __future__ import annotations

import json

from core.answer.owner import OwnerSettings
from core.publish.site import WIDGET, welcome, widget_tag
from core.text.labels import labels


def test_the_tag_loads_the_widget_from_the_served_folder_in_static_mode():
    assert widget_tag("/ask/", "Ask Mara") == (
        '<script src="/ask/widget.js" defer data-static data-title="Ask Mara"></script>'
    )
    tag = widget_tag("/ask", '"><img src=x onerror=alert(1)>')
    assert "<img" not in tag and 'data-title="&quot;&gt;&lt;img' in tag


def test_the_welcome_is_the_owners_without_a_question_log():
    owner = OwnerSettings(greeting="Hello.", starters=("One?", "Two?", "Three?"))
    assert json.loads(welcome("Ask Mara", owner)) == {
        "title": "Ask Mara",
        "greeting": "Hello.",
        "starters": ["One?", "Two?", "Three?"],
        "language": "en",
        "labels": labels("en"),
    }
    assert json.loads(welcome("Frag Mara", owner, "de"))["labels"]["searched_for"] == "Gesucht nach:"


def test_the_widget_copied_is_the_servers():
    assert WIDGET.as_posix().endswith("core/serve/widget.js") and "data-static" in WIDGET.read_text("utf-8")


def test_the_widget_is_ascii_so_a_blog_without_a_charset_shows_it_right():
    # A classic script is decoded in the page's charset when the host sends none (python -m http.server
    # does not): a literal "×" showed as "Ã—" on a blog page without <meta charset>.
    text = WIDGET.read_text("utf-8")
    assert text.isascii(), [c for c in text if not c.isascii()]
    assert "\\u00d7" in text and "Writing\\u2026" in text  # escaped, not dropped
