"""The Streamlit app through AppTest: real pages, real LanceDB in a temp dir, the real bundled embedder.

No mocks: the error-path test points the app at a closed loopback port, and the `llm` test talks to the
built-in llama.cpp server.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import socket

import pytest

from core.answer.reply import UNREACHABLE_NOTE
from core.config import Settings
from core.ingest import ingest_posts
from core.models import Hit
from core.store import Store
from core.text.labels import labels
from pages import shared
from tests.conftest import (
    APP_TIMEOUT,
    BEES,
    BREAD,
    button,
    counts_caption,
    everything,
    metrics,
    open_app,
    select_rows,
    shown,
    texts,
)

TIMEOUT = APP_TIMEOUT


def headers(table) -> dict[str, tuple[str, object]]:
    """A shown st.dataframe's columns: (header label, width) as sent to the browser."""
    return {
        name: (c.get("label", name), c.get("width")) for name, c in json.loads(table.proto.columns).items()
    }


def assert_headers_fit(table, columns) -> None:
    """These columns' headers are shown in full: a width in pixels that fits the label (Streamlit cuts a
    header to its column, e.g. "dense ran…" in a "small" column)."""
    shown_headers = headers(table)
    for column in columns:
        label, width = shown_headers[column]
        assert isinstance(width, int) and width >= shared.header_width(label), (column, label, width)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# Navigation and sidebar ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("page", "title"),
    [(None, "Ask the author"), ("pages/posts.py", "Ingest posts"), ("pages/chunks.py", "Inspect chunks")],
)
def test_each_page_renders(data_dir, page, title):
    at = open_app(page)
    assert texts(at.title) == [title]
    if page is None:  # a reader's page: the models and the table are the owner's details
        assert not any("Embedder" in c for c in shown(at.sidebar.caption))
        at.sidebar.toggle(key="show_details").set_value(True).run()
    captions = "\n".join(shown(at.sidebar.caption))
    # Readers get quotes with only the built-in model: the sidebar says so, and names the model as a trial
    assert "**Answers:** your own sentences, quoted" in captions and "**Answer model:**" not in captions
    assert "Offline built-in model (built-in SmolLM2-135M" in captions
    assert "**Embedder:** sentence-transformers/all-MiniLM-L6-v2" in captions
    assert "**Table:** 0 posts · 0 chunks" in captions
    assert "Single-user mode" in captions


def test_sidebar_names_a_configured_server_and_never_the_key(data_dir, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-testkey-0123456789abcdef")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://user:pw@127.0.0.1:9/v1?token=abc")
    at = open_app("pages/posts.py")  # the owner's page: a reader's chat names no model or server
    shown = everything(at)
    assert "gpt-4o-mini via http://127.0.0.1:9/v1" in shown
    assert "Offline built-in model" not in shown
    assert "sk-testkey" not in shown and "pw@" not in shown and "token" not in shown


def test_bad_settings_and_data_dir_are_clear_errors(data_dir, monkeypatch, tmp_path):
    monkeypatch.setenv("INKWELL_THRESHOLD", "2")
    at = open_app()
    assert shown(at.error) == ["Inkwell's settings are invalid: threshold must be between 0 and 1, not 2.0"]

    monkeypatch.delenv("INKWELL_THRESHOLD")
    (tmp_path / "a-file").write_text("not a folder")
    monkeypatch.setenv("INKWELL_DATA_DIR", str(tmp_path / "a-file" / "db"))
    at = open_app()
    # It was "Cannot open the data directory …: cannot create the data directory …: [Errno 20] Not a directory".
    folder = tmp_path / "a-file"
    said = f"The data directory {folder / 'db'}: its folder {folder} is a file, not a folder"
    assert shown(at.error) == [said]
    monkeypatch.setenv("INKWELL_DATA_DIR", str(folder))
    assert shown(open_app().error) == [f"The data directory {folder} is a file, not a folder"]


# Ingestion -----------------------------------------------------------------------------------------------


def test_paste_preview_ingest_and_undo(data_dir):
    at = open_app("pages/posts.py")
    at.text_input(key="paste_title").input("On Bees")
    at.text_area(key="paste_text").input("\n\n".join(BEES))
    at.button(key="paste_preview").click().run()
    assert not at.exception
    preview = at.dataframe[0].value
    assert list(preview.columns) == ["#", "section", "tokens", "keywords", "text"]
    assert "Swarming season" in " ".join(preview["text"])
    assert counts_caption(at) == "**Table:** 0 posts · 0 chunks"  # a preview stores nothing

    at.button(key="paste_ingest").click().run()
    assert not at.exception
    assert metrics(at)["New"] == "1" and metrics(at)["Failed"] == "0"
    chunks = int(metrics(at)["Chunks embedded"])
    assert chunks >= 1
    assert counts_caption(at) == f"**Table:** 1 post · {shared.plural(chunks, 'chunk')}"

    # The same text again: unchanged, nothing embedded.
    at.button(key="paste_ingest").click().run()
    assert metrics(at)["Unchanged"] == "1" and metrics(at)["Chunks embedded"] == "0"

    button(at, "Undo last change (ingest of “On Bees”)").click().run()
    assert not at.exception
    assert "Undone: ingest of “On Bees”." in texts(at.success)
    assert counts_caption(at) == "**Table:** 0 posts · 0 chunks"


