"""The static site answers in a real browser with no Inkwell running (`inkwell export --static`).

The demo blog, plus one hostile post (markup and a script in its title and text, a `javascript:` address),
is ingested and exported with the real CLI into a temp folder, served by Python's http.server on
127.0.0.1, and asked in headless Chromium: a demo question gets the author's sentences, each found
verbatim in its post, under a link to the post's address with a text fragment; an off-topic one gets the
honest decline; the hostile post's text shows as text and its address never becomes a link. The page
fetches nothing but its own folder.

The same folder also puts the server's widget on a static blog (`widget.js` with `data-static`): a blog
page beside the folder, served from the same 127.0.0.1 server, opens the panel, clicks one of the owner's
starters, asks a demo question and an off-topic one, and keeps the conversation on the blog's next page;
answers are the engine's, drawn by the widget, with no thumbs or note (nothing is kept).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest

from core.answer.owner import save_owner
from core.config import Settings
from core.ingest import ingest_paths
from core.store import Store
from core.text.labels import labels
from tests.conftest import DEMO, GERMAN_POSTS, write
from tests.e2e_support import app_environ, launch_chromium
from tests.static_support import LOAD_TIMEOUT, ask, serve_folder, static_page

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
GREETING = "Ask me about the workshop."
STARTERS = ["How does she pick wood at the sawmill?", "What books shaped her the most?", "Why keep a blog?"]


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
    save_owner(Store(db), {"greeting": GREETING, "starters": STARTERS})  # the widget's welcome
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
def driver():
    """Playwright, one for the module: the page and the blog below each launch their own Chromium."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        yield playwright


@pytest.fixture(scope="module")
def page(site: Path, driver):
    errors: list[str] = []
    outside: list[str] = []
    with serve_folder(site) as url, static_page(driver, url, errors, outside) as page:
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
    # The passage goes on into the post's next section under its heading, as on the server.
    headings = [q["section"] for g in reply["groups"] for q in g["quotes"] if q.get("section")]
    assert headings == ["Reason one: Ezra's logbook"], reply["groups"]
    assert page.inner_text("#inkwell-answer .inkwell-section") == headings[0]


def test_an_off_topic_question_gets_the_honest_decline(page):
    reply = ask(page, OFF_TOPIC)
    assert reply["mode"] == "none"
    assert reply["text"].startswith("I haven't written about that")
    page.evaluate("document.getElementById('inkwell-answer').removeAttribute('data-mode')")
    submit(page, OFF_TOPIC)
    assert "I haven't written about that" in page.inner_text("#inkwell-answer")


def test_a_refused_question_says_what_to_do_as_the_server_does(page):
    from playwright.sync_api import Error, expect

    for blank in ("   ", "\u200b\ufeff"):  # invisible characters only are empty too, as on the server
        page.fill("#inkwell-question", blank)
        page.click("#inkwell-form button")
        expect(page.locator("#inkwell-status")).to_have_text("The question is empty: please type a question.")
        page.evaluate("document.getElementById('inkwell-status').textContent = ''")
    page.fill("#inkwell-question", "x" * 1200)  # pasted: refused as typed, not cut to fit and answered
    page.click("#inkwell-form button")
    expect(page.locator("#inkwell-status")).to_contain_text("1,200 characters long")
    too_long = r"This question is 1,200 characters long, and questions are limited to 1,000\. Please ask"
    with pytest.raises(Error, match=too_long):
        ask(page, "x" * 1200)


def test_with_no_question_length_limit_a_long_question_is_answered(site, driver, tmp_path):
    """INKWELL_MAX_QUESTION_CHARS=0 means no limit, in the page as on the server."""
    unlimited = tmp_path / "site"
    shutil.copytree(site, unlimited)
    index = unlimited / "data" / "index.json"
    data = json.loads(index.read_text(encoding="utf-8"))
    data["settings"]["max_question_chars"] = 0
    index.write_text(json.dumps(data), encoding="utf-8")
    with serve_folder(unlimited) as url, static_page(driver, url) as page:
        reply = ask(page, QUESTION + " " + "x" * 1200)
    assert reply["mode"] in ("extractive", "none"), reply


