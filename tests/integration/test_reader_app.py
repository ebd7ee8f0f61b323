"""The readers' side of the app under Streamlit's AppTest: the reader page (/read) with quoted sentences
marked and hostile post text inert, citations that open the post (its blog address, else /read, never
the inspector), the owner's diagnostics hidden from readers, and the address editor on the Ingest page."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

from core.config import Settings
from core.ingest import edit_chunk, ingest_posts
from core.models import Block, Post
from core.store import Store
from tests.conftest import button, open_app, select_rows, shown, texts

HOSTILE = "<img src=x onerror=alert(1)>"
SWARM = "Swarming season starts in May."
LINK_RE = re.compile(r"\]\(([^)\s]+)\)")


def links(text: str) -> list[str]:
    return LINK_RE.findall(str(text).replace("\\", ""))


def ask(at, question: str):
    at.chat_input[0].set_value(question).run()
    assert not at.exception and not at.error
    return at.chat_message[1]


def reply_text(reply) -> str:
    kinds = (reply.markdown, reply.caption)
    return "\n".join(t for kind in kinds for t in texts(kind)).replace("\\", "")


def test_reader_page_marks_the_quoted_sentence_and_runs_no_post_markup(data_dir, embedder):
    settings = Settings.load({"data_dir": data_dir}, environ={})
    text = f"{HOSTILE} My first line.\n\nThe <script>alert(2)</script> bees swarm in May. Then they rest."
    post = Post("evil", f"Title {HOSTILE}", [Block(p) for p in text.split("\n\n")], raw=text, source="e.txt")
    assert ingest_posts([post], settings, store=Store(data_dir), embedder=embedder).ok
    at = open_app()
    at.query_params["post"] = "evil"
    at.query_params["q"] = ["The <script>alert(2)</script> bees swarm in May."]
    at.switch_page("pages/read.py").run()
    assert not at.exception
    assert shown(at.title) == [f"Title {HOSTILE}"]  # shown as text: the title is Markdown-escaped
    assert "<img" not in at.title[0].value.replace("\\<", "")
    bodies = [h.proto.body for h in at.html if "inkwell-post" in h.proto.body]
    assert len(bodies) == 1
    body = bodies[0]
    assert "<img" not in body and "<script" not in body and "&lt;img src=x onerror=alert(1)&gt;" in body
    assert (
        '<mark class="inkwell-quote">The &lt;script&gt;alert(2)&lt;/script&gt; bees swarm in May.</mark>'
        in body
    )
    scripts = [h for h in at.html if "scrollIntoView" in h.proto.body]
    assert len(scripts) == 1 and "evil" not in scripts[0].proto.body  # our script alone, no post text


def test_a_list_reads_as_a_list_with_its_quoted_item_marked(data_dir, embedder):
    from core.parse import parse_text

    settings = Settings.load({"data_dir": data_dir}, environ={})
    text = "My sharpening kit:\n\n- A coarse stone for chips.\n- A fine stone for the edge.\n\nThat is all."
    post = parse_text(text, "Kit", format="markdown")
    assert ingest_posts([post], settings, store=Store(data_dir), embedder=embedder).ok
    at = open_app()
    at.query_params["post"] = post.post_id
    at.query_params["q"] = ["A fine stone for the edge."]
    at.switch_page("pages/read.py").run()
    assert not at.exception
    (body,) = [h.proto.body for h in at.html if "inkwell-post" in h.proto.body]
    assert "<p>My sharpening kit:</p>" in body
    assert (
        '<ul><li>A coarse stone for chips.</li><li><mark class="inkwell-quote">A fine stone for the edge.'
        "</mark></li></ul>" in body
    ), body


def test_a_quote_from_a_chunk_the_owner_edited_is_marked(data_dir, embedder):
    """An answer quotes the chunks; after an edit in the inspector they differ from the post as written,
    and the reader page shows the post as its chunks say rather than "edited since"."""
    settings = Settings.load({"data_dir": data_dir}, environ={})
    text = "I sharpen at 30 degrees.\n\nThen I strop the edge."
    post = Post("sharp", "Sharpening", [Block(p) for p in text.split("\n\n")], raw=text, source="s.txt")
    store = Store(data_dir)
    assert ingest_posts([post], settings, store=store, embedder=embedder).ok
    (chunk,) = store.list_chunks("sharp", ["chunk_id", "text"])
    edited = "I sharpen at 30 degrees, checked with a protractor."
    edit_chunk(chunk["chunk_id"], settings, text=edited, store=store, embedder=embedder)
    at = open_app()
    at.query_params["post"] = "sharp"
    at.query_params["q"] = [edited]
    at.switch_page("pages/read.py").run()
    assert not at.exception
    (body,) = [h.proto.body for h in at.html if "inkwell-post" in h.proto.body]
    assert f'<mark class="inkwell-quote">{edited}</mark>' in body
    assert not any("edited since" in c for c in shown(at.caption))


def test_reader_page_for_a_missing_post_says_so(data_dir):
    at = open_app()
    at.query_params["post"] = "gone"
    at.switch_page("pages/read.py").run()
    assert not at.exception and texts(at.title) == ["Post not found"]


def test_every_citation_opens_the_post_never_the_inspector(corpus):
    corpus.set_post_url("walks", "https://blog.example/walks/")
    at = open_app()
    reply = ask(at, "When does swarming season start?")
    body = reply.markdown[0].value
    (first,) = links(body)[:1]
    assert first.startswith("read?") and parse_qs(urlsplit(first).query)["post"] == ["bees"]
    assert SWARM in parse_qs(urlsplit(first).query)["q"]
    sources = next(t for t in texts(reply.markdown) if t.startswith("**Sources**"))
    assert all(link.startswith("read?") for link in links(sources))
    at.switch_page("pages/read.py")  # where the link leads: the sentence marked
    at.query_params.clear()
    at.query_params["post"] = "bees"
    at.query_params["q"] = [SWARM]
    at.run()
    assert any(f'<mark class="inkwell-quote">{SWARM}</mark>' in h.proto.body for h in at.html)

    at = open_app()
    reply = ask(at, "Why do you walk along the canal every morning?")
    every = [link for t in texts(reply.markdown) for link in links(t)]
    assert every and not any("chunks?" in link for link in every)
    walks = [link for link in every if "blog.example" in link]
    assert walks and all(link.startswith("https://blog.example/walks/#:~:text=") for link in walks)

    at = open_app()
    reply = ask(at, "Who won the football world cup in 2018?")
    closest = [link for t in texts(reply.markdown) for link in links(t)]
    assert closest and all(link.startswith(("read?post=", "https://blog.example/walks/")) for link in closest)


def owner_details(at, reply) -> dict[str, bool]:
    """Which of the owner's diagnostics this run shows."""
    sidebar = "\n".join(shown(at.sidebar.caption))
    return {
        "relevance": "· relevance" in reply_text(reply),
        "excerpts": any("excerpt" in e.label for e in reply.expander),
        "advanced": any(e.label == "Advanced retrieval settings" for e in at.sidebar.expander),
        "embedder": "**Embedder:**" in sidebar,
        "table": "**Table:**" in sidebar,
        "overrides": any(str(b.label).replace("\\", "").startswith("Search ") for b in at.button),
    }