def paste_form(at) -> dict[str, object]:
    return {
        "title": at.text_input(key="paste_title").value,
        "collection": at.text_input(key="paste_collection").value,
        "format": at.selectbox(key="paste_format").value,
        "date": at.date_input(key="paste_date").value,
        "text": at.text_area(key="paste_text").value,
    }


def away_and_back(at) -> None:
    """To Inspect chunks and back (Streamlit forgets the widgets a run does not draw)."""
    at.switch_page("pages/chunks.py").run()
    at.switch_page("pages/posts.py").run()
    assert not at.exception, at.exception


EMPTY_FORM = {"title": "", "collection": "writings", "format": "markdown", "date": None, "text": ""}


def test_a_pasted_draft_is_kept_across_pages_until_ingested_or_cleared(data_dir):
    at = open_app("pages/posts.py")
    assert paste_form(at) == EMPTY_FORM
    at.text_input(key="paste_title").input("On Bees")
    at.text_input(key="paste_collection").input("garden")
    at.selectbox(key="paste_format").set_value("text")
    at.date_input(key="paste_date").set_value(dt.date(2024, 5, 1))
    at.text_area(key="paste_text").input("\n\n".join(BEES)).run()
    draft = paste_form(at)
    away_and_back(at)
    assert paste_form(at) == draft

    at.button(key="paste_ingest").click().run()
    assert metrics(at)["New"] == "1" and paste_form(at) == draft  # shown beside its report
    away_and_back(at)
    assert paste_form(at) == EMPTY_FORM  # stored: no longer a draft

    at.text_area(key="paste_text").input("Half a thought about queens.").run()
    away_and_back(at)
    assert paste_form(at) == {**EMPTY_FORM, "text": "Half a thought about queens."}
    at.button(key="paste_clear").click().run()
    assert not at.exception and paste_form(at) == EMPTY_FORM
    away_and_back(at)
    assert paste_form(at) == EMPTY_FORM


def test_recent_changes_survive_a_reload_and_each_is_undone_alone(data_dir):
    def paste(at, title: str, text: str) -> None:
        at.text_input(key="paste_title").input(title)
        at.text_area(key="paste_text").input(text)
        at.button(key="paste_ingest").click().run()
        assert not at.exception

    at = open_app("pages/posts.py")
    paste(at, "On Bees", "\n\n".join(BEES))
    paste(at, "On Hives", "A hive body holds ten frames of comb, and the bees fill it by midsummer.")
    at = open_app("pages/posts.py")  # a reload: a new session, the log is read from the tables
    assert button(at, "Undo last change (ingest of “On Hives”)")
    older = [b for b in at.button if str(b.key or "").startswith("undo_") and b.key != "undo_last"]
    assert len(older) == 2
    older[-1].click().run()  # the older change, the bees post: the hives post stays
    assert not at.exception and "Undone: ingest of “On Bees”." in texts(at.success)
    assert counts_caption(at) == "**Table:** 1 post · 1 chunk"
    # A change whose post changed since is refused, naming the later change.
    paste(at, "On Hives", "A hive body holds ten frames; in a strong year I add a second box.")
    hives_first = [c for c in Store(data_dir).changes() if not c.undone][-1]  # the first "On Hives"
    assert hives_first.label == "ingest of “On Hives”" and not hives_first.undone
    assert Store(data_dir).changes()[0].label == "update of “On Hives”"  # the post was there
    first = next(b for b in at.button if b.key == f"undo_{hives_first.change_id}")
    first.click().run()
    assert any("changed since, by" in w for w in texts(at.warning)), texts(at.warning)


def test_recent_changes_name_the_posts_they_touched(data_dir, embedder):
    from core.models import Block, Post

    walks = [f"Walk {i} went along the canal, past the lock and the old mill." for i in range(1, 6)]
    posts = [
        Post(f"walk-{i}", f"Walk {i}", [Block(text)], raw=text, source=f"walk-{i}.txt")
        for i, text in enumerate(walks, 1)
    ]
    settings = Settings.load({"data_dir": data_dir}, environ={})
    ingest_posts(posts, settings, store=Store(data_dir), embedder=embedder, label="ingest of 5 posts")
    Store(data_dir).delete_posts(["walk-5"])
    at = open_app("pages/posts.py")
    captions = shown(at.caption)
    assert "“Walk 1”, “Walk 2”, “Walk 3” and 2 more" in captions, captions  # the first few, by title
    assert "walk-5" in captions  # deleted: by its id, the title is gone with it
    assert "touched walk-5." in button(at, "Undo last change (deletion of 1 post)").help.replace("\\", "")


def test_paste_with_no_text_is_a_clear_error(data_dir):
    at = open_app("pages/posts.py")
    at.text_input(key="paste_title").input("Empty")
    at.button(key="paste_ingest").click().run()
    assert not at.exception
    assert any("Cannot use this text" in e for e in shown(at.error))


