"""The `inkwell` command line over real tables in a temp dir."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from core.cli import main
from tests import cli_support
from tests.cli_support import run
from tests.conftest import write
from tests.site_server import SiteServer

HIT_KEYS = {
    "post_id",
    "title",
    "collection",
    "chunk_id",
    "section",
    "text",
    "keywords",
    "relevance",
    "rank",
    "url",
}

corpus = cli_support.corpus  # the fixture: three files in a folder


def test_ingest_search_and_idempotence(corpus, tmp_path):
    db = tmp_path / "db"
    first = run("ingest", str(corpus), "--json", data_dir=db)
    assert first.exit_code == 0, first.output
    report = json.loads(first.stdout)
    assert report["new"] == 3 and report["failed"] == 0 and report["chunks_embedded"] >= 3

    again = json.loads(run("ingest", str(corpus), "--json", data_dir=db).stdout)
    assert again["unchanged"] == 3 and again["chunks_embedded"] == 0

    # One short post makes one chunk, and the summary says so in the singular.
    write(tmp_path / "one" / "coffee.txt", "Coffee\n\nI grind the beans just before brewing.\n")
    single = run("ingest", str(tmp_path / "one"), data_dir=db)
    assert "1 new, 0 updated, 0 unchanged, 0 failed; 1 chunk embedded, 0 reused" in single.stdout, (
        single.output
    )

    found = run("search", "which tomatoes split?", "--json", "--k", "2", data_dir=db)
    out = json.loads(found.stdout)
    assert out["query"] == "which tomatoes split?"
    assert 1 <= len(out["hits"]) <= 2
    assert set(out["hits"][0]) == HIT_KEYS
    assert out["hits"][0]["post_id"] == "garden" and out["hits"][0]["section"] == "Tomatoes"
    assert out["hits"][0]["rank"] == 1 and 0 < out["hits"][0]["relevance"] <= 1


def test_batch_search_prints_one_json_line_per_query(corpus, tmp_path):
    db = tmp_path / "db"
    run("ingest", str(corpus), data_dir=db)
    queries = write(
        tmp_path / "q.jsonl", '{"id": "a", "text": "tea temperature"}\n{"id": "b", "text": "sleeper train"}\n'
    )
    result = run("search", "--queries", str(queries), "--k", "1", "--json", data_dir=db)
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["id"] for line in lines] == ["a", "b"]
    assert [line["hits"][0]["post_id"] for line in lines] == ["tea", "trains"]
    empty = run("search", "--queries", str(write(tmp_path / "e.jsonl", "\n")), "--json", data_dir=db)
    assert empty.exit_code == 1 and "e.jsonl holds no questions" in empty.output and empty.stdout == ""


def test_title_goes_with_standard_input_only(corpus, tmp_path):
    """--title names the post read from '-'; given with files only it would be dropped, so it is refused
    before anything is read, as '-' without --title is."""
    db = tmp_path / "db"
    lost = run("ingest", str(corpus / "essays" / "trains.txt"), "--title", "Sleepers", data_dir=db)
    assert lost.exit_code == 2 and "--title names the post read from standard input" in lost.output
    untitled = run("ingest", str(corpus / "essays"), "-", data_dir=db, input="Some words.")
    assert untitled.exit_code == 2 and "needs --title" in untitled.output
    assert run("posts", "list", "--ids", data_dir=db).stdout == ""  # neither read the folder
    # Text no other test embeds: a vector this process cached would skip the embedding step.
    pasted = run("ingest", "-", "--title", "Pasted", data_dir=db, input="My oilstone is a soft Arkansas.")
    assert pasted.exit_code == 0, pasted.output
    assert "ingesting: 0/1 posts; embedding: 1 of 1 chunk" in pasted.stderr.splitlines()  # not "1 chunks"
    assert run("posts", "list", "--ids", data_dir=db).stdout.split() == ["pasted"]


def test_standard_input_not_in_utf8_is_read_as_a_file_would_be(tmp_path):
    """Latin-1 bytes piped to `ingest -` are read as Windows-1252 with a warning, as the same bytes in a
    file are; they were refused with "'utf-8' codec can't encode character '\\udce9' … surrogates not
    allowed". Bytes that are no text are refused naming standard input."""
    db = tmp_path / "db"
    latin = "Café au lait while I sand the maple legs.".encode("cp1252")
    piped = run("ingest", "-", "--title", "Sanding", "--json", data_dir=db, input=latin)
    assert piped.exit_code == 0, piped.output
    assert json.loads(piped.stdout)["warnings"][0]["source"] == "standard input"
    assert "warning standard input: is not UTF-8 (byte 0xE9 at offset 3)" in piped.stderr
    shown = run("posts", "show", "sanding", "--raw", data_dir=db)
    assert shown.stdout.startswith("Café au lait while I sand")
    binary = run("ingest", "-", "--title", "Blob", data_dir=db, input=b"\x00\x01\x02 not text")
    assert binary.exit_code == 1 and "standard input looks binary" in binary.stderr


