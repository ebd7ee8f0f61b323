"""Every command on every storage backend: the whole-command tests run against a local folder and against
the loopback S3 server (moto, tests/s3_server.py), on the demo blog's three collections.

Commands run through the real click entry point in this process (CliRunner), so the vectors come from
the hash embedding server on 127.0.0.1 (tests/writers_support.py) and the answer model is a scripted
OpenAI-compatible server there too: the storage paths are the same with any embedder, and nothing but
the table's location changes between the two runs of each test.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from tests.conftest import DEMO
from tests.servers import Reply, ScriptedOpenAIServer
from tests.writers_support import EMBED_MODEL, hash_vector, paragraphs, post, write_posts

BACKENDS = ("local", "s3")
# Every command of the CLI, each exercised below on both backends; a command added later must be added
# here, with a test, or test_every_command_is_run_on_every_backend fails.
COMMANDS = {
    "ask",
    "calibrate",
    "changes",
    "chunks list",
    "chunks show",
    "clean",
    "doctor",
    "eval",
    "export",
    "import",
    "info",
    "ingest",
    "posts",
    "posts delete",
    "posts list",
    "posts show",
    "questions",
    "questions purge",
    "reembed",
    "route",
    "search",
    "sources",
    "sync",
    "settings set",
    "settings show",
    "settings suggest",
    "undo",
}
ANSWER = "I buy almost all my wood at Dunmore Brothers Sawmill in Pelham Falls."
QUESTION = "how do you pick wood at the sawmill"


def respond(body: dict) -> Reply:
    """Embeddings: the hash vectors; chat: one sentence of the demo blog."""
    if "messages" in body:
        return Reply(chat_text=ANSWER)
    return Reply(vectors=[hash_vector(t) for t in body.get("input") or []])


@pytest.fixture(scope="module")
def model_server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as server:
        server.responder = respond
        yield server


@pytest.fixture(scope="module")
def s3_server():
    pytest.importorskip("moto", reason="moto[server] (requirements-dev.txt) runs the S3 test server")
    from tests.s3_server import S3Server

    with S3Server() as server:
        yield server


@dataclass
class Backend:
    name: str
    env: dict[str, str]
    root: str  # a folder, or an s3:// prefix
    local: Path  # side files (reply cache, routing rules) and posts folders

    def table(self, name: str) -> str:
        """A data directory of its own on this backend."""
        return f"{self.root}/{name}-{uuid.uuid4().hex[:8]}"

    def cli(self, *args: str, data_dir: str, ok: bool = True, input: str | None = None) -> Result:
        from core.cli import main

        result = CliRunner().invoke(
            main, [*args], env={**self.env, "INKWELL_DATA_DIR": data_dir}, input=input
        )
        if ok:
            assert result.exit_code == 0, (args, result.output, result.stderr, result.exception)
        return result


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request, model_server, tmp_path_factory) -> Backend:
    local = tmp_path_factory.mktemp(f"backend-{request.param}")
    env = {
        "INKWELL_EMBED_BACKEND": "openai",
        "INKWELL_EMBED_BASE_URL": model_server.base_url,
        "INKWELL_EMBED_MODEL": EMBED_MODEL,
        "OPENAI_BASE_URL": model_server.base_url,
        "OPENAI_API_KEY": "sk-test",
        "INKWELL_MAX_RETRIES": "0",
        "INKWELL_LOCAL_DIR": str(local / "home"),
    }
    if request.param == "local":
        return Backend("local", env, str(local / "tables"), local)
    s3 = request.getfixturevalue("s3_server")
    return Backend("s3", {**env, **s3.env}, s3.uri(f"backends-{uuid.uuid4().hex[:6]}"), local)


@pytest.fixture(scope="module")
def demo(backend: Backend) -> str:
    """The demo blog (20 posts in three collections) ingested once per backend; tests here only read it."""
    data_dir = backend.table("demo")
    result = backend.cli("ingest", "--json", str(DEMO / "posts"), data_dir=data_dir)
    report = json.loads(result.stdout)
    assert report["new"] == 20 and report["failed"] == 0, report
    return data_dir


def lines_json(result: Result) -> list[dict]:
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


# Reading commands on the demo table -----------------------------------------------------------------------


def test_info_lists_the_three_collections(backend, demo):
    info = json.loads(backend.cli("info", "--json", data_dir=demo).stdout)
    assert info["posts"] == 20 and info["chunks"] > 20
    assert info["collections"] == ["books", "projects", "writings"]
    assert info["data_dir"] == (demo if backend.name == "s3" else str(Path(demo).resolve()))


def test_search_routes_between_collections_in_every_mode(backend, demo):
    """Routing reads each collection's nearest chunk: the path that failed on s3:// (issue #31)."""
    for mode in ("hybrid", "dense", "fts"):
        found = json.loads(backend.cli("search", "--json", "--mode", mode, QUESTION, data_dir=demo).stdout)
        assert found["hits"], (mode, found)
    only = json.loads(
        backend.cli(
            "search", "--json", "--collection", "books", "--mode", "dense", QUESTION, data_dir=demo
        ).stdout
    )
    assert only["hits"] and {h["collection"] for h in only["hits"]} == {"books"}
    decision = json.loads(backend.cli("route", "--json", QUESTION, data_dir=demo).stdout)
    assert set(decision) >= {"status", "collections", "guess"}, decision