def test_upload_many_files_one_bad(data_dir):
    at = open_app("pages/posts.py")
    front = "---\ntitle: Swarms\ndate: 2024-05-01\n---\n\n" + BEES[1]
    at.file_uploader(key="upload_files").set_value(
        [
            ("swarms.md", front.encode(), "text/markdown"),
            ("bread.txt", BREAD.encode(), "text/plain"),
            ("broken.json", b"{not json", "application/json"),
        ]
    ).run()
    assert not at.exception
    assert "3 files → 2 posts, 1 problem." in texts(at.caption)
    assert button(at, "Ingest 2 posts").disabled is False
    assert any("broken.json" in w for w in shown(at.warning))

    at.text_input(key="upload_collection").input("essays").run()
    at.button(key="upload_ingest").click().run()
    assert not at.exception
    assert metrics(at)["New"] == "2" and metrics(at)["Failed"] == "1"
    assert any("broken.json" in w and "not valid JSON" in w for w in shown(at.warning))
    store = Store(data_dir)
    assert {(p["title"], p["collection"]) for p in store.list_posts()} == {
        ("Swarms", "essays"),
        ("Bread", "essays"),
    }


def test_an_uploaded_file_now_marked_draft_removes_its_stored_post(data_dir):
    """Uploaded again with `draft: true`, a stored post stayed stored and quoted: "Ingest 0 posts" was
    disabled and the upload said only "left out"."""
    at = open_app("pages/posts.py")
    front = "---\ntitle: Swarms\n---\n\n" + BEES[1]
    at.file_uploader(key="upload_files").set_value([("swarms.md", front.encode(), "text/markdown")]).run()
    at.button(key="upload_ingest").click().run()
    assert [p["post_id"] for p in Store(data_dir).list_posts()] == ["swarms"]
    draft = front.replace("title: Swarms\n", "title: Swarms\ndraft: true\n")
    at.file_uploader(key="upload_files").set_value([("swarms.md", draft.encode(), "text/markdown")]).run()
    assert not button(at, "Ingest 0 posts").disabled and at.button(key="upload_preview").disabled
    at.button(key="upload_ingest").click().run()
    assert not at.exception
    assert Store(data_dir).list_posts() == []
    assert "swarms.md (swarms): removed, now a draft" in shown(at.info), shown(at.info)


def test_upload_with_no_valid_post_cannot_be_ingested(data_dir):
    at = open_app("pages/posts.py")
    at.file_uploader(key="upload_files").set_value([("broken.json", b"{not json", "application/json")]).run()
    assert not at.exception
    assert "1 file → 0 posts, 1 problem." in texts(at.caption)
    assert button(at, "Ingest 0 posts").disabled
    assert at.button(key="upload_preview").disabled
    at.file_uploader(key="upload_files").set_value([("bread.txt", BREAD.encode(), "text/plain")]).run()
    assert "1 file → 1 post, 0 problems." in texts(at.caption)
    assert not button(at, "Ingest 1 post").disabled


def test_plurals():
    assert [shared.plural(n, "post") for n in (0, 1, 2, 1000)] == [
        "0 posts",
        "1 post",
        "2 posts",
        "1,000 posts",
    ]
    assert (
        shared.plural(1, "query", "queries") == "1 query"
        and shared.plural(3, "query", "queries") == "3 queries"
    )


def test_stored_posts_reingest_and_delete(corpus):
    at = open_app("pages/posts.py")
    titles = list(at.dataframe[0].value["title"])
    assert sorted(titles) == ["On Bees", "On Walking", "Sourdough"]
    picked = [titles.index("On Bees"), titles.index("On Walking")]
    select_rows(at, "posts_table", picked)
    button(at, "Re-ingest selected").click().run()
    assert not at.exception
    # Forced: both rebuilt from their stored raw text, same ids, vectors reused from the cache.
    assert metrics(at)["Updated"] == "2" and metrics(at)["New"] == "0"
    assert metrics(at)["Chunks embedded"] == "0"
    assert {p["post_id"] for p in corpus.list_posts()} == {"bees", "bread", "walks"}

    select_rows(at, "posts_table", [titles.index("Sourdough")])
    button(at, "Delete selected").click().run()
    assert not at.exception
    assert "Deleted 1 post." in texts(at.success)
    assert {p["post_id"] for p in corpus.list_posts()} == {"bees", "walks"}
    assert counts_caption(at).startswith("**Table:** 2 posts")
    assert button(at, "Delete selected").disabled  # the rows changed, so the selection was dropped

    button(at, "Undo last change (deletion of 1 post)").click().run()
    assert {p["post_id"] for p in corpus.list_posts()} == {"bees", "bread", "walks"}


def layout(at) -> list[tuple[str, str | None]]:
    """The page's top-level elements, (type, key): what the browser matches tabs and expanders by."""
    return [(node.type, node.key) for node in at.main.children.values()]


def test_a_message_after_an_action_leaves_the_ingest_tabs_and_sections_in_place(corpus):
    """A tab or expander that moved, or whose label changed, is reset by the browser (the first tab again,
    collapsed): a flashed message fills a container drawn on every run, and sections are keyed."""
    at = open_app("pages/posts.py")
    before = layout(at)
    sections = {"prep_section", "routing_section", "static_section", "share_section"}
    assert sections | {"recent_changes"} <= {key for _, key in before}, before
    select_rows(at, "posts_table", [0])
    button(at, "Delete selected").click().run()
    assert not at.exception and "Deleted 1 post." in texts(at.success)
    assert layout(at) == before
    at.run()  # the next run: the message is gone, nothing moves back
    assert not at.success and layout(at) == before


# Inspector -----------------------------------------------------------------------------------------------