def test_undo_json_says_when_the_change_was_undone(corpus, tmp_path):
    """`undo --json` gives the change as `changes --json` then shows it: it said "undone_at": null."""
    db = tmp_path / "db"
    assert run("ingest", str(corpus), data_dir=db).exit_code == 0
    undone = run("undo", "--json", data_dir=db)
    assert undone.exit_code == 0, undone.output
    reply = json.loads(undone.stdout)
    logged = json.loads(run("changes", "--json", data_dir=db).stdout)
    assert reply["undone"] and reply["undone_at"] and reply["undone_at"] == logged["undone_at"]


def test_posts_show_and_export_help_say_what_they_print(corpus, tmp_path):
    """`posts show --help` promised "metadata and raw text" (it prints one or the other), and `export
    --help` a format named after a project a blogger never heard of ("NUMAIN's chunks.json")."""
    db = tmp_path / "db"
    assert run("ingest", str(corpus), data_dir=db).exit_code == 0
    details = json.loads(run("posts", "show", "garden", data_dir=db).stdout)
    assert details["title"] == "The Garden" and "raw" not in details  # no text without --raw
    assert run("posts", "show", "garden", "--raw", data_dir=db).stdout.startswith("---\ntitle: The Garden")
    shown = " ".join(CliRunner().invoke(main, ["posts", "show", "--help"]).output.split())
    assert "metadata and raw text" not in shown
    assert (
        "details as JSON" in shown and "without its text; with --raw, only its raw text as ingested" in shown
    )
    export = " ".join(CliRunner().invoke(main, ["export", "--help"]).output.split())
    assert "NUMAIN" not in export and "a JSON list with one object per chunk" in export


def test_a_post_now_marked_draft_is_removed_by_its_next_ingest_and_undone(corpus, tmp_path):
    """A stored post whose file now says `draft: true` stayed stored and quoted to readers; the ingest
    only warned "left out". Its author unpublished it: the ingest removes it, says so, and undo puts it
    back."""
    db = tmp_path / "db"
    assert run("ingest", str(corpus), data_dir=db).exit_code == 0
    garden = corpus / "essays" / "garden.md"
    garden.write_text(garden.read_text().replace("slug: garden\n", "slug: garden\ndraft: true\n"))
    # Another file's draft that happens to share a stored id is not the post unpublished: left alone.
    write(corpus / "notes" / "trains.md", "---\ntitle: Night Trains\nslug: trains\ndraft: true\n---\nSoon.\n")
    again = run("ingest", str(corpus), "--json", data_dir=db)
    assert again.exit_code == 0, again.output
    report = json.loads(again.stdout)
    assert report["removed"] == 1 and report["unchanged"] == 2
    assert [
        (p["post_id"], p["status"], p["message"]) for p in report["posts"] if p["status"] == "removed"
    ] == [("garden", "removed", "now a draft")]
    assert "removed " in again.stderr and "(garden): now a draft" in again.stderr
    listed = run("posts", "list", "--json", data_dir=db).stdout
    assert '"garden"' not in listed and '"trains"' in listed
    assert "Brandywines" not in run("search", "tomatoes Brandywines", data_dir=db).stdout
    undone = run("undo", report["change_id"], data_dir=db)
    assert undone.exit_code == 0, undone.output
    assert '"garden"' in run("posts", "list", "--json", data_dir=db).stdout
    # Ingested as a draft again: removed again (the undo put back the stored post, not a published file).
    assert json.loads(run("ingest", str(corpus), "--json", data_dir=db).stdout)["removed"] == 1


@pytest.mark.parametrize("command", [["search"], ["eval", "--qrels", "QUERIES"]])
def test_a_query_file_not_in_utf8_is_named_with_its_line(tmp_path, command):
    """A Latin-1 --queries file said only "'utf-8' codec can't decode byte 0xe9 in position 30…"."""
    queries = tmp_path / "q.jsonl"
    queries.write_bytes('{"id": "a", "text": "wood"}\n{"id": "b", "text": "café"}\n'.encode("cp1252"))
    args = [str(queries) if arg == "QUERIES" else arg for arg in command]
    result = run(*args, "--queries", str(queries), data_dir=tmp_path / "db")
    assert result.exit_code == 1
    assert f"Error: {queries}:2: not UTF-8 text (re-save it as UTF-8)" in result.stderr


def test_collection_filter(corpus, tmp_path):
    db = tmp_path / "db"
    run("ingest", str(corpus), data_dir=db)
    out = json.loads(run("search", "tomatoes", "--collection", "notes", "--json", data_dir=db).stdout)
    assert {h["collection"] for h in out["hits"]} == {"notes"}


def test_posts_list_pipes_into_delete(corpus, tmp_path):
    db = tmp_path / "db"
    run("ingest", str(corpus), data_dir=db)
    ids = run("posts", "list", "--ids", data_dir=db).stdout
    assert sorted(ids.split()) == ["garden", "tea", "trains"]
    listing = run("posts", "list", data_dir=db).stdout
    garden_line = next(line for line in listing.splitlines() if line.startswith("garden\t"))
    deleted = run("posts", "delete", data_dir=db, input=garden_line + "\n")
    assert "deleted 1 post" in deleted.stdout
    assert sorted(run("posts", "list", "--ids", data_dir=db).stdout.split()) == ["tea", "trains"]
    typo = run("posts", "delete", "tea", "trians", data_dir=db)  # the found one goes, the typo fails
    assert typo.exit_code == 1 and typo.stdout == "deleted 1 post; 1 id not found\n"
    assert run("posts", "list", "--ids", data_dir=db).stdout.split() == ["trains"]


