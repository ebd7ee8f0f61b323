"""The Ingest page's "Share on your blog" expander under Streamlit's AppTest: the owner gets the widget's
tag to copy, titled with the chat's title, and the blogs allowed to use it (or how to allow one); a
visitor who has not unlocked the owner pages gets neither."""

from __future__ import annotations

from core.answer.owner import save_owner
from core.store import Store
from tests.conftest import button, isolate_app, open_app, shown

PAGE = "pages/posts.py"
TITLE = 'Ask "Mara" & <friends>'
TAG = (
    '<script src="https://inkwell.example/widget.js" defer '
    'data-title="Ask &quot;Mara&quot; &amp; &lt;friends&gt;"></script>'
)


def codes(at) -> list[str]:
    return [str(c.value) for c in at.code]


def test_the_owner_gets_the_widget_tag_and_the_allowed_blogs(tmp_path, monkeypatch):
    db = isolate_app(monkeypatch, tmp_path / "db")
    save_owner(Store(db), {"chat_title": TITLE})
    monkeypatch.setenv("INKWELL_ALLOWED_ORIGINS", "https://blog.example, http://localhost:4000")
    at = open_app(PAGE)
    assert TAG in codes(at), codes(at)  # AppTest has no browser address: the placeholder to replace
    assert any("Replace https://inkwell.example" in c for c in shown(at.caption))
    assert "Blogs allowed to use it: `https://blog.example`, `http://localhost:4000`" in shown(at.markdown)
    assert any("INKWELL_ALLOWED_ORIGINS=https://blog.example" in c for c in shown(at.caption))
    # No admin password: readers who follow a citation into the app could open every page.
    assert any("No admin password is set" in w for w in shown(at.warning))


def test_with_no_blog_allowed_the_owner_is_told_how_to_allow_one(tmp_path, monkeypatch):
    isolate_app(monkeypatch, tmp_path / "db")
    at = open_app(PAGE)
    assert any("widget.js" in c and 'data-title="Ask ' in c for c in codes(at)), codes(at)
    assert any("No blog may use it yet" in w for w in shown(at.warning))


def test_a_visitor_does_not_get_the_tag(tmp_path, monkeypatch):
    isolate_app(monkeypatch, tmp_path / "db")
    at = open_app(PAGE, admin_password="pw")
    assert not any("widget.js" in c for c in codes(at))
    at.text_input[0].input("pw")
    button(at, "Unlock").click().run()
    assert any("widget.js" in c for c in codes(at))
    assert not any("No admin password is set" in w for w in shown(at.warning))  # the owner set one