def test_inspector_browse_filter_and_select(corpus):
    at = open_app("pages/chunks.py")
    table = at.dataframe[0].value
    assert list(table.columns) == ["title", "collection", "section", "tokens", "keywords", "text"]
    assert len(table) == corpus.counts()[1]

    at.text_input(key="inspect_search").input("SWARMING").run()
    assert list(at.dataframe[0].value["title"]) == ["On Bees"]
    at.text_input(key="inspect_search").input("").run()
    at.multiselect(key="inspect_collections").set_value(["recipes"]).run()
    assert list(at.dataframe[0].value["title"]) == ["Sourdough"]
    at.multiselect(key="inspect_collections").set_value([]).run()

    # Select the middle chunk of "On Bees": the chunk, both neighbours, and the embedded text.
    at.multiselect(key="inspect_posts").set_value(["bees"]).run()
    shown = at.dataframe[0].value
    assert len(shown) == 3
    select_rows(at, "chunk_table", [1])
    assert not at.exception
    body = texts(at.text)
    assert body[0] == shown["text"][1]
    assert shown["text"][0] in body and shown["text"][2] in body  # previous and next
    embedded = texts(at.code)
    assert any(e.startswith("[SECTION: On Bees]") and shown["text"][1] in e for e in embedded)


def test_inspector_edit_chunk_reembeds_it(corpus):
    at = open_app("pages/chunks.py")
    at.multiselect(key="inspect_posts").set_value(["bread"]).run()
    select_rows(at, "chunk_table", [0])
    before = corpus.list_chunks(post_id="bread", columns=["chunk_id", "text", "embed_hash"])[0]
    at.text_area[0].input("Rye starter, fed twice a day; the dough proves overnight.")
    at.text_input[-1].input("sourdough, rye")
    button(at, "Save and re-embed").click().run()
    assert not at.exception
    assert "Saved and re-embedded the chunk." in texts(at.success)
    after = corpus.get_chunk(before["chunk_id"])
    assert after["text"] == "Rye starter, fed twice a day; the dough proves overnight."
    assert list(after["keywords"]) == ["sourdough", "rye"]
    assert after["embed_hash"] != before["embed_hash"]


def test_inspector_edit_can_clear_a_chunks_keywords(corpus):
    """Emptying the keywords box (the owner drops LLM keywords that mislead the search) failed with
    LanceDB's "concat requires input of at least one array" and a Rust source path as the error."""
    at = open_app("pages/chunks.py")
    at.multiselect(key="inspect_posts").set_value(["bread"]).run()
    select_rows(at, "chunk_table", [0])
    chunk_id = corpus.list_chunks(post_id="bread", columns=["chunk_id"])[0]["chunk_id"]
    at.text_input[-1].input(" , ,")
    button(at, "Save and re-embed").click().run()
    assert not at.exception and not at.error, shown(at.error)
    assert "Saved and re-embedded the chunk." in texts(at.success)
    assert list(corpus.get_chunk(chunk_id)["keywords"]) == []
    from core.search import search

    hits = search("sourdough rye", Settings.load(environ={}), store=corpus).candidates  # still searchable
    assert any(h.chunk_id == chunk_id for h in hits)


def test_inspector_query_mode_shows_every_candidate(corpus):
    at = open_app("pages/chunks.py")
    at.radio(key="inspect_mode").set_value("Test a query").run()
    at.number_input(key="adv_min_chunks").set_value(0).run()
    at.slider(key="adv_threshold").set_value(0.3).run()
    at.text_input(key="inspect_query").input("When do bees swarm?").run()
    assert not at.exception
    frame = at.dataframe[0].value
    assert len(frame) == corpus.counts()[1]  # every candidate (top_k is larger than the table)
    assert list(frame["rank"]) == list(range(1, len(frame) + 1))
    assert frame["relevance"].is_monotonic_decreasing
    assert frame["title"][0] == "On Bees"
    assert all(frame["passed"] == (frame["relevance"] >= 0.3))
    assert set(frame["why"]) <= {"above threshold", "below threshold"}
    assert metrics(at)["Candidates"] == str(len(frame))
    assert metrics(at)["Used"] == str(int(frame["passed"].sum()))
    # Why each chunk: its rank and score in each search (hybrid by default), empty where one missed it.
    why = ["dense rank", "dense relevance", "keyword rank", "keyword BM25"]
    assert list(frame.columns[2:6]) == why
    assert frame["dense rank"].notna().all() and frame["dense relevance"].between(0, 1).all()
    assert frame["keyword rank"][0] == 1 and frame["keyword BM25"][0] > 0  # "swarm" is in the top chunk
    assert frame["keyword rank"].isna().sum() == frame["keyword BM25"].isna().sum() > 0
    assert_headers_fit(at.dataframe[0], ["relevance", *why])
    at.selectbox(key="inspect_retrieval_mode").set_value("dense").run()
    dense = at.dataframe[0].value
    assert dense["keyword rank"].isna().all() and list(dense["dense rank"]) == list(range(1, len(dense) + 1))
    # One candidate is worded in the singular: "the 1 nearest chunk", not "the 1 nearest chunks".
    at.number_input(key="adv_top_k").set_value(1).run()
    assert any("Rules: the 1 nearest chunk;" in c.value for c in at.caption)