def test_chunks_list_and_show_with_embedded_text(corpus, tmp_path):
    db = tmp_path / "db"
    run("ingest", str(corpus), data_dir=db)
    rows = [
        json.loads(line)
        for line in run("chunks", "list", "--post", "garden", "--json", data_dir=db).stdout.splitlines()
    ]
    assert [r["section"] for r in rows] == ["Tomatoes", "Compost"]
    shown = json.loads(run("chunks", "show", rows[1]["chunk_id"], data_dir=db).stdout)
    assert shown["embedded_text"].startswith("[SECTION: Compost] The compost heap")
    assert "vector" not in shown
    missing = run("chunks", "show", "nope#9", data_dir=db)
    assert missing.exit_code == 1 and "no chunk with id 'nope#9'" in missing.output
    unknown = run("chunks", "list", "--post", "nope", data_dir=db)  # a typo is named, not an empty list
    assert unknown.exit_code == 1 and "no post with id 'nope'" in unknown.output


def test_export_to_a_pipe_a_link_or_standard_output_keeps_the_path_as_it_is(corpus, tmp_path):
    """`export -` wrote a file named "-"; a symbolic link or /dev/stdout was replaced by a regular file
    (the temp file renamed over it). Now '-' is standard output, a link's file is written, the link kept,
    and a named pipe is written into."""
    db = tmp_path / "db"
    run("ingest", str(corpus), data_dir=db)
    piped = run("export", "-", data_dir=db)
    assert piped.exit_code == 0, piped.output
    assert len(json.loads(piped.stdout)) == 4 and "exported 4 chunks to standard output" in piped.stderr
    backups = tmp_path / "nas"
    backups.mkdir()
    link = tmp_path / "latest.json"
    link.symlink_to(backups / "chunks.json")
    assert run("export", str(link), data_dir=db).exit_code == 0
    assert link.is_symlink() and len(json.loads((backups / "chunks.json").read_text())) == 4
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    read: list[bytes] = []
    reader = threading.Thread(target=lambda: read.append(fifo.read_bytes()), daemon=True)
    reader.start()
    written = run("export", str(fifo), data_dir=db)
    reader.join(timeout=30)
    assert written.exit_code == 0 and stat.S_ISFIFO(fifo.lstat().st_mode)
    assert len(json.loads(read[0])) == 4


def test_export_import_round_trip(corpus, tmp_path):
    db, other = tmp_path / "db", tmp_path / "db2"
    run("ingest", str(corpus), data_dir=db)
    target = tmp_path / "chunks.json"
    assert "exported" in run("export", str(target), data_dir=db).stdout
    blocked = run("export", str(target / "again.json"), data_dir=db)  # a file where a folder should be
    assert (
        blocked.exit_code == 1
        and f"could not write {target / 'again.json'}: Not a directory" in blocked.output
    )
    items = json.loads(target.read_text())
    assert {"id", "text", "source", "section", "keywords"} <= set(items[0])

    imported = json.loads(run("import", str(target), "--json", data_dir=other).stdout)
    assert imported["new"] == 3 and imported["failed"] == 0

    def snapshot(data_dir: Path) -> list[tuple]:
        rows = [json.loads(x) for x in run("chunks", "list", "--json", data_dir=data_dir).stdout.splitlines()]
        return sorted(
            (r["chunk_id"], r["post_id"], r["text"], r["section"], tuple(r["keywords"])) for r in rows
        )

    assert snapshot(other) == snapshot(db)
    again = json.loads(run("import", str(target), "--json", data_dir=other).stdout)
    assert again["unchanged"] == 3 and again["chunks_embedded"] == 0


# What an import may change in a post by design: it is read from the chunks.json file (source), as its
# chunks (format, raw and so its hash), now (ingested_at).
IMPORT_OWN = {"source", "format", "raw", "content_hash", "ingested_at"}