def test_a_word_written_otherwise_is_found_by_meaning_as_on_the_server(page):
    # The posts say "color": the server's bar finds "colour" by meaning (core/answer/near_words.py) and
    # answers; the page fetches the exported words' vectors and does the same, rather than declining.
    reply = ask(page, "What colour is Ezra's step stool painted, and why that colour?")
    assert reply["verdict"]["missing"] == ["colour"]
    assert reply["verdict"]["near"]["colour"] > 0.9
    assert reply["mode"] == "extractive", reply["verdict"]
    assert reply["groups"][0]["post"] == "shaker-step-stool"
    fetched = page.evaluate("performance.getEntriesByType('resource').map((e) => e.name)")
    assert any(name.endswith("/data/words.i8") for name in fetched)


def test_a_words_table_that_failed_to_load_is_fetched_again(site, driver):
    # One failed download kept failing every question that needed the words until a reload; now that
    # question reads words as written, and the next one fetches the table again.
    question = "What colour is Ezra's step stool painted, and why that colour?"
    with serve_folder(site) as url, static_page(driver, url) as fresh:
        failed: list[str] = []

        def abort_once(route):
            if not failed:
                failed.append(route.request.url)
                route.abort()
            else:
                route.continue_()

        fresh.route("**/data/words.json", abort_once)
        first = ask(fresh, question)
        assert failed and first["verdict"]["near"] == {}  # answered or declined, no error
        second = ask(fresh, question)
        assert second["verdict"]["near"]["colour"] > 0.9 and second["mode"] == "extractive"


@pytest.mark.parametrize(
    ("name", "cut"),
    [("data/vectors.i8", 5000), ("data/index.json", 20000)],
    ids=["vectors-cut-short", "index-cut-short"],
)
def test_a_damaged_data_file_is_named_with_what_to_do(site, driver, tmp_path, name, cut):
    # A file of the folder cut short (a failed upload): the vectors were read as they were and every
    # question got "I haven't written about that"; a cut index said only "Expected ':' after property
    # name in JSON". Now the page names the file and says to export again, and asks nothing.
    from playwright.sync_api import expect

    broken = tmp_path / "site"
    shutil.copytree(site, broken)
    damaged = broken / name
    damaged.write_bytes(damaged.read_bytes()[:cut])
    with serve_folder(broken) as url:
        browser = launch_chromium(driver)
        try:
            page = browser.new_page()
            page.goto(url + "index.html")
            status = page.locator("#inkwell-status")
            expect(status).not_to_have_text("Loading the assistant…", timeout=LOAD_TIMEOUT)
            expect(status).to_contain_text(f"{name} is damaged")
            expect(status).to_contain_text("export the site again")
            assert page.get_attribute("#inkwell-form", "data-ready") is None
        finally:
            browser.close()