def test_inspector_reranker_shows_the_judges_scores(corpus, monkeypatch):
    from tests.servers import Reply, ScriptedOpenAIServer

    with ScriptedOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        # The judge says yes only to the sourdough chunk: reranked, it leads a bee question.
        server.responder = lambda request: Reply(
            chat_text="Yes" if "sourdough" in request["messages"][-1]["content"] else "No"
        )
        at = open_app("pages/chunks.py")
        at.radio(key="inspect_mode").set_value("Test a query").run()
        at.text_input(key="inspect_query").input("When do bees swarm?").run()
        assert "rerank" not in at.dataframe[0].value.columns  # no reranker, no column
        at.selectbox(key="inspect_reranker").set_value("llm").run()
        assert not at.exception and not at.warning
        frame = at.dataframe[0].value
        assert frame["title"][0] == "Sourdough" and frame["rerank"][0] == 1.0
        assert (frame["rerank"][1:] == 0.0).all() and len(server.chat_requests) == len(frame)
        # A cross-encoder without a model can't judge: the fused order stays, with the reason.
        at.selectbox(key="inspect_reranker").set_value("cross-encoder").run()
        assert at.dataframe[0].value["title"][0] == "On Bees"
        assert "kept the fused order" in shown(at.warning)[0]


def test_a_reader_cannot_spend_the_owners_model_budget_in_the_inspector(corpus, monkeypatch):
    """Issue #31: readers' test queries never reach the chat model, not even with the LLM reranker
    configured, and are held to the chat's question length cap; the owner, unlocked, still reranks."""
    from tests.servers import Reply, ScriptedOpenAIServer

    with ScriptedOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("INKWELL_RERANKER", "llm")  # the owner's configured reranker
        server.responder = lambda request: Reply(chat_text="Yes")
        at = open_app("pages/chunks.py", admin_password="pw")
        at.radio(key="inspect_mode").set_value("Test a query").run()
        picker = at.selectbox(key="inspect_reranker")
        assert "llm" not in picker.options and picker.value == "none"
        at.text_input(key="inspect_query").input("When do bees swarm?").run()
        assert not at.exception
        assert at.dataframe[0].value["title"][0] == "On Bees"
        assert "rerank" not in at.dataframe[0].value.columns
        at.text_input(key="inspect_query").input("x " * 10_000).run()  # 20,000 characters
        assert any("questions are limited to 1,000" in w for w in texts(at.warning))
        assert not at.dataframe
        at.radio(key="inspect_mode").set_value("Posts about…").run()
        at.text_input(key="posts_about_query").input("bees").run()
        assert not at.exception and at.dataframe[0].value["title"][0] == "On Bees"
        assert server.requests == []

        at.switch_page("pages/posts.py").run()
        at.text_input[0].input("pw")
        button(at, "Unlock").click().run()
        at.switch_page("pages/chunks.py").run()
        at.radio(key="inspect_mode").set_value("Test a query").run()
        assert at.selectbox(key="inspect_reranker").value == "llm"  # the owner's configured reranker
        at.text_input(key="inspect_query").input("When do bees swarm?").run()
        assert not at.exception
        assert (at.dataframe[0].value["rerank"] == 1.0).all()
        assert len(server.chat_requests) == len(at.dataframe[0].value)

        # Locked again, the same session (its picker still on "llm") asks without the model.
        button(at, "Lock owner pages").click().run()  # that run is still the owner's
        asked = len(server.requests)
        at.text_input(key="inspect_query").input("Where do you walk?").run()
        assert not at.exception
        assert "rerank" not in at.dataframe[0].value.columns
        assert len(server.requests) == asked


def test_inspector_queries_count_against_the_chats_question_limit(corpus, monkeypatch):
    monkeypatch.setenv("INKWELL_QUESTIONS_PER_MINUTE", "2")
    at = open_app("pages/chunks.py")
    at.radio(key="inspect_mode").set_value("Test a query").run()
    at.text_input(key="inspect_query").input("When do bees swarm?").run()
    at.run()  # a rerun of the same query is not a new question
    at.text_input(key="inspect_query").input("What flour feeds the starter?").run()
    assert not at.warning and at.dataframe
    at.text_input(key="inspect_query").input("Where do you walk?").run()
    assert any("please wait" in w for w in texts(at.warning))
    assert not at.dataframe


# Owner gate ----------------------------------------------------------------------------------------------


def test_admin_password_protects_owner_pages_only(corpus, monkeypatch):
    monkeypatch.setenv("INKWELL_ADMIN_PASSWORD", "from-env")
    at = open_app(admin_password="open sesame")  # the secret wins over the environment
    assert "Single-user mode" not in everything(at)
    assert at.chat_input  # chat stays open

    at.switch_page("pages/posts.py").run()
    assert not at.exception
    assert all(t.key != "paste_title" for t in at.text_input)
    password = at.text_input[0]
    assert password.label == "Admin password"
    password.input("from-env")
    button(at, "Unlock").click().run()
    assert any("Wrong password" in e for e in shown(at.error))
    at.text_input[0].input("open sesame")
    button(at, "Unlock").click().run()
    assert not at.exception
    assert at.text_input(key="paste_title").label == "Title"

    # The inspector browses for everyone; its editor is behind the same (now unlocked) gate.
    at.switch_page("pages/chunks.py").run()
    select_rows(at, "chunk_table", [0])
    assert any(b.label == "Save and re-embed" for b in at.button)
    button(at, "Lock owner pages").click().run()
    at.run()
    assert not any(b.label == "Save and re-embed" for b in at.button)
    assert any(t.label == "Admin password" for t in at.text_input)


