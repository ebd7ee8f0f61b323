"""LLM preparation (core/prepare/ and its stages) through the real openai client: a scripted
OpenAI-compatible server on loopback for exact replies and error paths, and (marked llm) the built-in
llama.cpp server for structure and fallbacks."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from core.chunk import chunk_post, extract_keywords
from core.config import Settings
from core.ingest import ingest_posts, prepare_chunks
from core.ingest.pipeline import LLM_FAILED, post_hash
from core.llm import JSONReplyError, LLMCache
from core.llm.structured import parse_json_reply
from core.models import Post
from core.parse import parse_text
from core.prepare import LLMPrepOptions, prepare_post, prepare_posts, preview_rewrite
from core.prepare.chunks import ChunkValidationError, pieces_from_texts
from core.prepare.keywords import clean_keywords
from core.prepare.rewrite import apply_rewrites, build_doc, render_numbered
from core.store import Store
from core.text.sentences import TAG_RE
from tests.servers import Reply, ScriptedOpenAIServer

WALNUT = """# Walnut

I bought two walnut boards at the sawmill in Wickham. The first one was clear and straight.

The second one cracked along the grain. [IMAGE: crack.jpg] This annoyed me for a week.

## Finish

Those people at the hardware shop swear by linseed oil. It works on walnut too.
"""
BEES = (
    "Keeping bees taught me patience. The first hive arrived in April 2019.\n\n"
    "Swarming season starts in May. Half of the colony leaves with the old queen."
)
REWRITES = [
    {"id": 3, "text": "The second walnut board cracked along the grain."},
    {"id": 5, "text": "The staff at the hardware shop swear by linseed oil."},
]
GOOD_FIRST = {"rewrites": REWRITES, "chunk_starts": [1, 3]}
ALL = LLMPrepOptions(rewrite=True, llm_chunks=True, llm_keywords=True)


def walnut() -> Post:
    return parse_text(WALNUT, "Walnut boards", format="markdown")


def bees() -> Post:
    return parse_text(BEES, "On Bees")


def keywords_reply(n: int, words: list[list[str]] | None = None) -> str:
    words = words or [[f"topic{i + 1}"] for i in range(n)]
    return json.dumps({"chunks": [{"id": i + 1, "keywords": w} for i, w in enumerate(words)]})


def is_first(body: dict) -> bool:
    return 'Task "' in body["messages"][0]["content"]


def n_chunks(body: dict) -> int:
    return len(re.findall(r"^\[C\d+\]", body["messages"][1]["content"], re.MULTILINE))


def responder(first: dict | str | None = None, delay: float = 0.0):
    """Answers any request: request 1 with `first` (JSON, or built-in-safe chunk starts [1]), keywords
    with one keyword per chunk it was shown."""

    def answer(body: dict) -> Reply:
        if is_first(body):
            text = (
                first
                if isinstance(first, str)
                else json.dumps(first or {"rewrites": [], "chunk_starts": [1]})
            )
        else:
            text = keywords_reply(n_chunks(body))
        return Reply(chat_text=text, delay=delay)

    return answer


def remote(server: ScriptedOpenAIServer, tmp_path: Path, **changes) -> Settings:
    base = Settings(
        data_dir=tmp_path / "db", openai_base_url=server.base_url, max_retries=2, request_timeout=5.0
    )
    return base.replace(**{"chunk_tokens": 40, **changes})


# Sentences, rewrites, chunk checks (no model) ------------------------------------------------------------


def test_numbered_view_and_rewrites_keep_paragraphs_tags_and_other_sentences():
    doc = build_doc(walnut().blocks)
    view = render_numbered(doc)
    assert "# Walnut" in view and "# Finish" in view
    assert "[S3] The second one cracked along the grain. [S4] [IMAGE: crack.jpg] This annoyed me" in view
    proposed = {
        3: "The second walnut board cracked along the grain.",
        4: "This annoyed me for a week.",  # drops the image tag: refused
        5: "The staff at the hardware shop\n\nswear by linseed oil.",  # would split the paragraph: refused
        6: "It works on walnut too.",  # unchanged: not a change
        42: "No such sentence.",
    }
    after, changes, notes = apply_rewrites(doc, proposed)
    assert [(c.id, c.paragraph) for c in changes] == [(3, 2)]
    assert len(notes) == 3 and any("tag" in n for n in notes) and any("split" in n for n in notes)
    assert len(after.blocks) == len(doc.blocks)
    assert [b.heading for b in after.blocks] == [b.heading for b in doc.blocks]
    assert TAG_RE.findall("\n".join(b.text for b in after.blocks)) == ["[IMAGE: crack.jpg]"]
    assert after.blocks[2].text == (
        "The second walnut board cracked along the grain. [IMAGE: crack.jpg] This annoyed me for a week."
    )
    untouched = [i for i in range(len(doc.blocks)) if i != 2]
    assert [after.blocks[i].text for i in untouched] == [doc.blocks[i].text for i in untouched]
    # Sentence numbers survive the rewrite, with spans moved: chunk starts apply to either version.
    assert [after.text(s) for s in after.sentences][2:4] == [
        "The second walnut board cracked along the grain.",
        "[IMAGE: crack.jpg] This annoyed me for a week.",
    ]


def test_text_chunks_must_be_the_posts_own_text_and_cover_it():
    doc = build_doc(walnut().blocks)
    paragraphs = [b.text for b in doc.blocks if not b.heading]
    # Whitespace, curly quotes, copied sentence markers and a repeated heading are tolerated.
    loose = [
        "I bought two walnut boards\n at the sawmill in Wickham.   The first one was clear and straight.",
        "[S3] The second one cracked along the grain. [IMAGE: crack.jpg] This annoyed me for a week.\n"
        "## Finish\nThose people at the hardware shop swear by linseed oil. It works on walnut too.",
    ]
    pieces = pieces_from_texts(doc, loose)
    assert [p.text for p in pieces] == paragraphs  # cut again at the heading, the author's text kept
    assert [p.section for p in pieces] == ["Walnut", "Walnut", "Finish"]
    with pytest.raises(ChunkValidationError, match="not text of the post"):
        pieces_from_texts(doc, ["I bought two oak boards at the sawmill in Wickham.", *loose[1:]])
    with pytest.raises(ChunkValidationError, match="leave out"):
        pieces_from_texts(doc, loose[:1])


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('```json\n{"chunk_starts": [1, 3,],}\n```', {"chunk_starts": [1, 3]}),
        ('Here you go: {"a": {"b": [1, 2]}} Hope this helps!', {"a": {"b": [1, 2]}}),
        (
            '{"chunks": [{"id": 1, "keywords": ["oak"]}, {"id": 2, "keywords": ["wal',
            {"chunks": [{"id": 1, "keywords": ["oak"]}, {"id": 2}]},
        ),
        ("{“rewrites”: []}", {"rewrites": []}),
        ("[1, 2, 3", [1, 2]),
    ],
)
def test_parse_json_reply_repairs_what_is_safe(reply, expected):
    assert parse_json_reply(reply) == expected


@pytest.mark.parametrize("reply", ["", "I cannot help with that.", "{not json at all"])
def test_parse_json_reply_refuses_what_is_not_json(reply):
    with pytest.raises(JSONReplyError):
        parse_json_reply(reply)


def test_keywords_are_cleaned_singular_specific_and_at_most_six():
    raw = [
        "Walnut Boards",
        "thing",
        "the way",
        "Linseed Oils",
        "walnut board",
        "  grain! ",
        7,
        "x",
        *"abcdefghi",
    ]
    assert clean_keywords(raw) == ["walnut board", "linseed oil", "grain"]
    many = [f"wood{c}" for c in "abcdefgh"]
    assert clean_keywords(many) == many[:6]


# Scripted server: success, caching, call counts -------------------------------------------------------


def test_all_stages_make_two_requests_and_use_valid_json(scripted, tmp_path):
    scripted.chat(json.dumps(GOOD_FIRST))
    scripted.chat(keywords_reply(3, [["Walnut Boards", "sawmill", "thing"], ["crack"], ["linseed oils"]]))
    post = walnut()
    with LLMCache(tmp_path) as cache:
        prepared = prepare_post(post, remote(scripted, tmp_path), ALL, cache=cache)
    assert prepared.status == "ok", prepared.notes
    assert [c.text for c in prepared.chunks] == [
        "I bought two walnut boards at the sawmill in Wickham. The first one was clear and straight.",
        "The second walnut board cracked along the grain. [IMAGE: crack.jpg] This annoyed me for a week.",
        "The staff at the hardware shop swear by linseed oil. It works on walnut too.",
    ]
    assert [c.section for c in prepared.chunks] == ["Walnut", "Walnut", "Finish"]
    assert [c.keywords for c in prepared.chunks] == [["walnut board", "sawmill"], ["crack"], ["linseed oil"]]
    assert [c.chunk_id for c in prepared.chunks] == [f"walnut-boards#000{i}" for i in range(3)]
    assert prepared.rewrite_applied and prepared.rewritten_sentences == 2
    assert prepared.post.raw == WALNUT  # the original stays the stored raw text
    assert "The second one cracked" in prepared.proposal.original
    assert prepared.proposal.diff_lines()[:3] == [
        "¶2 [S3]",
        "- The second one cracked along the grain.",
        "+ The second walnut board cracked along the grain.",
    ]

    first, second = scripted.chat_requests
    schema = first.body["response_format"]["json_schema"]["schema"]
    assert first.body["response_format"]["type"] == "json_schema"
    assert schema["required"] == ["rewrites", "chunk_starts"]
    assert first.body["temperature"] == 0
    assert "[S5] Those people at the hardware shop" in first.body["messages"][1]["content"]
    assert second.body["response_format"]["json_schema"]["schema"]["required"] == ["chunks"]
    shown = second.body["messages"][1]["content"]
    assert shown.count("[C") == 3 and "The second walnut board cracked" in shown  # the whole, rewritten post
    assert prepared.stats.calls == 2 and prepared.stats.usage.total_tokens == 30
    assert prepared.stats.estimated_prompt_tokens > 100


def test_a_second_run_is_served_from_the_cache(scripted, tmp_path):
    scripted.responder = responder(GOOD_FIRST)
    settings = remote(scripted, tmp_path)
    with LLMCache(settings.data_dir) as cache:
        first = prepare_post(walnut(), settings, ALL, cache=cache)
        sent = len(scripted.requests)
        again = prepare_post(walnut(), settings, ALL, cache=cache)
        assert len(scripted.requests) == sent == 2
        assert again.stats.calls == 0 and again.stats.cached == 2 and again.stats.saved_tokens > 0
        assert [(c.text, c.keywords) for c in again.chunks] == [(c.text, c.keywords) for c in first.chunks]
        # The key covers the model and the input: another model or an edited post asks again.
        prepare_post(walnut(), settings.replace(prep_model="other-model"), ALL, cache=cache)
        assert len(scripted.requests) == 4
        assert scripted.requests[-1].body["model"] == "other-model"
        edited = parse_text(WALNUT.replace("a week", "a month"), "Walnut boards", format="markdown")
        prepare_post(edited, settings, ALL, cache=cache)
        assert len(scripted.requests) == 6


def test_the_builtin_server_gets_at_most_two_posts_at_once(tmp_path):
    builtin = Settings(data_dir=tmp_path, llm_concurrency=8)
    assert LLMPrepOptions(llm_keywords=True).workers(builtin) == 2
    assert LLMPrepOptions(llm_keywords=True, concurrency=1).workers(builtin) == 1
    assert LLMPrepOptions(llm_keywords=True).workers(builtin.replace(openai_base_url="http://x/v1")) == 8


def test_concurrency_is_bounded(scripted, tmp_path):
    scripted.responder = responder(delay=0.15)
    posts = [parse_text(f"Post number {i} is about oak and ash.", f"Post {i}") for i in range(6)]
    only_keywords = LLMPrepOptions(llm_keywords=True)
    settings = remote(scripted, tmp_path)
    done = prepare_posts(posts, settings, LLMPrepOptions(llm_keywords=True, concurrency=2))
    assert scripted.max_in_flight == 2  # two at a time, never more
    assert all(p.status == "ok" for p in done.values()) and len(done) == 6
    scripted.max_in_flight = 0
    prepare_posts(posts, settings.replace(data_dir=tmp_path / "other", llm_concurrency=1), only_keywords)
    assert scripted.max_in_flight == 1  # the setting, when the options leave it open
    assert len(scripted.requests) == 12  # one request per post (keywords only), none repeated


# Scripted server: malformed replies and fallbacks --------------------------------------------------------


def test_fenced_trailing_commas_and_a_truncated_reply_are_repaired(scripted, tmp_path):
    scripted.chat("```json\n" + json.dumps(GOOD_FIRST)[:-1] + ",}\n```")
    scripted.chat('{"chunks": [{"id": 1, "keywords": ["walnut board", "sawmill"]}, {"id": 2, "keywo')
    prepared = prepare_post(walnut(), remote(scripted, tmp_path), ALL)
    assert prepared.rewritten_sentences == 2 and len(prepared.chunks) == 3  # request 1 was understood
    assert prepared.chunks[0].keywords == ["walnut board", "sawmill"]
    builtin = extract_keywords(prepared.chunks, prepared.post)
    assert [c.keywords for c in prepared.chunks[1:]] == builtin[1:]
    assert prepared.status == "fallback"
    assert "2 of 3 chunks got built-in keywords" in prepared.note


def test_a_one_chunk_post_without_llm_keywords_is_counted_in_the_singular(scripted, tmp_path):
    scripted.chat('{"chunks": []}')  # keywords for no chunk: the one chunk gets the built-in ones
    post = parse_text("It splits along the rays. Oak is like that when you rive it with a froe.", "Riving")
    prepared = prepare_post(post, remote(scripted, tmp_path), LLMPrepOptions(llm_keywords=True))
    assert prepared.status == "fallback" and len(prepared.chunks) == 1
    assert "1 of 1 chunk got built-in keywords" in prepared.note, prepared.note


def test_an_unusable_reply_falls_back_to_the_builtin_chunker(scripted, tmp_path):
    scripted.chat("Sorry, I can't split posts.")
    scripted.chat(keywords_reply(3))
    settings = remote(scripted, tmp_path)
    prepared = prepare_post(walnut(), settings, ALL)
    assert prepared.status == "fallback"
    assert "not usable JSON" in prepared.note and "built-in chunks used" in prepared.note
    assert not prepared.rewrite_applied and prepared.post.text == walnut().text
    assert [c.text for c in prepared.chunks] == [c.text for c in chunk_post(walnut(), settings)]
    assert len(scripted.chat_requests) == 2  # keywords still asked, for the built-in chunks


@pytest.mark.parametrize(
    ("first", "why"),
    [
        ({"chunks": ["I bought two oak boards at the sawmill.", "It works on walnut too."]}, "not text"),
        ({"chunk_starts": [1, 99]}, "not a sentence of the post"),
        ({"chunks": ["I bought two walnut boards at the sawmill in Wickham."]}, "leave out"),
    ],
)
def test_invented_or_incomplete_chunks_fall_back(scripted, tmp_path, first, why):
    scripted.chat(json.dumps(first))
    settings = remote(scripted, tmp_path)
    prepared = prepare_post(walnut(), settings, LLMPrepOptions(llm_chunks=True))
    assert prepared.status == "fallback" and why in prepared.note
    assert [c.text for c in prepared.chunks] == [c.text for c in prepare_chunks(walnut(), settings)]
    assert len(scripted.requests) == 1


def test_fragmenting_and_garbage_rewrites_are_refused(scripted, tmp_path):
    text = " ".join(f"Sentence {w} tells about the {w} plane." for w in "abcdefghijkl")
    post = parse_text(text, "Planes")
    scripted.chat(
        json.dumps(
            {
                "rewrites": [{"id": 2, "text": "The Blog Is A Logbook"}],  # not the same sentence at all
                "chunk_starts": list(range(1, 13)),  # one chunk per sentence
            }
        )
    )
    settings = remote(scripted, tmp_path, chunk_tokens=300)
    prepared = prepare_post(post, settings, LLMPrepOptions(rewrite=True, llm_chunks=True))
    assert "12 chunks where the built-in chunker makes 1: too fragmented" in prepared.note
    assert "refused: it is a different sentence" in prepared.note
    assert [c.text for c in prepared.chunks] == [post.text] and not prepared.rewrite_applied


def test_a_server_without_json_schema_is_asked_again_without_it(scripted, tmp_path):
    scripted.error(400, "response_format json_schema is not supported by this server")
    scripted.chat(json.dumps(GOOD_FIRST))
    scripted.chat(keywords_reply(3))
    prepared = prepare_post(walnut(), remote(scripted, tmp_path), ALL)
    assert prepared.status == "ok"
    refused, first, keywords = scripted.chat_requests
    assert "response_format" in refused.body
    assert "response_format" not in first.body and "response_format" not in keywords.body  # remembered
    assert prepared.stats.calls == 3


def test_429_then_success_is_retried(scripted, tmp_path):
    scripted.error(429, "Rate limit reached", code="rate_limit_exceeded", retry_after="0.05")
    scripted.chat(json.dumps(GOOD_FIRST))
    scripted.error(503, "overloaded", retry_after="0.05")
    scripted.chat(keywords_reply(3))
    prepared = prepare_post(walnut(), remote(scripted, tmp_path), ALL)
    assert prepared.status == "ok" and prepared.rewritten_sentences == 2
    assert len(scripted.chat_requests) == 4 and prepared.stats.calls == 2


def test_a_long_post_sends_its_keywords_in_batches(scripted, tmp_path):
    scripted.responder = responder()
    text = "\n\n".join(
        f"Paragraph {i} is about the {w} bench and its joinery." for i, w in enumerate("abcdefgh")
    )
    post = parse_text(text, "Benches")
    settings = remote(scripted, tmp_path, prep_max_input_tokens=330, chunk_tokens=20)
    prepared = prepare_post(post, settings, LLMPrepOptions(llm_keywords=True))
    batches = len(scripted.chat_requests)
    assert batches > 1 and f"needed {batches} keyword requests" in prepared.note
    assert sum(n_chunks(r.body) for r in scripted.chat_requests) == len(prepared.chunks)
    assert all(c.keywords for c in prepared.chunks)


# Through ingest_posts: storage, hashes, failures ----------------------------------------------------------


def test_ingest_stores_the_rewrite_beside_the_original(scripted, tmp_path, embedder):
    scripted.responder = responder(GOOD_FIRST)
    settings = remote(scripted, tmp_path)
    store = Store(settings.data_dir)
    report = ingest_posts([walnut(), bees()], settings, store=store, embedder=embedder, llm=ALL)
    assert report.ok and report.count("new") == 2
    assert len(scripted.requests) == 4  # two per post
    assert report.llm.calls == 4 and report.llm.usage.total_tokens == 60 and report.llm.estimated_tokens > 0
    assert "LLM: 4 calls, 0 from cache" in report.summary()
    data = report.to_json()
    assert data["llm"]["calls"] == 4
    walnut_out = next(p for p in data["posts"] if p["post_id"] == "walnut-boards")
    assert walnut_out["llm"] == "ok" and walnut_out["rewritten"] == 2

    texts = [r["text"] for r in store.list_chunks("walnut-boards")]
    assert texts[1].startswith("The second walnut board cracked")
    assert [r["keywords"] for r in store.list_chunks("walnut-boards")] == [["topic1"], ["topic2"], ["topic3"]]
    assert store.get_post("walnut-boards")["raw"] == WALNUT
    with LLMCache(settings.data_dir) as cache:
        stored = cache.get_rewrite("walnut-boards")
        assert stored.status == "applied" and "The second one cracked" in stored.original
        assert "The second walnut board cracked" in stored.rewritten and len(stored.changes) == 2
        assert cache.get_meta("corpus_language") == "en"

    again = ingest_posts([walnut(), bees()], settings, store=store, embedder=embedder, llm=ALL)
    assert again.count("unchanged") == 2 and len(scripted.requests) == 4

    # The author rejects the rewrite: a different post hash, the reply reused, only keywords asked again.
    rejected = LLMPrepOptions(
        rewrite=True, llm_chunks=True, llm_keywords=True, decisions={"walnut-boards": False}
    )
    report = ingest_posts([walnut()], settings, store=store, embedder=embedder, llm=rejected)
    assert report.count("updated") == 1 and len(scripted.requests) == 5
    assert store.list_chunks("walnut-boards")[1]["text"].startswith("The second one cracked")
    with LLMCache(settings.data_dir) as cache:
        assert cache.get_rewrite("walnut-boards").status == "rejected"

    # Without the LLM stages the post is re-processed the built-in way.
    plain = ingest_posts([walnut()], settings, store=store, embedder=embedder)
    assert plain.count("updated") == 1 and plain.llm is None and len(scripted.requests) == 5
    assert [r["text"] for r in store.list_chunks("walnut-boards")] == [
        c.text for c in prepare_chunks(walnut(), settings)
    ]
    with LLMCache(settings.data_dir) as cache:
        assert cache.get_rewrite("walnut-boards") is None


def test_a_timeout_keeps_builtin_chunks_marks_the_post_and_retries_next_run(scripted, tmp_path, embedder):
    def answer(body: dict) -> Reply:
        if "Walnut boards" in body["messages"][1]["content"]:
            return Reply(chat_text="too late", delay=3)
        return responder()(body)

    scripted.responder = answer
    settings = remote(scripted, tmp_path, request_timeout=0.5, max_retries=0)
    store = Store(settings.data_dir)
    started = time.monotonic()
    report = ingest_posts([walnut(), bees()], settings, store=store, embedder=embedder, llm=ALL)
    assert time.monotonic() - started < 120  # a hang guard only: the timeout itself is checked below
    assert report.ok and report.count("new") == 2  # nothing lost
    by_id = {o.post_id: o for o in report.outcomes}
    assert by_id["walnut-boards"].llm == "failed" and "did not answer" in by_id["walnut-boards"].note
    assert by_id["on-bees"].llm == "ok"
    rows = store.list_chunks("walnut-boards")  # never a mix: the whole post the built-in way
    assert [r["text"] for r in rows] == [c.text for c in prepare_chunks(walnut(), settings)]
    assert not any(k.startswith("topic") for r in rows for k in r["keywords"])
    assert store.get_post("walnut-boards")["content_hash"].endswith(LLM_FAILED)

    scripted.responder = responder(GOOD_FIRST)
    retry = ingest_posts([walnut(), bees()], settings, store=store, embedder=embedder, llm=ALL)
    assert retry.count("unchanged") == 1 and retry.count("updated") == 1
    assert {o.post_id: o.llm for o in retry.outcomes if o.llm} == {"walnut-boards": "ok"}


def test_without_llm_options_ingest_and_its_report_are_unchanged(tmp_path, embedder):
    settings = Settings(data_dir=tmp_path / "db")
    post = walnut()
    assert post_hash(post, settings) == post_hash(post, settings, None)
    assert post_hash(post, settings) != post_hash(post, settings, ALL.hash_key(post.post_id, settings))
    report = ingest_posts([post], settings, embedder=embedder, llm=LLMPrepOptions())
    data = report.to_json()
    assert "llm" not in data and set(data["posts"][0]) == {
        "post_id",
        "title",
        "source",
        "status",
        "chunks",
        "message",
    }
    assert "LLM" not in report.summary()
    assert Store(settings.data_dir).get_post("walnut-boards")["content_hash"] == post_hash(post, settings)


def test_preview_then_ingest_asks_for_the_rewrite_once(scripted, tmp_path, embedder):
    scripted.responder = responder(GOOD_FIRST)
    settings = remote(scripted, tmp_path)
    proposal = preview_rewrite(walnut(), settings, ALL)
    assert proposal.changed == 2 and not proposal.error and len(scripted.requests) == 1
    assert [c.id for c in proposal.changes] == [3, 5]
    decided = LLMPrepOptions(
        rewrite=True, llm_chunks=True, llm_keywords=True, decisions={"walnut-boards": True}
    )
    report = ingest_posts([walnut()], settings, embedder=embedder, llm=decided)
    assert report.llm.calls == 1 and report.llm.cached == 1  # only the keywords were new
    with LLMCache(settings.data_dir) as cache:
        assert cache.get_rewrite("walnut-boards").status == "accepted"


def test_preview_reports_a_failed_request(scripted, tmp_path):
    scripted.error(401, "no key")
    proposal = preview_rewrite(walnut(), remote(scripted, tmp_path))
    assert proposal.error and "401" in proposal.error and proposal.changes == []


# Command line ---------------------------------------------------------------------------------------------


def test_cli_ingest_with_llm_options_and_dry_run(scripted, tmp_path, monkeypatch):
    from core.cli import main

    for name in ("OPENAI_API_KEY", "INKWELL_PREP_MODEL", "INKWELL_CHAT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", scripted.base_url)
    monkeypatch.setenv("INKWELL_MAX_RETRIES", "0")
    scripted.responder = responder(GOOD_FIRST)
    post_file = tmp_path / "walnut.md"
    post_file.write_text(WALNUT, encoding="utf-8")
    db = tmp_path / "db"
    args = ["ingest", str(post_file), "--rewrite", "--llm-chunks", "--llm-keywords", "--data-dir", str(db)]

    dry = CliRunner().invoke(main, [*args, "--dry-run", "--chunk-tokens", "40"], catch_exceptions=False)
    assert dry.exit_code == 0, dry.output
    assert "2 sentences rewritten" in dry.output
    assert "- The second one cracked along the grain." in dry.output
    assert "+ The second walnut board cracked along the grain." in dry.output
    assert "chunk 2 [Finish]" in dry.output and "LLM: 2 calls" in dry.output
    assert Store(db).counts() == (0, 0)  # nothing stored

    real = CliRunner().invoke(main, [*args, "--chunk-tokens", "40", "--llm-concurrency", "2"])
    assert real.exit_code == 0, real.output
    assert "walnut: 2 sentences rewritten; LLM ok" in real.output
    assert "LLM: 0 calls, 2 from cache" in real.output  # the dry run's replies were cached
    assert len(scripted.requests) == 2
    assert Store(db).list_chunks("walnut")[1]["text"].startswith("The second walnut board")

    bad = CliRunner().invoke(main, ["ingest", str(post_file), "--dry-run", "--data-dir", str(db)])
    assert bad.exit_code == 2 and "--dry-run needs" in bad.output


# Built-in llama.cpp server: structure and fallbacks, not quality -------------------------------------------

TINY = "I planed the oak board. It warped overnight. [REF: shop notes]\n\nThe second board stayed flat."


@pytest.fixture
def builtin(tmp_path) -> Settings:
    settings = Settings.load({"data_dir": tmp_path / "db", "chunk_tokens": 30}, environ={})
    assert settings.uses_builtin_llm
    return settings


def normalised(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.llm
def test_builtin_rewrite_proposal_keeps_structure(builtin):
    post = parse_text(TINY, "Planing oak")
    proposal = preview_rewrite(post, builtin)
    assert not proposal.error, proposal.error
    assert proposal.stats.calls == 1
    assert proposal.rewritten.count("\n\n") == proposal.original.count("\n\n")  # paragraphs kept
    assert TAG_RE.findall(proposal.rewritten) == ["[REF: shop notes]"]
    for change in proposal.changes:
        assert change.before in proposal.original and change.after in proposal.rewritten


@pytest.mark.llm
def test_builtin_chunks_cover_the_post_or_fall_back(builtin):
    post = parse_text(TINY, "Planing oak")
    prepared = prepare_post(post, builtin, LLMPrepOptions(llm_chunks=True))
    assert prepared.status in ("ok", "fallback") and prepared.stats.calls == 1
    assert normalised(" ".join(c.text for c in prepared.chunks)) == normalised(post.text)
    assert all(c.keywords for c in prepared.chunks)  # built-in keywords (that stage was off)


@pytest.mark.llm
def test_builtin_keywords_are_clean_and_cached(builtin):
    post = parse_text(TINY, "Planing oak")
    with LLMCache(builtin.data_dir) as cache:
        prepared = prepare_post(post, builtin, LLMPrepOptions(llm_keywords=True), cache=cache)
        assert prepared.status in ("ok", "fallback") and prepared.stats.calls == 1
        for chunk in prepared.chunks:
            assert 1 <= len(chunk.keywords) <= 6
            assert all(k == k.lower() and k.strip() for k in chunk.keywords)
            assert clean_keywords(chunk.keywords) == chunk.keywords or prepared.status == "fallback"
        again = prepare_post(post, builtin, LLMPrepOptions(llm_keywords=True), cache=cache)
    assert again.stats.calls == 0 and again.stats.cached == 1
    assert [c.keywords for c in again.chunks] == [c.keywords for c in prepared.chunks]