def test_export_import_keeps_every_post_field_of_the_demo(tmp_path, monkeypatch):
    """Export then import into an empty data dir: every post keeps its title, date, collection, tags and
    address (citations keep their links), every chunk its fields; and an export from before tags and url
    still imports, with none."""
    from core.store import Store
    from tests.conftest import DEMO

    db, other, older = tmp_path / "db", tmp_path / "db2", tmp_path / "db3"
    monkeypatch.setenv("INKWELL_SITE_URL", "https://shavings.example")
    assert run("ingest", str(DEMO / "posts"), data_dir=db).exit_code == 0
    monkeypatch.delenv("INKWELL_SITE_URL")  # the import must not need it: the addresses travel
    target = tmp_path / "chunks.json"
    run("export", str(target), data_dir=db)
    assert run("import", str(target), data_dir=other).exit_code == 0

    def posts(data_dir: Path) -> dict[str, dict]:
        table = Store(data_dir).posts
        assert table is not None
        rows = table.to_arrow().to_pylist()
        return {r["post_id"]: {k: v for k, v in r.items() if k not in IMPORT_OWN} for r in rows}

    def chunks(data_dir: Path) -> list[dict]:
        return sorted(Store(data_dir).list_chunks(), key=lambda r: r["chunk_id"])

    before, after = posts(db), posts(other)
    assert len(before) == 20 and all(p["url"] for p in before.values())
    assert sum(bool(p["tags"]) for p in before.values()) >= 10
    assert after == before
    assert chunks(other) == chunks(db)
    shown = json.loads(run("posts", "show", "cherry-writing-desk", data_dir=other).stdout)
    assert shown["url"] == "https://shavings.example/cherry-writing-desk/" and shown["tags"]

    items = json.loads(target.read_text())  # an export written before tags and url were added
    target.write_text(json.dumps([{k: v for k, v in i.items() if k not in ("tags", "url")} for i in items]))
    assert run("import", str(target), data_dir=older).exit_code == 0
    old = posts(older)
    assert {p["url"] for p in old.values()} == {""} and {tuple(p["tags"]) for p in old.values()} == {()}
    strip = ("url", "tags")
    assert {i: {k: v for k, v in p.items() if k not in strip} for i, p in old.items()} == {
        i: {k: v for k, v in p.items() if k not in strip} for i, p in before.items()
    }


def test_bad_files_fail_loudly_but_keep_the_rest(corpus, tmp_path):
    db = tmp_path / "db"
    (corpus / "broken.json").write_text("[{not json", encoding="utf-8")
    result = run("ingest", str(corpus), data_dir=db)
    assert result.exit_code == 1
    assert "broken.json" in result.stderr
    assert sorted(run("posts", "list", "--ids", data_dir=db).stdout.split()) == ["garden", "tea", "trains"]


def test_eval_reports_the_metrics(corpus, tmp_path):
    db = tmp_path / "db"
    run("ingest", str(corpus), data_dir=db)
    queries = write(
        tmp_path / "q.jsonl", '{"id": "q1", "text": "green tea"}\n{"id": "q2", "text": "compost heap"}\n'
    )
    qrels = write(tmp_path / "r.tsv", "query_id\tdoc_id\tscore\nq1\ttea\t1\nq2\tgarden\t1\n")
    out = json.loads(
        run("eval", "--queries", str(queries), "--qrels", str(qrels), "--json", data_dir=db).stdout
    )
    assert out["means"]["recall@10"] == 1.0
    assert out["means"]["mrr@10"] == 1.0
    table = run("eval", "--queries", str(queries), "--qrels", str(qrels), data_dir=db).stdout
    assert "nDCG@10" in table


def test_search_mode_finds_keywords_and_shows_why(corpus, tmp_path):
    db = tmp_path / "db"
    run("ingest", str(corpus), data_dir=db)
    out = json.loads(run("search", "Brandywines", "--mode", "fts", "--json", data_dir=db).stdout)
    assert [h["section"] for h in out["hits"]] == ["Tomatoes"]  # the only chunk with the word
    assert set(out["hits"][0]) == HIT_KEYS and out["hits"][0]["relevance"] == 1.0
    human = run("search", "Brandywines", "--mode", "hybrid", data_dir=db).stdout
    first = human.splitlines()[:2]
    assert "The Garden — Tomatoes" in first[0]
    assert "dense #" in first[1] and "keyword #1" in first[1]
    bad = run("search", "tea", "--mode", "bm25", data_dir=db)
    assert bad.exit_code == 2 and "bm25" in bad.output


def test_eval_compares_modes_side_by_side(corpus, tmp_path):
    db = tmp_path / "db"
    run("ingest", str(corpus), data_dir=db)
    queries = write(
        tmp_path / "q.jsonl", '{"id": "q1", "text": "Brandywines"}\n{"id": "q2", "text": "sleeper"}\n'
    )
    qrels = write(tmp_path / "r.tsv", "q1\tgarden\t1\nq2\ttrains\t1\n")
    args = ["eval", "--queries", str(queries), "--qrels", str(qrels)]
    table = run(*args, "--mode", "dense,fts", "--mode", "hybrid", data_dir=db).stdout.splitlines()
    assert table[0].split()[0] == "config" and len(table) == 5
    rows = {line.split()[0]: line.split() for line in table[2:]}
    assert list(rows) == ["dense", "fts", "hybrid"]
    assert rows["fts"][1] == "2/2" and rows["fts"][2] == "1.000"  # recall@10 of exact keywords
    reports = [
        json.loads(line)
        for line in run(*args, "--mode", "fts,hybrid", "--json", data_dir=db).stdout.splitlines()
    ]
    assert [r["name"] for r in reports] == ["fts", "hybrid"]
    assert all(r["means"]["mrr@10"] == 1.0 for r in reports)
    bad = run(*args, "--mode", "dense,sparse", data_dir=db)
    assert bad.exit_code == 2 and "'sparse' is not one of dense, fts, hybrid" in bad.output


