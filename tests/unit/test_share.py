"""The widget's tag the owner pastes into the blog (core/serve/share.py)."""

from __future__ import annotations

from core.serve.share import app_origin, widget_tag


def test_the_apps_origin_is_where_the_widget_is_served():
    assert app_origin("https://inkwell.example/posts") == "https://inkwell.example"
    assert app_origin("http://localhost:8501/") == "http://localhost:8501"
    assert app_origin(None) is None and app_origin("") is None and app_origin("file:///x") is None


def test_the_tag_escapes_the_title_and_the_address():
    assert widget_tag("https://inkwell.example/", "Ask Mara") == (
        '<script src="https://inkwell.example/widget.js" defer data-title="Ask Mara"></script>'
    )
    tag = widget_tag("https://inkwell.example", '"><img src=x onerror=alert(1)>')
    assert "<img" not in tag and 'data-title="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"' in tag