@pytest.fixture(scope="module")
def german_site(tmp_path_factory: pytest.TempPathFactory, embedder) -> Path:
    """A German blog's export (three posts, MiniLM as static mode needs): the folder holding site/."""
    root = tmp_path_factory.mktemp("static-de")
    for name, text in GERMAN_POSTS.items():
        write(root / "posts" / f"{name}.txt", text)
    db = root / "db"
    settings = Settings.load({"data_dir": db, "embed_model": "all-MiniLM-L6-v2"}, environ={})
    report = ingest_paths([root / "posts"], settings, embedder=embedder)
    assert report.ok, report.summary()
    done = subprocess.run(
        [sys.executable, "-m", "core.cli", "export", "--static", str(root / "site"), "--data-dir", str(db)],
        capture_output=True,
        text=True,
        env=app_environ(),
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    return root


@pytest.fixture(scope="module")
def german_page(german_site: Path, driver):
    """The German blog's page, opened."""
    with serve_folder(german_site / "site") as url, static_page(driver, url) as page:
        yield page


def test_a_german_readers_refused_question_is_refused_in_german(german_page):
    """The page refused an empty or over-long question in English on a German blog; the server's chat
    and API refuse in the reader's language (core/text/labels.py), and so does the page now."""
    from playwright.sync_api import expect

    german = labels("de")
    german_page.fill("#inkwell-question", "   ")  # nothing to tell the language by: the blog's
    german_page.click("#inkwell-form button")
    expect(german_page.locator("#inkwell-status")).to_have_text(german["question_empty"])
    german_page.fill("#inkwell-question", "Warum füttern Sie die Bienen im Winter? " * 30)
    german_page.click("#inkwell-form button")
    expected = german["question_too_long"].split("{length}")[0]  # "Diese Frage ist "
    expect(german_page.locator("#inkwell-status")).to_contain_text(expected)
    expect(german_page.locator("#inkwell-status")).to_contain_text("1.000")  # as German writes a thousand


def test_a_german_blogs_page_says_its_fixed_words_in_german(german_page):
    # The page said "Ask a question about the posts", "From …:", "Searched for: …" on a German blog.
    german = labels("de")
    assert german_page.get_attribute("html", "lang") == "de"
    assert german_page.inner_text("h1") == german["page_title"]
    assert german_page.get_attribute("#inkwell-question", "placeholder") == german["placeholder"]
    assert german_page.inner_text("#inkwell-form button") == german["ask"]
    if german_page.is_visible("#inkwell-new"):  # a conversation of its own
        german_page.click("#inkwell-new")
    answer = turn(german_page, "Was füttern Sie im September den Bienen?")
    assert "Aus Bienen im Winter:" in answer and german["quoted"] in answer, answer
    follow = turn(german_page, "Und wie viel davon bekommt jedes Volk?")
    assert "Gesucht nach: Was füttern Sie im September den Bienen? Und wie viel" in follow, follow
    assert not any(english in answer + follow for english in ("From ", "Searched for", "author's own"))
    german_page.click("#inkwell-new")


def test_the_static_widget_on_a_german_blog_speaks_german(german_site: Path, driver):
    """The widget (data-static) takes the blog's labels from data/welcome.json, each answer's from it."""
    from playwright.sync_api import expect

    german = labels("de")
    write(
        german_site / "blog" / "index.html",
        "<!doctype html><html><head><meta charset=utf-8><title>Bienen</title></head><body><h1>Bienen</h1>"
        '<script src="/site/widget.js" defer data-static data-title="Frag die Imkerin"></script></body></html>',
    )
    with serve_folder(german_site) as url:
        browser = launch_chromium(driver)
        try:
            page = browser.new_page()
            page.set_default_timeout(LOAD_TIMEOUT)
            page.goto(url + "blog/index.html")
            page.locator(f"{WIDGET} button.btn", has_text=german["ask"]).click()  # was "Ask"
            box = page.locator(f"{WIDGET} input[aria-label='{german['question']}']")
            expect(box).to_have_attribute("placeholder", german["placeholder"])
            answer = widget_ask(page, "Was füttern Sie im September den Bienen?", label=german["question"])
            assert german["sources"] in answer.inner_text() and "From:" not in answer.inner_text()
            assert "Aus Bienen im Winter:" in answer.inner_text() and "From " not in answer.inner_text()
            follow = widget_ask(page, "Und wie viel davon bekommt jedes Volk?", label=german["question"])
            assert flat(follow.inner_text()).startswith("Gesucht nach: Was füttern Sie im September")
        finally:
            browser.close()


def test_a_decline_on_a_german_blog_is_german_down_to_the_closest_posts(german_page):
    # The chat on the server says "Am nächsten kommen diese Beiträge:" under a German decline; the page
    # said "The closest posts:" under "Darüber habe ich nicht geschrieben, …".
    submit(german_page, "Wie repariere ich ein Fahrrad?")
    answer = german_page.inner_text("#inkwell-answer")
    assert "Darüber habe ich nicht geschrieben" in answer
    assert "Am nächsten kommen diese Beiträge:" in answer and "The closest posts" not in answer


def test_a_german_blogs_answer_carries_its_lang(german_page):
    """The German sentences quoted and a German decline carried no lang of their own: a screen reader
    read them in the page's language. Each now says its own, whatever the page's words are in."""
    german_page.evaluate("document.getElementById('inkwell-answer').removeAttribute('data-mode')")
    submit(german_page, "Wie viel Zuckersirup bekommt ein Volk?")
    assert german_page.get_attribute("#inkwell-answer", "data-mode") == "extractive"
    assert german_page.eval_on_selector_all(".inkwell-quote", "qs => qs.map(q => q.lang)") == ["de"]
    assert german_page.get_attribute("html", "lang") == "de"  # the page's words: the blog's language
    german_page.evaluate("document.getElementById('inkwell-answer').removeAttribute('data-mode')")
    submit(german_page, "Wie repariere ich ein Fahrrad?")
    assert german_page.get_attribute("#inkwell-answer .inkwell-decline", "lang") == "de"
    # The engine's reply to a static blog's widget says it too (the widget sets it as the server's).
    widget_reply = "q => import(new URL('inkwell-static.mjs', location.href)).then(m => m.widgetReply(q))"
    assert german_page.evaluate(widget_reply, "Wie viel Zuckersirup bekommt ein Volk?")["lang"] == "de"
    assert german_page.evaluate(widget_reply, "Wie repariere ich ein Fahrrad?")["lang"] == "de"


def test_each_question_of_the_conversation_is_a_heading(german_page):
    """The questions were bold paragraphs: a screen reader's reader could not move from one turn to the
    next by headings, only through every sentence of the answers."""
    asked = ["Wie viel Zuckersirup bekommt ein Volk?", "Wann träufle ich Oxalsäure?"]
    for question in asked:
        german_page.evaluate("document.getElementById('inkwell-answer').removeAttribute('data-mode')")
        submit(german_page, question)
    headings = german_page.eval_on_selector_all("main h1, main h2", "hs => hs.map(h => h.textContent)")
    assert headings[0] == labels("de")["page_title"] and headings[-2:] == asked


def test_an_english_question_on_a_german_blog_is_told_it_cannot_be_read_as_on_the_server(german_page):
    # The page (like the server) told an English reader "I haven't written about that" about bees the
    # German posts are all about: MiniLM reads German word by word only, so it cannot tell.
    from core.answer.reply import CANNOT_READ_OTHER

    first = "Which plant do you sow every year?"
    reply = ask(german_page, first)
    assert reply["mode"] == "none" and reply["text"] == CANNOT_READ_OTHER["en"]
    conversation = [{"role": "user", "content": first}, {"role": "assistant", "content": reply["text"]}]
    more = german_page.evaluate("([q, c]) => window.inkwell.ask(q, c)", ["tell me more", conversation])
    assert more["query"] == first and more["text"] == CANNOT_READ_OTHER["en"]  # still unreadable
    assert ask(german_page, "Come si cura la varroa?")["text"] == CANNOT_READ_OTHER["it"]


def turn(page, question: str) -> str:
    """Ask on the page as a reader does; the latest turn's text."""
    page.evaluate("document.getElementById('inkwell-answer').removeAttribute('data-mode')")
    submit(page, question)
    return flat(page.inner_text("#inkwell-answer"))


def test_the_page_keeps_the_conversation_and_reads_follow_ups_from_it(page):
    if page.is_visible("#inkwell-new"):
        page.click("#inkwell-new")
    assert page.inner_text("#inkwell-conversation") == "" and page.inner_text("#inkwell-answer") == ""

    first = ask(page, "What is the mistake jar?")
    shown = turn(page, "What is the mistake jar?")
    assert shown.startswith("What is the mistake jar?") and "Searched for" not in shown
    assert page.input_value("#inkwell-question") == ""  # cleared for the next question

    # "tell me more": the same question searched again, and a passage the reader was not given yet.
    shown = turn(page, "tell me more")
    assert "Searched for: What is the mistake jar?" in shown
    opening = flat(first["groups"][0]["quotes"][0]["text"])
    assert opening not in shown
    assert opening in flat(page.inner_text("#inkwell-conversation"))  # the first turn moved up, kept
    conversation = [
        {"role": "user", "content": "What is the mistake jar?"},
        {"role": "assistant", "content": " ".join(q["text"] for g in first["groups"] for q in g["quotes"])},
    ]
    more = page.evaluate("([q, c]) => window.inkwell.ask(q, c)", ["tell me more", conversation])
    assert more["followUp"] == "more" and more["mode"] == "extractive"
    assert not {q["text"] for g in more["groups"] for q in g["quotes"][:1]} & {
        q["text"] for g in first["groups"] for q in g["quotes"]
    }

    # Nor does it run on into what was given: the sawmill's next passage used to end in the first answer.
    sawmill = ask(page, "How do you pick wood at the sawmill?")
    given = [q["text"] for g in sawmill["groups"] for q in g["quotes"]]
    conversation = [
        {"role": "user", "content": "How do you pick wood at the sawmill?"},
        {"role": "assistant", "content": " ".join(given)},
    ]
    more = page.evaluate("([q, c]) => window.inkwell.ask(q, c)", ["tell me more", conversation])
    assert more["mode"] == "extractive"
    assert not {q["text"] for g in more["groups"] for q in g["quotes"]} & set(given)

    # A follow-up that points back is searched with the question before it.
    shown = turn(page, "How much money is in it now?")
    assert "Searched for: What is the mistake jar? How much money is in it now?" in shown

    # A new conversation forgets the old one: "tell me more" has nothing to go on, so it is asked as is.
    page.click("#inkwell-new")
    assert page.inner_text("#inkwell-conversation") == "" and page.is_hidden("#inkwell-new")
    assert "Searched for" not in turn(page, "tell me more")


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


# The static widget on a blog -------------------------------------------------------------------------------

WIDGET = "[data-inkwell]"  # the widget's host element; Playwright's CSS reaches into its open shadow root


@pytest.fixture(scope="module")
def blog(site: Path, driver):
    """Two pages of a plain blog beside the export, each with the static widget's tag; the blog and the
    export served together on 127.0.0.1 (the folder at /site/, as a blog serves it at /ask/)."""
    for name, other in (("index.html", "other.html"), ("other.html", "index.html")):
        write(
            site.parent / "blog" / name,
            f"<!doctype html><html><head><meta charset=utf-8><title>{name}</title></head><body>"
            f'<h1>{name}</h1><a id="next" href="{other}">Next post</a>'
            f'<script src="/{site.name}/widget.js" defer data-static data-title="Ask Mara"></script>'
            "</body></html>",
        )
    errors: list[str] = []
    outside: list[str] = []
    with serve_folder(site.parent) as url:
        browser = launch_chromium(driver)
        try:
            page = browser.new_page()
            page.set_default_timeout(LOAD_TIMEOUT)  # the first question waits for the model to load
            page.on("request", lambda r: None if r.url.startswith(url) else outside.append(r.url))
            page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
            page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url}"))
            page.goto(url + "blog/index.html")
            yield page
        finally:
            browser.close()
    assert not errors, errors
    assert not outside, f"the widget fetched from elsewhere: {outside}"