def test_info_and_clear_errors(tmp_path):
    info = json.loads(run("info", "--json", data_dir=tmp_path / "db").stdout)
    assert info["posts"] == 0 and info["chunks"] == 0
    assert "built-in" in info["answer_model"]
    assert (info["eval_tables"], info["eval_tables_mb"], info["llm_cached_replies"]) == (0, 0, 0)
    assert not (tmp_path / "db" / "llm_cache.sqlite").exists()  # info creates no cache file
    usage = CliRunner().invoke(main, ["search", "--data-dir", str(tmp_path / "db")])
    assert usage.exit_code == 2 and "either a QUESTION or --queries" in usage.output


def test_installed_entry_point_runs():
    exe = Path(sys.executable).with_name("inkwell")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "core.cli"]
    result = subprocess.run([*cmd, "--help"], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0
    for name in ("ingest", "search", "ask", "posts", "chunks", "export", "import", "eval"):
        assert name in result.stdout


def test_ask_shows_whole_supported_sentences_only_in_strict_mode(corpus, tmp_path, monkeypatch):
    """A scripted OpenAI-compatible server copies a header, invents a farm and a year, and runs out of
    tokens mid-sentence: `inkwell ask` with INKWELL_GROUNDING=strict prints none of it."""
    from tests.servers import ScriptedOpenAIServer

    db = tmp_path / "db"
    run("ingest", str(corpus), data_dir=db)
    reply = (
        "[The Garden — Tomatoes | relevance=0.8123]\nI grow six kinds of tomatoes against the south wall. "
        "I bought the seeds from Hollow Creek Farm in 1998. The Brandywines split in wet Aug"
    )
    with ScriptedOpenAIServer() as server:
        env = {"OPENAI_BASE_URL": server.base_url, "INKWELL_GROUNDING": "strict", "INKWELL_MAX_RETRIES": "0"}
        for name, value in {**env, "INKWELL_TRANSLATE_QUESTION": "off", "INKWELL_ROUTING": "off"}.items():
            monkeypatch.setenv(name, value)
        server.chat(reply, finish_reason="length")
        out = json.loads(run("ask", "Which tomatoes do you grow?", "--json", data_dir=db).stdout)
        server.chat(reply, finish_reason="length")
        shown = run("ask", "Which tomatoes do you grow?", data_dir=db)
    assert out["answer"] == "I grow six kinds of tomatoes against the south wall."
    assert out["truncated"] and out["grounding_mode"] == "strict"
    assert [d["sentence"] for d in out["dropped"]] == ["I bought the seeds from Hollow Creek Farm in 1998."]
    assert out["dropped"][0]["unknown_details"] == ["1998", "creek", "farm", "hollow"]
    assert shown.stdout.startswith("I grow six kinds of tomatoes against the south wall.\n")
    for hidden in ("relevance", "Hollow", "Aug"):
        assert hidden not in shown.stdout
    assert "left out, not found in the excerpts: I bought the seeds" in shown.stderr
    assert "it ends at its last complete sentence" in shown.stderr


@pytest.mark.llm
def test_ask_answers_with_the_builtin_model_and_cites_posts(corpus, tmp_path):
    db = tmp_path / "db"
    run("ingest", str(corpus), data_dir=db)
    question = "How warm should the water be for green tea?"
    result = run("ask", question, "--answer-mode", "generative", "--json", data_dir=db)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["answer"].strip() and out["answer_mode"] == "generative"
    assert out["builtin_model"] is True and "built-in" in out["model"]
    context_posts = {c["post_id"] for c in out["context"]}
    assert out["sources"] and {s["post_id"] for s in out["sources"]} <= context_posts
    assert out["context"][0]["post_id"] == "tea"
    grounding = out["grounding"]
    assert grounding["sentences"] and {"sentence", "supported", "chunk_ids"} <= set(grounding["sentences"][0])
    judged = [g for g in grounding["sentences"] if g["judged"]]
    if judged:
        expected = sum(g["supported"] for g in judged) / len(judged)
        assert grounding["supported_fraction"] == pytest.approx(expected, abs=1e-4)  # JSON keeps 4 places


def test_ask_quotes_the_author_by_default_and_names_each_sentences_post(corpus, tmp_path, monkeypatch):
    db = tmp_path / "db"
    run("ingest", str(corpus), data_dir=db)
    monkeypatch.setenv("INKWELL_ROUTING", "off")
    out = json.loads(run("ask", "Which tomatoes split in wet Augusts?", "--json", data_dir=db).stdout)
    assert out["answer_mode"] == "extractive" and out["model"] is None and out["builtin_model"] is False
    context = {c["chunk_id"]: c for c in out["context"]}
    assert out["sentences"]
    for sentence in out["sentences"]:
        chunk = context[sentence["chunk_id"]]
        assert sentence["post_id"] == chunk["post_id"] == "garden"
        assert sentence["text"] in chunk["text"]  # verbatim
        assert sentence["text"] in out["answer"]
    assert "The Brandywines split in wet Augusts." in out["answer"]
    assert out["answer"].startswith("From *The Garden*:")
    shown = run("ask", "Which tomatoes split in wet Augusts?", data_dir=db)
    assert "no model wrote them" in shown.stderr and "The Garden (garden)" in shown.stdout


def test_ask_says_what_the_author_has_not_written_about(corpus, tmp_path):
    db = tmp_path / "db"
    run("ingest", str(corpus), data_dir=db)
    for mode in ("extractive", "generative"):  # no model is called for an off-topic question
        out = json.loads(
            run(
                "ask", "Who won the 2018 football world cup?", "--answer-mode", mode, "--json", data_dir=db
            ).stdout
        )
        assert out["answer_mode"] == "none" and out["sentences"] == [] and out["sources"] == []
        assert out["answer"] == "I haven't written about that, so I can't answer it from my posts."
        assert 1 <= len(out["suggestions"]) <= 3 and out["relevance_bar"]["answer"] is False
    german = run("ask", "Wer hat die Fußball-Weltmeisterschaft 2018 gewonnen?", "--json", data_dir=db)
    assert json.loads(german.stdout)["answer"].startswith("Fragen auf Deutsch kann ich noch nicht lesen")


def test_a_question_the_model_cannot_read_is_told_so_in_its_language(corpus, tmp_path):
    """English posts, the English-only MiniLM, a Turkish question, no model to translate it: never "I
    haven't written about that" (a guess), but the language reply in Turkish, and a note for the owner."""
    db = tmp_path / "db"
    run("ingest", str(corpus), data_dir=db)
    question = "Arılar ilkbaharda neden sürü oluşturur ve arıcı bu konuda ne yapmalıdır?"
    result = run("ask", question, "--json", "--answer-mode", "extractive", data_dir=db)
    out = json.loads(result.stdout)
    assert out["answer"] == "Türkçe soruları henüz okuyamıyorum; lütfen İngilizce sorun."
    assert out["answer_mode"] == "none" and out["suggestions"] == []
    assert "multilingual-e5-small" in out["owner_note"] and "Turkish" in out["owner_note"]
    english = json.loads(run("ask", "Who won the 2018 football world cup?", "--json", data_dir=db).stdout)
    assert "owner_note" not in english  # an English question the posts do not answer: the usual reply


@pytest.mark.parametrize(
    "args",
    [
        ["search", "{q}"],
        ["search", "{q}", "--json"],
        ["route", "{q}"],
        ["posts", "--about", "{q}"],
    ],
)
def test_questions_over_the_limit_are_refused_before_any_work(tmp_path, monkeypatch, args):
    db = tmp_path / "never-created"
    long = "why? " * 4000  # 20,000 characters, as a reader once pasted
    result = run(*[a.replace("{q}", long) for a in args], data_dir=db)
    assert result.exit_code == 2, result.output
    assert "This question is 19,999 characters long, and questions are limited to 1,000" in result.output
    assert "max_question_chars" in result.output
    assert not db.exists()  # nothing was opened, embedded or searched
    empty = run(*[a.replace("{q}", "   ") for a in args], data_dir=db)
    assert empty.exit_code == 2 and "The question is empty" in empty.output
    monkeypatch.setenv("INKWELL_MAX_QUESTION_CHARS", "20")
    short = run(*[a.replace("{q}", "a question of 21 char") for a in args], data_dir=db)
    assert "21 characters long, and questions are limited to 20" in short.output


def test_clean_frees_eval_tables_and_old_llm_replies_and_nothing_else(corpus, tmp_path):
    import sqlite3

    from core.llm import LLMCache

    db = tmp_path / "db"
    assert run("ingest", str(corpus), data_dir=db).exit_code == 0
    queries, qrels = tmp_path / "q.jsonl", tmp_path / "qrels.tsv"
    queries.write_text('{"id": "q1", "text": "which tomatoes split?"}\n', encoding="utf-8")
    qrels.write_text("q1\tgarden\t1\n", encoding="utf-8")
    evaluate = ("eval", "--queries", str(queries), "--qrels", str(qrels), "--chunk-tokens", "150")
    assert run(*evaluate, data_dir=db).exit_code == 0
    scratch = [p for p in (db / "eval-tables").iterdir() if p.is_dir()]
    assert len(scratch) == 1
    with LLMCache(db) as cache:
        cache.put("old", model="m", task="keywords", reply="[]")
        cache.put("new", model="m", task="keywords", reply="[]")
        cache.save_rewrite(
            "garden", source_hash="h", original="a", rewritten="b", changes=[], status="accepted", model="m"
        )
        path = cache.path
    with sqlite3.connect(path) as raw:  # a reply cached long ago
        raw.execute("UPDATE responses SET created = '2020-01-01T00:00:00+00:00' WHERE key = 'old'")
    before = json.loads(run("info", "--json", data_dir=db).stdout)
    assert (before["eval_tables"], before["llm_cached_replies"]) == (1, 2) and before["eval_tables_mb"] > 0

    dry = json.loads(run("clean", "--older-than", "0", "--dry-run", "--json", data_dir=db).stdout)
    assert [t["path"] for t in dry["eval_tables"]] == [str(scratch[0])] and dry["llm_replies"] == 2
    assert scratch[0].is_dir()
    with LLMCache(db) as cache:
        assert cache.count() == 2

    default = json.loads(run("clean", "--json", data_dir=db).stdout)  # 90 days: the old reply only
    assert default["eval_tables"] == [] and default["llm_replies"] == 1 and scratch[0].is_dir()
    everything = run("clean", "--older-than", "0", data_dir=db)
    assert everything.exit_code == 0
    assert (
        "Removed 1 evaluation table (" in everything.stdout and "and 1 cached LLM reply." in everything.stdout
    )
    assert not scratch[0].exists()
    with LLMCache(db) as cache:
        assert (
            cache.count() == 0 and cache.get_rewrite("garden").rewritten == "b"
        )  # the author's decision stays
    after = json.loads(run("info", "--json", data_dir=db).stdout)
    assert (after["eval_tables"], after["eval_tables_mb"], after["llm_cached_replies"]) == (0, 0, 0)
    kept = ("posts", "chunks", "collections", "table_embedding_model")
    assert {k: after[k] for k in kept} == {k: before[k] for k in kept}
    assert run(*evaluate, data_dir=db).exit_code == 0  # the next comparison builds its table again
    assert run("clean", "--older-than", "-1", data_dir=db).exit_code == 2
    fresh = tmp_path / "fresh"
    assert json.loads(run("clean", "--dry-run", "--json", data_dir=fresh).stdout)["llm_replies"] == 0
    assert not (fresh / "llm_cache.sqlite").exists()  # a dry run on a new data dir writes nothing


def test_scratch_tables_on_object_storage_are_not_listed():
    from core.evaluate.scratch import scratch_dir, scratch_tables

    assert scratch_dir("s3://bucket/blog") is None and scratch_tables("s3://bucket/blog") == []


def test_batch_search_counts_a_failed_question_in_the_singular(corpus, tmp_path):
    """A question the file holds but that cannot be searched (a lone surrogate, which crashed the tokenizer
    with a traceback) is reported and counted: "1 of 1 question", not "1 of 1 questions"."""
    db = tmp_path / "db"
    run("ingest", str(corpus), data_dir=db)
    queries = write(tmp_path / "q.jsonl", '{"id": "a", "text": "tomatoes \\ud800"}\n')
    result = run("search", "--queries", str(queries), data_dir=db)
    assert result.exit_code == 1
    assert "# a: The question holds a broken character" in result.stderr
    assert "Error: 1 of 1 question could not be searched" in result.stderr


def test_a_data_dir_that_is_a_file_is_named_as_one(tmp_path):
    """Was "cannot create the data directory …: [Errno 17] File exists" (or "Not a directory")."""
    notes = write(tmp_path / "notes.txt", "not a folder")
    for where, said in [
        (notes, f"Error: the data directory {notes} is a file, not a folder"),
        (
            notes / "db",
            f"Error: the data directory {notes / 'db'}: its folder {notes} is a file, not a folder",
        ),
    ]:
        result = run("posts", "list", data_dir=where)
        assert result.exit_code == 1 and said in result.stderr and "Errno" not in result.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["search", "tomatoes"], "no chunks matched: the table is empty (ingest some posts first)"),
        (["changes"], "no changes logged yet"),
        (["settings", "suggest"], "no posts to suggest questions from yet (ingest some first)"),
        (["posts", "list"], "no posts (ingest some first)"),
        (["chunks", "list"], "no chunks (ingest some posts first)"),
        (["sources"], "no sources remembered"),
    ],
)
def test_an_empty_result_says_so_on_stderr(tmp_path, args, said):
    """These printed nothing at all (exit 0), as `questions` did not: now one line on stderr, as
    `questions` says "no questions logged", and stdout stays empty for a script."""
    result = run(*args, data_dir=tmp_path / "db")
    assert result.exit_code == 0 and result.stdout == "" and said in result.stderr