def test_wrong_passwords_lock_the_session(corpus):
    from core.serve import PasswordGate

    at = open_app("pages/posts.py", admin_password="pw")
    at.session_state["owner_gate"] = PasswordGate(clock=lambda: 1000.0)  # time stands still: the lock holds
    for _ in range(3):
        at.text_input[0].input("guess")
        button(at, "Unlock").click().run()
    assert any("Try again in 2 s" in e for e in shown(at.error))
    at.text_input[0].input("pw")  # right, but during the lock: refused without comparing
    button(at, "Unlock").click().run()
    assert any("Too many wrong passwords: try again in 2 s" in e for e in shown(at.error))
    assert all(t.key != "paste_title" for t in at.text_input)


# Chat ----------------------------------------------------------------------------------------------------


def test_chat_with_no_posts_answers_without_a_model_and_rate_limits(data_dir, monkeypatch):
    monkeypatch.setenv("INKWELL_QUESTIONS_PER_MINUTE", "2")
    at = open_app()
    assert any("no posts yet" in i for i in texts(at.info))
    for question in ("What do you think of bees?", "And of bread?"):
        at.chat_input[0].set_value(question).run()
        assert not at.exception
    assert len(at.chat_message) == 4
    assert "I haven't written about that" in shown(at.chat_message[1].markdown)[0]
    assert at.chat_message[0].text[0].value == "What do you think of bees?"

    at.chat_input[0].set_value("One more?").run()
    assert any("please wait" in w for w in texts(at.warning))
    assert len(at.chat_message) == 4  # the refused question is not asked

    button(at, "Clear chat").click().run()
    assert len(at.chat_message) == 0