def test_ask_in_each_answer_mode(backend, demo, model_server):
    extractive = json.loads(
        backend.cli("ask", "--json", "--answer-mode", "extractive", QUESTION, data_dir=demo).stdout
    )
    assert extractive["answer_mode"] == "extractive" and extractive["sentences"]
    text = {s["post_id"]: s["text"] for s in extractive["sentences"]}
    assert all(sentence in extractive["answer"] for sentence in text.values())
    for mode in ("generative", "auto"):
        before = len(model_server.chat_requests)
        reply = json.loads(
            backend.cli("ask", "--json", "--answer-mode", mode, QUESTION, data_dir=demo).stdout
        )
        assert reply["answer"], (mode, reply)
        if reply["answer_mode"] == "generative":
            assert len(model_server.chat_requests) > before  # the model was asked, over HTTP


def test_posts_and_chunks_commands(backend, demo):
    posts = lines_json(backend.cli("posts", "list", "--json", data_dir=demo))
    assert len(posts) == 20 and {p["collection"] for p in posts} == {"books", "projects", "writings"}
    first = posts[0]["post_id"]
    shown = backend.cli("posts", "show", first, data_dir=demo).stdout
    assert posts[0]["title"] in shown
    about = lines_json(backend.cli("posts", "--about", QUESTION, "--json", data_dir=demo))
    assert about and all("post_id" in row for row in about)
    chunks = lines_json(backend.cli("chunks", "list", "--post", first, "--json", data_dir=demo))
    assert chunks and {c["post_id"] for c in chunks} == {first}
    chunk = json.loads(backend.cli("chunks", "show", chunks[0]["chunk_id"], data_dir=demo).stdout)
    assert chunk["chunk_id"] == chunks[0]["chunk_id"] and chunk["embedded_text"]


def test_export_eval_and_clean(backend, demo, tmp_path):
    exported = tmp_path / "chunks.json"
    backend.cli("export", str(exported), data_dir=demo)
    items = json.loads(exported.read_text(encoding="utf-8"))
    assert len(items) == json.loads(backend.cli("info", "--json", data_dir=demo).stdout)["chunks"]
    evaluated = backend.cli(
        "eval",
        "--queries",
        str(DEMO / "eval" / "queries.jsonl"),
        "--qrels",
        str(DEMO / "eval" / "qrels.tsv"),
        "--mode",
        "fts",
        "--json",
        data_dir=demo,
    )
    assert "ndcg" in evaluated.stdout.lower()
    cleaned = backend.cli("clean", "--dry-run", data_dir=demo)
    assert cleaned.exit_code == 0
    assert json.loads(backend.cli("info", "--json", data_dir=demo).stdout)["posts"] == 20