@pytest.mark.parametrize("remember", [[], ["--remember"]])
def test_an_address_that_is_not_http_is_named_as_one(tmp_path, remember):
    """Was "ftp:/example.com/feed.xml: does not exist" (read as a path, its slashes joined), or with
    --remember that path remembered: a usage error naming the address, before anything is read."""
    db = tmp_path / "db"
    result = run("ingest", "ftp://example.com/feed.xml", *remember, data_dir=db)
    assert result.exit_code == 2
    assert (
        "ftp://example.com/feed.xml is a ftp:// address: only http:// and https:// addresses" in result.stderr
    )
    assert "does not exist" not in result.stderr and not db.exists()


def test_asking_an_empty_data_dir_says_nothing_is_ingested(tmp_path):
    """Was "I haven't written about that" (exit 0), the reader's decline, with the question logged as an
    unanswered one: the owner of a fresh or mistyped data directory is told to ingest first."""
    from core.store import Store

    db = tmp_path / "db"
    said = f"nothing is ingested in {db} yet: add posts with `inkwell ingest PATH...`"
    result = run("ask", "anything?", data_dir=db)
    assert result.exit_code == 1 and said in result.stderr and "haven't written" not in result.output
    answered = run("ask", "anything?", "--json", data_dir=db)
    assert answered.exit_code == 1 and said in json.loads(answered.stdout)["error"]
    assert Store(db)._open("questions") is None  # no unanswered reader question logged


