"""The static site answers in a real browser with no Inkwell running (`inkwell export --static`).

The demo blog, plus one hostile post (markup and a script in its title and text, a `javascript:` address),
is ingested and exported with the real CLI into a temp folder, served by Python's http.server on
127.0.0.1, and asked in headless Chromium: a demo question gets the author's sentences, each found
verbatim in its post, under a link to the post's address with a text fragment; an off-topic one gets the
honest decline; the hostile post's text shows as text and its address never becomes a link. The page
fetches nothing but its own folder.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest

from core.config import Settings
from core.ingest import ingest_paths
from core.store import Store
from tests.conftest import DEMO, write
from tests.e2e_support import app_environ
from tests.static_support import ask, serve_folder, static_page

pytestmark = pytest.mark.browser

QUESTION = "Why did you start the blog?"
OFF_TOPIC = "What is the capital of Australia?"
HOSTILE_QUESTION = "Which night train did you take to Rome?"
HOSTILE_TITLE = "<img src=x onerror=document.title=7> Night Trains"
HOSTILE_TEXT = (
    "I took the night train from Vienna to Rome in the winter of 2019 <img src=x "
    "onerror=\"document.title='pwned'\"><script>document.title='pwned'</script> and slept most of the way."
)
BLOG = "https://blog.example/"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, embedder) -> Path:
    """The demo blog and the hostile post, ingested and exported with `inkwell export --static`."""
    root = tmp_path_factory.mktemp("static")
    posts = root / "posts"
    write(posts / "night-trains.txt", f"{HOSTILE_TITLE}\n\n{HOSTILE_TEXT}\n")  # plain text: kept as written
    db = root / "db"
    settings = Settings.load({"data_dir": db}, environ={})
    report = ingest_paths([DEMO / "posts", posts], settings, embedder=embedder)
    assert report.ok, report.summary()
    add_addresses(Store(db))
    out = root / "site"
    done = subprocess.run(
        [sys.executable, "-m", "core.cli", "export", "--static", str(out), "--json", "--data-dir", str(db)],
        capture_output=True,
        text=True,
        env=app_environ(),
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["chunks"] > 100
    return out


def add_addresses(store: Store) -> None:
    """Posts' web addresses, as the blog connection stores them (a `url` column): the demo's on one
    host, the hostile post's a `javascript:` one."""
    table = store.posts
    if "url" not in table.schema.names:
        table.add_columns({"url": "cast('' as string)"})
    table.update(where="post_id != 'night-trains'", values_sql={"url": f"concat('{BLOG}', post_id)"})
    table.update(where="post_id = 'night-trains'", values={"url": "javascript:document.title='pwned'"})


@pytest.fixture(scope="module")
def page(site: Path):
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    outside: list[str] = []
    with (
        sync_playwright() as playwright,
        serve_folder(site) as url,
        static_page(playwright, url, errors, outside) as page,
    ):
        yield page
    assert not errors, errors
    assert not outside, f"the page fetched from elsewhere: {outside}"


def submit(page, question: str) -> None:
    page.fill("#inkwell-question", question)
    page.click("#inkwell-form button")
    page.wait_for_selector("#inkwell-answer[data-mode]", state="attached", timeout=60_000)


def post_text(post_id: str) -> str:
    [path] = [p for p in (DEMO / "posts").rglob("*") if p.stem == post_id]
    return " ".join(path.read_text(encoding="utf-8").split())


def test_a_demo_question_gets_the_authors_sentences_verbatim_with_fragment_links(page):
    reply = ask(page, QUESTION)
    assert reply["mode"] == "extractive", reply["verdict"]
    assert reply["groups"][0]["post"] == "why-this-blog-exists"
    for group in reply["groups"]:
        text = post_text(group["post"])
        for quote in group["quotes"]:
            assert " ".join(quote["text"].split()) in text  # the author's own words, unchanged

    page.evaluate("document.getElementById('inkwell-answer').removeAttribute('data-mode')")
    submit(page, QUESTION)
    shown = page.inner_text("#inkwell-answer")
    first = reply["groups"][0]["quotes"][0]["text"]
    assert " ".join(first.split()) in " ".join(shown.split())
    href = page.get_attribute("#inkwell-answer a", "href")
    address, _, fragment = href.partition("#:~:text=")
    assert address == f"{BLOG}why-this-blog-exists"
    assert unquote(fragment) == first


def test_an_off_topic_question_gets_the_honest_decline(page):
    reply = ask(page, OFF_TOPIC)
    assert reply["mode"] == "none"
    assert reply["text"].startswith("I haven't written about that")
    page.evaluate("document.getElementById('inkwell-answer').removeAttribute('data-mode')")
    submit(page, OFF_TOPIC)
    assert "I haven't written about that" in page.inner_text("#inkwell-answer")


def test_hostile_post_text_is_shown_as_text(page):
    page.evaluate("document.getElementById('inkwell-answer').removeAttribute('data-mode')")
    submit(page, HOSTILE_QUESTION)
    answer = page.locator("#inkwell-answer")
    shown = answer.inner_text()
    assert "<img src=x onerror=" in shown  # the characters, as written
    assert answer.locator("img, script").count() == 0
    assert "Night Trains" in shown and "<img src=x onerror=document.title=7>" in shown  # the title too
    assert page.title() not in ("pwned", "7")
    # Its javascript: address is no link at all.
    assert all(
        not (a or "").startswith("javascript:")
        for a in answer.locator("a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    )