def test_calibrate_reads_the_stored_table(backend, demo):
    """The bar calibrated on this backend's demo table (not written: the profiles ship with the code)."""
    result = backend.cli(
        "calibrate",
        "--queries",
        str(DEMO / "eval" / "queries.jsonl"),
        "--off-topic",
        str(DEMO / "eval" / "offtopic.jsonl"),
        "--json",
        data_dir=demo,
    )
    calibrated = json.loads(result.stdout)
    assert (
        calibrated["written"] is False
        and calibrated["model_id"]
        == json.loads(backend.cli("info", "--json", data_dir=demo).stdout)["table_embedding_model"]
    )
    groups = [calibrated["calibration"][g] for g in ("same_language", "other_language")]
    assert sum(g["on_topic"] for g in groups) == 15 and sum(g["off_topic"] for g in groups) == 40


def test_the_chat_answers_on_the_demo_table(backend, demo, monkeypatch):
    """The app's chat, routed between the three collections, on this backend (AppTest)."""
    from tests.conftest import isolate_app, open_app, shown

    isolate_app(monkeypatch, demo)  # type: ignore[arg-type]
    for name, value in backend.env.items():
        monkeypatch.setenv(name, value)
    at = open_app()
    at.chat_input[0].set_value(QUESTION).run()
    assert not at.exception, at.exception
    assert not shown(at.error)
    answer = at.chat_message[1]
    assert "".join(shown(answer.markdown)).strip()


def test_tell_me_more_searches_the_last_question_again_with_no_model_call(
    backend, demo, model_server, monkeypatch
):
    """A reader's "tell me more" in the chat, on this backend: the question before it is searched again
    (shown as such), and no model is asked to rewrite it (a reader spends no model call on it)."""
    from core.answer.question import REWRITE_PROMPT
    from tests.conftest import isolate_app, open_app, shown

    isolate_app(monkeypatch, demo)  # type: ignore[arg-type]
    for name, value in backend.env.items():
        monkeypatch.setenv(name, value)
    at = open_app()
    at.chat_input[0].set_value(QUESTION).run()
    rewrites = lambda: sum(  # noqa: E731
        r.body["messages"][0]["content"] == REWRITE_PROMPT for r in model_server.chat_requests
    )
    before = rewrites()
    at.chat_input[0].set_value("tell me more").run()
    assert not at.exception, at.exception
    assert at.session_state["chat_messages"][-1]["searched"] == QUESTION
    assert f"Searched for: {QUESTION}" in shown(at.caption)
    assert rewrites() == before


# Writing commands, each on a table of its own ---------------------------------------------------------------


def small_blog(backend: Backend, name: str) -> Path:
    return write_posts(
        backend.local / name / "essays",
        {
            "oak": post("On Oak", paragraphs("oak"), "essays"),
            "ash": post("On Ash", paragraphs("ash"), "notes"),
            "elm": post("On Elm", paragraphs("elm"), "projects"),
        },
    )


def post_ids(backend: Backend, data_dir: str) -> set[str]:
    return {p["post_id"] for p in lines_json(backend.cli("posts", "list", "--json", data_dir=data_dir))}


def test_delete_changes_undo_and_doctor(backend):
    data_dir = backend.table("undo")
    folder = small_blog(backend, f"undo-{uuid.uuid4().hex[:6]}")
    backend.cli("ingest", str(folder), data_dir=data_dir)
    backend.cli("posts", "delete", "ash", data_dir=data_dir)
    assert post_ids(backend, data_dir) == {"oak", "elm"}
    logged = lines_json(backend.cli("changes", "--json", data_dir=data_dir))
    assert logged[0]["label"].startswith("deletion of 1 post") and logged[0]["posts"] == ["ash"]
    undone = json.loads(backend.cli("undo", "--json", data_dir=data_dir).stdout)
    assert undone["undone"] and undone["restored"] == ["ash"]
    assert post_ids(backend, data_dir) == {"oak", "ash", "elm"}
    hits = json.loads(
        backend.cli(
            "search",
            "--json",
            "--mode",
            "fts",
            "--no-route",
            paragraphs("ash").split(".")[0],
            data_dir=data_dir,
        ).stdout
    )
    assert hits["hits"][0]["post_id"] == "ash"  # its chunks came back with it
    again = backend.cli("undo", logged[0]["change_id"], data_dir=data_dir, ok=False)
    assert again.exit_code == 1 and "undone already" in again.stderr
    assert "nothing to mend" in backend.cli("doctor", data_dir=data_dir).stdout