def test_an_empty_result_keeps_json_output_valid(tmp_path):
    db = tmp_path / "db"
    assert json.loads(run("search", "tomatoes", "--json", data_dir=db).stdout)["hits"] == []
    for args in (["changes", "--json"], ["posts", "list", "--json"], ["sources", "--json"]):
        result = run(*args, data_dir=db)
        assert result.exit_code == 0 and result.stdout == "" and result.stderr == ""  # no JSON lines: none


def test_ask_reads_the_question_from_standard_input(corpus, tmp_path, monkeypatch):
    """`ask -` asked the question "-"; now it reads the question from stdin, as `ingest -` reads a post.
    An empty stdin is an empty question, and one not in UTF-8 is refused naming its first bad byte, both
    before anything is opened."""
    never = tmp_path / "never-created"
    for empty in ("", "  \n"):
        refused = run("ask", "-", data_dir=never, input=empty)
        assert refused.exit_code == 2 and "The question is empty" in refused.stderr
    latin = run("ask", "-", data_dir=never, input="Café au lait?".encode("cp1252"))
    assert latin.exit_code == 2
    assert "standard input is not UTF-8 (byte 0xE9 at offset 3)" in latin.stderr
    assert not never.exists()
    db = tmp_path / "db"
    run("ingest", str(corpus), data_dir=db)
    monkeypatch.setenv("INKWELL_ROUTING", "off")
    piped = "\ufeffWhich tomatoes split in wet Augusts?\n".encode()  # a byte-order mark, as PowerShell pipes
    asked = run("ask", "-", "--json", data_dir=db, input=piped)
    assert asked.exit_code == 0, asked.output
    out = json.loads(asked.stdout)
    assert out["question"] == "Which tomatoes split in wet Augusts?"
    assert "The Brandywines split in wet Augusts." in out["answer"]
    searched = run("search", "-", "--json", data_dir=db, input=piped)  # search and route read it too
    assert searched.exit_code == 0, searched.output
    assert json.loads(searched.stdout.splitlines()[0])["query"] == "Which tomatoes split in wet Augusts?"
    routed = run("route", "-", data_dir=db, input="   ")
    assert routed.exit_code == 2 and "The question is empty" in routed.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["search", "tea", "--k", "0", "--json"], "Invalid value for '--k': 0 is not in the range"),
        (["search", "tea", "--json", "--mode", "sparse"], "Invalid value for '--mode': 'sparse' is not"),
        (["ask", "--json"], "Missing argument 'QUESTION'."),
        (["ask", "   ", "--json"], "Invalid value for QUESTION: The question is empty"),  # the command's own
        (["frob", "--json"], "No such command 'frob'."),
        (["posts", "list", "--json", "--bogus"], "No such option '--bogus'."),
    ],
)
def test_usage_errors_under_json_are_a_json_object_too(tmp_path, args, message):
    """A usage error printed only click's plain text, so a script reading `--json` output got nothing it
    could parse: it now also gets {"error", "kind": "UsageError"} on stdout (the shape of the other JSON
    errors), with click's usage on stderr and exit 2 as before."""
    db = tmp_path / "never-created"
    result = run(*args, data_dir=db)
    assert result.exit_code == 2, result.output
    error = json.loads(result.stdout)
    assert error["kind"] == "UsageError" and error["error"].startswith(message), error
    assert "Usage:" in result.stderr
    plain = run(*[a for a in args if a != "--json"], data_dir=db)
    assert plain.exit_code == 2 and plain.stdout == ""  # without --json, stdout stays empty