def widget_ask(page, question: str = "", starter: str = "", label: str = "Your question"):
    """Ask in the widget (typed into the box named `label`, or by clicking a starter) and return the
    answer's box once complete."""
    before = page.locator(f"{WIDGET} .log > div:not(.welcome)").count()
    if starter:
        page.locator(f"{WIDGET} .starter", has_text=starter).click()
    else:
        page.fill(f"{WIDGET} input[aria-label='{label}']", question)
        page.press(f"{WIDGET} input[aria-label='{label}']", "Enter")
    page.wait_for_function(
        """n => { const r = document.querySelector('[data-inkwell]').shadowRoot;
        return !r.querySelector('form button').disabled && r.querySelectorAll('.log > div:not(.welcome)').length > n; }""",
        arg=before,
    )
    return page.locator(f"{WIDGET} .log > div:not(.welcome)").nth(before)


def flat(text: str) -> str:
    return " ".join(text.split())


def test_the_static_widget_answers_on_a_blog_with_no_server(blog):
    page = blog
    page.click(f"{WIDGET} button.btn")
    assert page.inner_text(f"{WIDGET} header span") == "Ask Mara"
    page.locator(f"{WIDGET} .welcome", has_text=GREETING).wait_for()
    assert page.locator(f"{WIDGET} .starter").all_inner_texts() == STARTERS

    # A starter is asked at one click, answered with the author's sentences.
    box = widget_ask(page, starter=STARTERS[0])
    assert page.locator(f"{WIDGET} p.q").last.inner_text() == STARTERS[0]
    assert box.locator("p.a").inner_text().startswith("From ")
    assert box.locator("a").first.get_attribute("href").startswith(BLOG)

    # A demo question: each quoted sentence is in the answer and, verbatim, in its post; the source
    # links to the post at its first quote.
    box = widget_ask(page, QUESTION)
    reply = ask(page, QUESTION)  # the engine the widget imported, asked directly
    assert reply["mode"] == "extractive"
    shown = flat(box.locator("p.a").inner_text())
    for group in reply["groups"]:
        assert f"From {flat(group['title'])}:" in shown
        for quote in group["quotes"]:
            assert flat(quote["text"]) in shown and flat(quote["text"]) in post_text(group["post"])
    href = box.locator("a").first.get_attribute("href")
    address, _, fragment = href.partition("#:~:text=")
    first = reply["groups"][0]["quotes"][0]["text"]
    assert address == f"{BLOG}{reply['groups'][0]['post']}" and unquote(fragment) == first
    assert flat(first) in post_text(reply["groups"][0]["post"])

    # "tell me more": the widget passes its conversation, so the engine goes on with the last answer.
    box = widget_ask(page, "tell me more")
    more = flat(box.locator("p.a").inner_text())
    assert more.startswith("From ") and flat(first) not in more
    assert f"Searched for: {QUESTION}" in flat(box.inner_text())  # what was searched, as on a server

    # Off topic: the honest decline, with the closest posts.
    box = widget_ask(page, OFF_TOPIC)
    assert box.locator("p.a").inner_text().startswith("I haven't written about that")
    assert "The closest posts:" in box.inner_text()

    # Nothing to rate and no note on what is kept: there is no server to keep it.
    assert page.locator(f"{WIDGET} .rate").count() == 0
    assert page.locator(f"{WIDGET} .note").is_hidden()

    # The conversation follows the reader to the blog's next page.
    page.click("#next")
    page.wait_for_url("**/other.html")
    page.locator(f"{WIDGET} p.q", has_text=OFF_TOPIC).wait_for()
    assert page.locator(f"{WIDGET} p.q").all_inner_texts() == [
        STARTERS[0],
        QUESTION,
        "tell me more",
        OFF_TOPIC,
    ]
    assert page.locator(f"{WIDGET} .starter").count() == 0


def test_hostile_post_text_is_shown_as_text_in_the_static_widget(blog):
    page = blog
    if page.locator(f"{WIDGET} .panel").is_hidden():
        page.click(f"{WIDGET} button.btn")
    box = widget_ask(page, HOSTILE_QUESTION)
    shown = box.inner_text()
    assert "<img src=x onerror=" in shown and "<img src=x onerror=document.title=7> Night Trains" in shown
    assert page.locator(f"{WIDGET} img, {WIDGET} script").count() == 0
    assert page.title() not in ("pwned", "7")
    hrefs = box.locator("a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    assert not any((h or "").startswith("javascript:") for h in hrefs)