def test_a_chunk_edit_is_undone_alone(backend):
    from core.config import Settings
    from core.ingest import edit_chunk

    data_dir = backend.table("edit")
    folder = small_blog(backend, f"edit-{uuid.uuid4().hex[:6]}")
    backend.cli("ingest", str(folder), data_dir=data_dir)
    chunk_id = lines_json(backend.cli("chunks", "list", "--post", "oak", "--json", data_dir=data_dir))[0][
        "chunk_id"
    ]
    environ = {**backend.env, "INKWELL_DATA_DIR": data_dir}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in environ.items():
            patch.setenv(name, value)
        edit_chunk(chunk_id, Settings.load(environ=environ), text="A zebrawood marquetry panel.")
    # Another post changes after the edit: undoing the edit leaves it alone.
    write_posts(
        folder,
        {"elm": post("On Elm", "Elm is hard to split, which is why hubs were made of it.", "projects")},
    )
    backend.cli("ingest", str(folder), data_dir=data_dir)
    edit = next(
        c
        for c in lines_json(backend.cli("changes", "--json", data_dir=data_dir))
        if c["label"].startswith("edit")
    )
    backend.cli("undo", edit["change_id"], data_dir=data_dir)
    assert (
        "zebrawood"
        not in json.loads(backend.cli("chunks", "show", chunk_id, data_dir=data_dir).stdout)["text"]
    )
    assert "hubs were made" in backend.cli("posts", "show", "elm", "--raw", data_dir=data_dir).stdout


def test_import_and_reembed(backend, demo, tmp_path):
    exported = tmp_path / "chunks.json"
    backend.cli("export", str(exported), data_dir=demo)
    data_dir = backend.table("import")
    imported = json.loads(backend.cli("import", "--json", str(exported), data_dir=data_dir).stdout)
    assert imported["new"] == 20 and imported["failed"] == 0
    backend.cli("reembed", "--embed-model", "hash-embed-2", data_dir=data_dir)
    info = json.loads(backend.cli("info", "--json", data_dir=data_dir).stdout)
    assert info["table_embedding_model"] == "openai:hash-embed-2" and info["posts"] == 20
    env_model = {**backend.env, "INKWELL_EMBED_MODEL": "hash-embed-2"}
    found = CliRunner().invoke(
        __import__("core.cli", fromlist=["main"]).main,
        ["search", "--json", "--mode", "dense", QUESTION],
        env={**env_model, "INKWELL_DATA_DIR": data_dir},
    )
    assert found.exit_code == 0 and json.loads(found.stdout)["hits"], found.output


def test_asked_questions_are_logged_listed_grouped_and_purged(backend):
    """One question log for every process on this backend: `ask` writes it, `questions` reads it."""
    data_dir = backend.table("questions")
    backend.cli("ingest", str(small_blog(backend, f"questions-{uuid.uuid4().hex[:6]}")), data_dir=data_dir)
    asked = json.loads(backend.cli("ask", "--json", "how is oak split", data_dir=data_dir).stdout)
    backend.cli("ask", "who won the 2018 world cup", data_dir=data_dir)
    rows = lines_json(backend.cli("questions", "--json", data_dir=data_dir))
    assert {r["question"] for r in rows} == {"how is oak split", "who won the 2018 world cup"}
    assert asked["question_id"] in {r["question_id"] for r in rows} and {r["source"] for r in rows} == {"cli"}
    topics = lines_json(backend.cli("questions", "--topics", "--json", data_dir=data_dir))
    assert sum(t["count"] for t in topics) == sum(r["declined"] for r in rows)
    purged = backend.cli("questions", "purge", "--yes", data_dir=data_dir)
    assert "deleted 2 logged questions" in purged.stderr
    assert backend.cli("questions", "--json", data_dir=data_dir).stdout == ""


# The owner's settings (core/answer/owner.py), saved with the tables -----------------------------------------