@pytest.mark.parametrize(
    "args",
    [["search", "tea"], ["posts", "list"], ["posts", "--about", "tea"], ["info"], ["questions"], ["sources"]],
)
def test_any_commands_error_under_json_is_a_json_object(tmp_path, args):
    """Only `ask --json` printed its errors (exit 1) as JSON; every command given --json does now."""
    not_a_folder = tmp_path / "a-file"
    not_a_folder.write_text("")
    result = run(*args, "--json", data_dir=not_a_folder)
    assert result.exit_code == 1, result.output
    error = json.loads(result.stdout)
    assert error["kind"] == "StoreError" and "is a file, not a folder" in error["error"], error


def test_ctrl_c_exits_130_saying_interrupted(tmp_path):
    """Ctrl-C (SIGINT) during a command exited 1 with "Aborted!", which a script cannot tell from a
    failure; now it exits 130, the shell's convention, with "Interrupted." and no traceback. The command
    is interrupted while it waits on a slow page, so the signal lands inside it."""
    with SiteServer() as site:
        site.page("/slow/", "<html><title>Slow</title><p>Words.</p></html>", delay=10)
        child = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "core.cli",
                "ingest",
                site.url("/slow/"),
                "--data-dir",
                str(tmp_path / "db"),
            ],
            cwd=Path(__file__).resolve().parents[2],  # this checkout's code
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 60  # only against a hang: the request comes in a few seconds
            while not site.hits("/slow/") and child.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert site.hits("/slow/"), child.poll()
            child.send_signal(signal.SIGINT)
            out, err = child.communicate(timeout=60)
        finally:
            child.kill()
    assert child.returncode == 130, err
    assert err.strip() == "Interrupted." and out == ""