def test_chat_quotes_the_author_when_the_model_server_is_down(corpus, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{closed_port()}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-key-123456789")
    monkeypatch.setenv("INKWELL_MAX_RETRIES", "0")
    monkeypatch.setenv("INKWELL_REQUEST_TIMEOUT", "2")
    at = open_app()
    at.chat_input[0].set_value("When do bees swarm?").run()
    assert not at.exception and not at.error
    captions = shown(at.chat_message[1].caption)
    assert UNREACHABLE_NOTE in captions
    assert any(  # single-user mode: the owner is told which server failed
        "could not connect to the model server at http://127.0.0.1:" in c.lower() for c in captions
    )
    assert "sk-secret" not in everything(at)
    # The reply stays in the history as quoted; it is drawn the same way again.
    at.run()
    assert shown(at.chat_message[1].caption) == captions and not at.exception


def test_chat_with_a_configured_server_rewrites_follow_ups(corpus, monkeypatch):
    """A real OpenAI-compatible HTTP server on loopback (scripted replies): the follow-up is rewritten
    into a standalone question with the history, the rewrite is shown and used for retrieval."""
    from tests.servers import ScriptedOpenAIServer

    with ScriptedOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("INKWELL_MAX_RETRIES", "0")
        server.chat(["Swarming ", "starts in ", "**May**."])
        at = open_app()
        at.sidebar.toggle(key="show_details").set_value(True).run()  # the model's name is the owner's detail
        at.chat_input[0].set_value("When does swarming season start?").run()
        assert not at.exception and not at.error
        first = at.chat_message[1]
        assert first.markdown[0].value == "Swarming starts in **May**."
        assert f"Answered by gpt-4o-mini via {server.base_url}." in shown(first.caption)
        assert not any(c.startswith("Searched for") for c in shown(first.caption))

        server.chat("Why does half of a bee colony leave when it swarms?")  # the rewrite
        server.chat(
            "A colony that runs out of space raises a new queen, and half of it leaves."
        )  # the answer
        at.chat_input[0].set_value("Why does half of it leave?").run()
        assert not at.exception and not at.error
        follow_up = at.chat_message[3]
        assert "Searched for: Why does half of a bee colony leave when it swarms?" in shown(follow_up.caption)
        assert (
            follow_up.markdown[0].value
            == "A colony that runs out of space raises a new queen, and half of it leaves."
        )

        rewrite, answer = server.chat_requests[1:]
        assert "Reader: When does swarming season start?" in rewrite.body["messages"][-1]["content"]
        # The answer gets the history and the reader's own words; retrieval used the rewrite.
        contents = [m["content"] for m in answer.body["messages"]]
        assert "When does swarming season start?" in contents and "Swarming starts in **May**." in contents
        assert contents[-1].endswith("Reader's question: Why does half of it leave?")
        assert answer.body["temperature"] == pytest.approx(0.4)


@pytest.mark.parametrize("grounding", ["auto", "check"])
def test_chat_leaves_out_or_marks_sentences_with_details_no_excerpt_holds(corpus, monkeypatch, grounding):
    """auto (the default): the invented sentence never reaches the answer; check: shown, then marked."""
    from tests.servers import ScriptedOpenAIServer

    supported = "Swarming season starts in May, when a colony runs out of space."
    invented = "My first hive arrived in April 2021 from Oakridge Apiaries."
    with ScriptedOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("INKWELL_ROUTING", "off")
        if grounding != "auto":
            monkeypatch.setenv("INKWELL_GROUNDING", grounding)
        server.chat(f"{supported} {invented}")
        at = open_app()
        at.chat_input[0].set_value("When does swarming season start?").run()
        assert not at.exception and not at.error
        answer = at.chat_message[1]
        body = answer.markdown[0].value.replace("\\", "")
        assert body == (supported if grounding == "auto" else f"{supported} {invented}")
        assert "Grounding: 1 of 2 sentences are supported by the excerpts below." in shown(answer.caption)
        flagged = answer.expander[0]
        label = (
            "left out of the answer" if grounding == "auto" else "not found in the excerpts: treat with care"
        )
        assert flagged.label == f"1 sentence {label}"
        assert texts(flagged.text) == [invented]
        assert shown(flagged.caption) == ["No excerpt mentions: 2021, apiaries, oakridge"]


@pytest.mark.parametrize("grounding", ["auto", "check"])
def test_chat_never_shows_an_unchecked_answer_by_default_and_says_why_under_check(
    corpus, monkeypatch, grounding
):
    """A German question over the English MiniLM table: the check cannot read a German answer. auto (the
    default) quotes the author instead, calling the model only to translate the question; check shows
    the generated answer and says it was not checked."""
    from tests.servers import ScriptedOpenAIServer

    with ScriptedOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        if grounding != "auto":
            monkeypatch.setenv("INKWELL_GROUNDING", grounding)
        # The question is translated for the search (and the relevance bar); the answer stays German.
        server.chat("When does swarming season start?")
        server.chat("Die Schwarmzeit beginnt im Mai, wenn einem Volk der Platz ausgeht.")
        at = open_app()
        at.chat_input[0].set_value("Wann beginnt die Schwarmzeit?").run()
        assert not at.exception and not at.error
        body = at.chat_message[1].markdown[0].value.replace("\\", "")
        captions = shown(at.chat_message[1].caption)
        if grounding == "auto":
            # The author's English sentences, under the German reader's words (core/text/labels.py).
            assert body.startswith("Aus *") and "Swarming season starts in May." in body
            assert labels("de")["quoted"] in captions
            assert len(server.chat_requests) == 1  # the translation only
            return
        assert body == "Die Schwarmzeit beginnt im Mai, wenn einem Volk der Platz ausgeht."
        assert any(c.startswith("Grounding not checked: the answer is in German") for c in captions), captions
        assert not any(c.startswith("Grounding:") for c in captions)


@pytest.mark.llm
def test_chat_round_trip_with_the_builtin_model(corpus, monkeypatch):
    monkeypatch.setenv("INKWELL_MAX_TOKENS", "48")
    monkeypatch.setenv("INKWELL_ANSWER_MODE", "generative")  # auto would quote the posts instead
    at = open_app()
    at.sidebar.toggle(key="show_details").set_value(True).run()  # the excerpts are the owner's details
    at.chat_input[0].set_value("When does swarming season start?").run(timeout=TIMEOUT)
    assert not at.exception and not at.error
    answer = at.chat_message[1]
    assert answer.markdown[0].value.strip()  # the streamed answer
    sources = answer.markdown[1].value
    assert sources.startswith("**Sources**") and "1. [On Bees](read?post=bees)" in sources
    assert any("Answered by the small offline model: rough." in c for c in texts(answer.caption))
    # The grounding line is shown exactly when a sentence was long enough to judge, whether it was shown
    # or (auto grounding, the default) left out; the model samples, so its 48 tokens may also end before
    # a first sentence does (a fixed message, nothing judged).
    from core.answer.generate import CUT_SHORT_MESSAGE, NOTHING_SUPPORTED_MESSAGE
    from core.text import split_sentences
    from core.text.words import MIN_CHECKED_CONTENT_WORDS as MIN_WORDS
    from core.text.words import content_forms as content_words

    text = answer.markdown[0].value
    fixed = text.strip() in (CUT_SHORT_MESSAGE, NOTHING_SUPPORTED_MESSAGE)
    judgeable = not fixed and any(len(content_words(s)) >= MIN_WORDS for s in split_sentences(text))
    captions = texts(answer.caption)
    # "1 sentence not found in the excerpts was left out." / "2 sentences … were left out."
    left_out = any(re.search(r"(was|were) left out", c) for c in captions)
    grounded = any(c.startswith("Grounding:") for c in captions)
    assert (judgeable <= grounded) and (grounded <= (judgeable or left_out)), (text, captions)
    if text.strip() == NOTHING_SUPPORTED_MESSAGE:
        assert left_out, captions  # the reader is told why there is no answer
    context = answer.dataframe[0].value  # the excerpts that went into the context
    assert {"relevance", "title", "section", "keywords", "text"} <= set(context.columns)
    assert context["title"][0] == "On Bees"
    copied = texts(answer.code)
    assert copied and copied[0].strip()

    at.chat_input[0].set_value("Why does half of it leave?").run(timeout=TIMEOUT)
    assert not at.exception and not at.error
    follow_up = at.chat_message[3]
    # With the built-in model the follow-up is joined to the previous question, without a model call.
    assert "Searched for: When does swarming season start? Why does half of it leave?" in shown(
        follow_up.caption
    )


# Helpers shared by the pages -----------------------------------------------------------------------------


def test_md_escape_shows_markdown_literally():
    escaped = shared.md_escape("**bold** [link](http://x) ![img](http://y) <b>:red[hi]</b> # h")
    for raw in ("**", "](", "![", "<b>", ":red["):
        assert raw not in escaped
    assert escaped.replace("\\", "") == "**bold** [link](http://x) ![img](http://y) <b>:red[hi]</b> # h"


def test_safe_answer_stream_neutralises_images_across_deltas():
    deltas = ["See this !", "[pic](http://evil/?q=secret) and this", "![x](y)", " wow!"]
    out = "".join(shared.safe_answer_stream(deltas))
    assert "![" not in out
    assert out.replace("\\", "") == "".join(deltas)


def test_explain_candidates():
    def hit(relevance: float, passed: bool) -> Hit:
        return Hit("p", "t", "c", "id", "", "x", [], relevance, 1, passed=passed)

    assert shared.explain(hit(0.5, True), 0.3) == "above threshold"
    assert shared.explain(hit(0.2, True), 0.3) == "below threshold, kept by min chunks"
    assert shared.explain(hit(0.5, False), 0.3) == "above threshold, cut by max chunks"
    assert shared.explain(hit(0.2, False), 0.3) == "below threshold"


def test_rebuild_posts_keeps_ids_and_says_what_it_skips(data_dir, embedder):
    from core.ingest import rebuild_posts
    from core.parse import parse_bytes

    settings = Settings.load({"data_dir": data_dir}, environ={})
    html = (
        "<html><head><title>Walk</title></head><body><article><h1>Walk</h1><p>"
        + BEES[0]
        + "</p></article></body></html>"
    )
    chunks = '[{"id": "c1", "source": "notes", "text": "' + BREAD + '"}]'
    posts = [
        *parse_bytes("2024-05-01-my-swarms.md", ("---\nslug: swarm-notes\n---\n\n" + BEES[1]).encode()).posts,
        *parse_bytes("walk.html", html.encode()).posts,
        *parse_bytes("chunks.json", chunks.encode()).posts,
    ]
    store = Store(data_dir)
    ingest_posts(posts, settings, store=store, embedder=embedder)
    ids = [p.post_id for p in posts] + ["missing"]
    rebuilt, skipped = rebuild_posts(store, ids)
    assert skipped == ["missing: no longer stored"]
    assert [p.post_id for p in rebuilt] == [p.post_id for p in posts]
    for old, new in zip(posts, rebuilt, strict=True):
        assert (new.title, new.collection, new.date, new.source, new.text) == (
            old.title,
            old.collection,
            old.date,
            old.source,
            old.text,
        )
    report = ingest_posts(rebuilt, settings, store=store, embedder=embedder)
    assert report.count("unchanged") == 3  # rebuilt exactly: same content hash


def test_parse_uploads_reports_bad_files_and_reads_the_rest():
    result = shared.parse_uploads(
        [
            ("a.txt", b"Some text about bees."),
            ("b.exe", b"MZ\x00\x00"),
            ("c.jsonl", b'{"title": "C", "text": "x"}\n{'),
        ]
    )
    assert [(p.title, p.source) for p in result.posts] == [("A", "a.txt"), ("C", "c.jsonl")]
    assert [e.source for e in result.errors] == ["b.exe", "c.jsonl"]
    assert "unsupported file type" in result.errors[0].message


def test_inspector_refuses_too_many_or_too_long_keywords_and_keeps_the_edit(corpus):
    """Any number of keywords of any length was saved (a pasted paragraph became one "keyword", embedded
    and searched with the chunk). Now the page says the limit and saves nothing; the text and keywords
    typed stay in the form to be fixed."""
    at = open_app("pages/chunks.py")
    at.multiselect(key="inspect_posts").set_value(["bread"]).run()
    select_rows(at, "chunk_table", [0])
    before = corpus.list_chunks(post_id="bread", columns=["chunk_id", "text", "keywords", "embed_hash"])[0]
    edited = "Rye starter, fed twice a day; the dough proves overnight."
    too_many = "rye, flour, starter, loaf, fridge, crust, crumb"
    at.text_area[0].input(edited)
    at.text_input[-1].input(too_many)
    button(at, "Save and re-embed").click().run()
    assert not at.exception
    assert shown(at.error) == [
        "Not saved: a chunk takes at most 6 keywords, and 7 were given: keep the ones that best say what "
        "the passage is about."
    ]
    assert at.text_area[0].value == edited and at.text_input[-1].value == too_many  # nothing lost
    long_one = "rye, " + "the starter I have kept alive on the kitchen counter since the spring of 2019"
    at.text_input[-1].input(long_one)
    button(at, "Save and re-embed").click().run()
    assert "is at most 4 words and 60 characters" in shown(at.error)[0]
    assert at.text_area[0].value == edited
    after = corpus.get_chunk(before["chunk_id"])  # neither attempt saved anything
    assert after["text"] == before["text"] and after["embed_hash"] == before["embed_hash"]
    at.text_input[-1].input("rye, flour, starter, loaf, fridge, crust")  # six: the limit itself
    button(at, "Save and re-embed").click().run()
    assert "Saved and re-embedded the chunk." in texts(at.success)
    assert list(corpus.get_chunk(before["chunk_id"])["keywords"]) == ["rye", "flour", "starter", "loaf",
                                                                       "fridge", "crust"]  # fmt: skip