PERSONA = "You are {author_name}, who answers in short plain sentences. Say so when the posts do not."
STARTERS = ("How do you pick wood?", "What tools do you use?", "Why did you start the blog?")


def test_settings_are_saved_with_the_tables_and_used_by_the_next_answer(backend, demo, model_server):
    data_dir = backend.table("settings")
    backend.cli("settings", "set", "author_name", "Jo Shavings", data_dir=data_dir)
    backend.cli("settings", "set", "persona_prompt", PERSONA, data_dir=data_dir)
    backend.cli("settings", "set", "starters", *STARTERS, data_dir=data_dir)
    shown = json.loads(backend.cli("settings", "show", "--json", data_dir=data_dir).stdout)
    assert shown["persona_prompt"] == PERSONA and shown["starters"] == list(STARTERS)
    assert shown["author_name"] == "Jo Shavings" and shown["greeting"] == ""
    bad = backend.cli("settings", "set", "persona_prompt", "You are {author}.", data_dir=data_dir, ok=False)
    assert bad.exit_code == 1 and "unknown placeholder {author}" in bad.output
    assert json.loads(backend.cli("settings", "show", "--json", data_dir=data_dir).stdout) == shown

    # On the demo table: the next generated answer is sent the saved persona, the name filled in.
    backend.cli("settings", "set", "persona_prompt", PERSONA, data_dir=demo)
    backend.cli("settings", "set", "author_name", "Jo Shavings", data_dir=demo)
    before = len(model_server.chat_requests)
    backend.cli("ask", "--json", "--answer-mode", "generative", QUESTION, data_dir=demo)
    sent = model_server.chat_requests[before:]
    assert sent and sent[-1].body["messages"][0]["content"] == PERSONA.replace("{author_name}", "Jo Shavings")
    backend.cli("settings", "set", "persona_prompt", data_dir=demo)  # cleared: the default prompt again
    backend.cli("settings", "set", "author_name", data_dir=demo)

    suggested = backend.cli("settings", "suggest", "--count", "3", data_dir=demo).stdout.splitlines()
    assert 1 <= len(suggested) <= 3 and all(q.endswith("?") for q in suggested)


SAVER = """
import sys
from core.answer.owner import save_owner
from core.store import Store

store, key = Store(sys.argv[1]), sys.argv[2]
for i in range(int(sys.argv[3])):
    save_owner(store, {key: f"{key} {i}"})
"""


def test_two_processes_saving_settings_at_once_both_land(backend, tmp_path):
    """Two real processes save different settings in a loop at the same time: every save commits (lance
    rebases a merge on the key, retry_commit retries what it does not), and each one's last value is
    what a third process reads."""
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    data_dir = backend.table("saves")
    backend.cli("settings", "set", "chat_title", "first", data_dir=data_dir)  # the table exists
    env = {**os.environ, **backend.env}
    saves = 6
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SAVER, data_dir, key, str(saves)],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for key in ("greeting", "decline_text")
    ]  # fmt: skip
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    shown = json.loads(backend.cli("settings", "show", "--json", data_dir=data_dir).stdout)
    assert shown["greeting"] == f"greeting {saves - 1}"
    assert shown["decline_text"] == f"decline_text {saves - 1}"
    assert shown["chat_title"] == "first"


def test_the_same_id_from_another_file_is_refused_without_replace(backend):
    data_dir = backend.table("same-id")
    base = backend.local / f"same-{uuid.uuid4().hex[:6]}"
    one = write_posts(base / "one", {"notes": post("Notes", "Oak splits along the rays, so I rive it.")})
    two = write_posts(base / "two", {"notes": post("Notes", "Ash bends when steamed; oak does too, less.")})
    backend.cli("ingest", str(one), data_dir=data_dir)
    refused = backend.cli("ingest", str(two), data_dir=data_dir, ok=False)
    assert refused.exit_code == 1
    assert f"is taken by {one / 'notes.md'}" in refused.stderr and "--replace" in refused.stderr
    assert (
        "rive it" in backend.cli("posts", "show", "notes", "--raw", data_dir=data_dir).stdout
    )  # nothing lost
    replaced = backend.cli("ingest", "--replace", str(two), data_dir=data_dir)
    assert f"replaced the post read from {one / 'notes.md'}" in replaced.stderr
    assert "steamed" in backend.cli("posts", "show", "notes", "--raw", data_dir=data_dir).stdout