def test_readers_see_no_machinery_until_the_owner_signs_in(corpus):
    at = open_app(admin_password="pw")
    assert not [t for t in at.sidebar.toggle if t.label == "Details"]  # signing in is the switch
    reply = ask(at, "How is the sourdough loaf made?")
    assert not any(owner_details(at, reply).values()), owner_details(at, reply)
    assert "Sources" in reply_text(reply) or reply.markdown  # the answer and its sources stay

    at.switch_page("pages/posts.py").run()
    at.text_input[0].input("pw")
    button(at, "Unlock").click().run()
    at.switch_page("pages/chat.py").run()
    reply = at.chat_message[1]  # the same answer, drawn again for the owner
    seen = owner_details(at, reply)
    assert seen["relevance"] and seen["excerpts"] and seen["advanced"] and seen["embedder"], seen


def test_single_user_mode_keeps_the_machinery_behind_one_details_toggle(corpus):
    at = open_app()
    reply = ask(at, "How is the sourdough loaf made?")
    assert not any(owner_details(at, reply).values()), owner_details(at, reply)
    at.sidebar.toggle(key="show_details").set_value(True).run()
    seen = owner_details(at, at.chat_message[1])
    assert seen["relevance"] and seen["excerpts"] and seen["advanced"] and seen["embedder"], seen
    at.switch_page("pages/posts.py").run()  # owner pages always show the table's details
    assert "**Table:**" in "\n".join(shown(at.sidebar.caption))
    at.switch_page("pages/chat.py").run()
    assert at.sidebar.toggle(key="show_details").value is True  # kept across pages


def test_the_owner_edits_a_posts_address_on_the_ingest_page(corpus):
    chunks_version = corpus.versions().chunks
    at = open_app("pages/posts.py")
    titles = list(at.dataframe[0].value["title"])
    assert "url" in at.dataframe[0].value.columns
    select_rows(at, "posts_table", [titles.index("On Bees")])
    field = at.text_input(key="post_url_bees")
    field.input("javascript:alert(1)")
    button(at, "Save address").click().run()
    assert any("Not saved" in e for e in shown(at.error)) and corpus.get_post("bees")["url"] == ""
    at.text_input(key="post_url_bees").input("/bees/")  # a path, but no site URL is set
    button(at, "Save address").click().run()
    assert any("site's address" in e for e in shown(at.error))
    at.text_input(key="post_url_bees").input("https://blog.example/bees/")
    button(at, "Save address").click().run()
    assert not at.exception and corpus.get_post("bees")["url"] == "https://blog.example/bees/"
    assert "Saved the address of On Bees." in shown(at.success)
    assert any("address of “On Bees”" in b.label for b in at.button)  # undoable, as its own change
    assert corpus.versions().chunks == chunks_version  # nothing re-embedded


def test_old_stored_messages_without_addresses_still_link_to_the_reader_page():
    from pages.shared.replies import quotes_markdown

    body = quotes_markdown([{"post_id": "bees", "title": "On Bees", "text": SWARM}])  # no "url" key
    assert links(body) == [f"read?post=bees&q={SWARM.replace(' ', '+')}"]