def test_web_sources_are_remembered_and_synced(backend):
    """The sources table lives beside the others: on s3:// too (tests/integration/test_web_sync.py has the rest)."""
    from tests.site_server import SiteServer

    data_dir = backend.table("sources")
    with SiteServer() as site:
        site.page(
            "/posts/oak/",
            "<html><head><title>Oak</title></head><body><p>Oak splits along its rays.</p></body></html>",
        )
        site.add(
            "/sitemap.xml",
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>{site.url("/posts/oak/")}</loc></url></urlset>',
            "application/xml",
        )
        backend.cli("ingest", site.url("/sitemap.xml"), data_dir=data_dir)
        site.page(
            "/posts/oak/",
            "<html><head><title>Oak</title></head><body><p>Oak splits; ash bends.</p></body></html>",
        )
        synced = json.loads(backend.cli("sync", "--json", data_dir=data_dir).stdout)
    assert synced["ok"] and synced["sources"][0]["report"]["updated"] == 1
    listed = lines_json(backend.cli("sources", "--json", data_dir=data_dir))
    assert [(s["url"], s["kind"], s["posts"]) for s in listed] == [(site.url("/sitemap.xml"), "sitemap", 1)]
    assert "ash bends" in backend.cli("posts", "show", "oak", "--raw", data_dir=data_dir).stdout


def test_a_path_source_is_remembered_synced_and_pruned(backend):
    """A local folder remembered with tables on s3:// too: the path is this machine's, the source row
    the table's (tests/integration/test_path_sources.py has the rest)."""
    data_dir = backend.table("path-source")
    folder = backend.local / f"path-{uuid.uuid4().hex[:6]}"
    write_posts(
        folder,
        {
            "oak": post("Oak", "Oak splits along the rays, so I rive it."),
            "ash": post("Ash", "Ash bends when steamed for an hour per inch."),
        },
    )
    backend.cli("ingest", "--remember", str(folder), data_dir=data_dir)
    (folder / "ash.md").unlink()
    write_posts(folder, {"elm": post("Elm", "Elm has interlocked grain and will not split.")})
    synced = json.loads(backend.cli("sync", "--prune", "--json", data_dir=data_dir).stdout)
    (source,) = synced["sources"]
    assert synced["ok"] and source["pruned"] and [g["post_id"] for g in source["gone"]] == ["ash"]
    assert (source["report"]["new"], source["report"]["unchanged"]) == (1, 1)
    posts = {p["post_id"] for p in lines_json(backend.cli("posts", "list", "--json", data_dir=data_dir))}
    assert posts == {"oak", "elm"}
    listed = lines_json(backend.cli("sources", "--json", data_dir=data_dir))
    assert [(s["url"], s["kind"], s["posts"]) for s in listed] == [(str(folder), "path", 2)]
    backend.cli("sources", "--remove", str(folder), data_dir=data_dir)
    assert backend.cli("sources", "--json", data_dir=data_dir).stdout == ""


# The command list itself ------------------------------------------------------------------------------------


def command_paths(group: click.Group, prefix: str = "") -> set[str]:
    paths = set()
    for name, command in group.commands.items():
        path = f"{prefix}{name}"
        if isinstance(command, click.Group):
            paths |= command_paths(command, f"{path} ")
            if not command.invoke_without_command:
                continue  # only a name for its subcommands
        paths.add(path)
    return paths


def test_every_command_is_run_on_every_backend():
    """COMMANDS is the CLI's whole command list, and this module runs each one through Backend.cli."""
    from core.cli import main

    assert command_paths(main) == COMMANDS, (
        "a command without a backend test (or one removed): update COMMANDS"
    )
    source = Path(__file__).read_text(encoding="utf-8")
    for command in sorted(COMMANDS):
        words = r",\s*".join(f'"{re.escape(w)}"' for w in command.split())
        assert re.search(r"\.cli\(\s*" + words + r"\s*,", source), f"no backend test runs `inkwell {command}`"
