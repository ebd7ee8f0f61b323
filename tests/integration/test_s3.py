"""The table on object storage: the data directory as an s3:// URI, against moto's S3 server on 127.0.0.1
(tests/s3_server.py), with real `inkwell` processes.

Vectors come from the hash embedding server of tests/writers_support.py (no model to load in every
process; the storage paths are the same with any embedder).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.config import ConfigError, DataUri, Settings, local_home
from tests.s3_server import S3Server
from tests.writers_support import (
    ROOT,
    HashEmbedder,
    build_reference,
    compare,
    embedding_server,
    environ,
    paragraphs,
    post,
    run_writers,
    settings_from,
    snapshot,
    write_posts,
    writer_folders,
)

pytest.importorskip("moto", reason="moto[server] (requirements-dev.txt) runs the S3 test server")


# Settings and storage options (no server) --------------------------------------------------------------


def test_data_dir_uri_is_kept_as_a_uri_and_side_files_get_a_local_home(tmp_path: Path) -> None:
    settings = Settings.load(environ={"INKWELL_DATA_DIR": "s3://bucket/blogs/mara"})
    assert isinstance(settings.data_dir, DataUri) and settings.data_dir == "s3://bucket/blogs/mara"
    assert settings.data_dir / "eval-tables" == "s3://bucket/blogs/mara/eval-tables"
    assert settings.data_dir.name == "mara"
    home = local_home(settings.data_dir, {})
    assert home.is_absolute() and home.name == "s3-bucket-blogs-mara"
    assert local_home("gs://b/p", {"INKWELL_LOCAL_DIR": str(tmp_path)}) == tmp_path
    # Local folders behave as before: a Path, and the side files beside the tables.
    local = Settings.load(environ={"INKWELL_DATA_DIR": str(tmp_path / "db")})
    assert local.data_dir == tmp_path / "db" and local.local_home == tmp_path / "db"
    assert Settings.load(environ={"INKWELL_DATA_DIR": f"file://{tmp_path}"}).data_dir == tmp_path
    assert local_home(tmp_path) == tmp_path
    assert local.replace(data_dir="az://c/p").data_dir == DataUri("az://c/p")
    with pytest.raises(ConfigError, match="ftp://"):
        Settings.load(environ={"INKWELL_DATA_DIR": "ftp://host/x"})
    with pytest.raises(ConfigError, match="read_consistency_seconds"):
        Settings.load(environ={"INKWELL_READ_CONSISTENCY_SECONDS": "-1"})


def test_storage_options_carry_endpoint_and_region_but_never_secrets() -> None:
    from core.store.location import describe, storage_options

    env = {
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9000",
        "AWS_REGION": "eu-west-1",
        "AWS_ACCESS_KEY_ID": "AKIDSECRET",
        "AWS_SECRET_ACCESS_KEY": "very-secret",
        "INKWELL_STORAGE_OPTIONS": '{"timeout": "60s"}',
    }
    options = storage_options("s3://b/p", env)
    assert options == {
        "aws_endpoint": "http://127.0.0.1:9000",
        "allow_http": "true",
        "aws_region": "eu-west-1",
        "timeout": "60s",
    }
    assert storage_options("/tmp/x", env) == {}
    assert "allow_http" not in storage_options("s3://b/p", {"AWS_ENDPOINT_URL": "https://minio.example"})
    with pytest.raises(ConfigError) as bad:
        storage_options("s3://b/p", {"INKWELL_STORAGE_OPTIONS": "secret-not-json"})
    assert "secret-not-json" not in str(bad.value)
    assert describe("s3+ddb://b/p?ddbTableName=commits") == "s3+ddb://b/p"
    ddb = DataUri("s3+ddb://b/p?ddbTableName=commits")
    assert ddb / "eval-tables" == "s3+ddb://b/p/eval-tables?ddbTableName=commits" and ddb.name == "p"
    assert storage_options(ddb, {"AWS_ENDPOINT_URL": "http://127.0.0.1:9"})["dynamodb_endpoint"] == (
        "http://127.0.0.1:9"
    )


# Against the S3 server ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def s3():
    with S3Server() as server:
        yield server


@pytest.fixture(scope="module")
def embed_server():
    with embedding_server() as server:
        yield server


@pytest.fixture
def s3_env(s3: S3Server, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, str]:
    """This process pointed at the S3 server, side files under tmp_path."""
    for name, value in s3.env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("INKWELL_LOCAL_DIR", str(tmp_path / "local"))
    return {**s3.env, "INKWELL_LOCAL_DIR": str(tmp_path / "local")}


def _posts(n: int, tag: str = "") -> dict[str, str]:
    return {f"p{i}": post(f"Post {i}", paragraphs(f"p{i}{tag}")) for i in range(n)}


@pytest.mark.parametrize("commits", ["conditional-put", "dynamodb"])
def test_ingest_reingest_edit_delete_undo_and_search_on_s3(
    s3, s3_env, embed_server, tmp_path, commits
) -> None:
    from core.ingest import ingest_paths
    from core.search import search
    from core.search.route import load_rules, rules_path, save_rules
    from core.serve.conversations import Conversations
    from core.store import Store

    uri = s3.uri(f"lifecycle-{commits}") if commits == "conditional-put" else s3.ddb_uri("lifecycle-ddb")
    recorded = s3.commits_recorded() if commits == "dynamodb" else 0
    unconditional = s3.stats().get("manifest_puts_unconditional", 0)
    env = {**environ(embed_server, uri), **s3_env}  # type: ignore[arg-type]
    settings = settings_from(env)
    assert isinstance(settings.data_dir, DataUri)
    folder = write_posts(tmp_path / "posts", _posts(4))
    store = Store(settings.data_dir)

    first = ingest_paths([folder], settings, store=store)
    assert first.ok and first.count("new") == 4, first.summary()
    assert store.counts()[0] == 4 and store.counts()[1] > 4
    again = ingest_paths([folder], settings, store=store)
    assert again.count("unchanged") == 4 and again.chunks_embedded == 0, again.summary()
    # The relevance floor's sample (core/search/floor.py) reads spread rows by offset from the bucket.
    rows, sample = store.vector_sample(3)
    stored_vectors = store.chunks.to_arrow()["vector"].to_pylist()
    assert rows == len(stored_vectors) > 3 and len(sample) == 3
    for i, vector in zip([0, rows // 3, 2 * rows // 3], sample, strict=True):
        assert vector.tolist() == pytest.approx(stored_vectors[i])

    write_posts(folder, {"p1": post("Post 1", "A zebrawood marquetry panel, veneered by hand.")})
    edited = ingest_paths([folder], settings, store=store)
    assert edited.count("updated") == 1, edited.summary()
    hits = search("zebrawood marquetry panel", settings, store=store, embedder=HashEmbedder(), mode="fts")
    assert hits.hits and hits.hits[0].post_id == "p1"

    assert store.delete_posts(["p2"]) == 1
    assert "p2" not in {row["post_id"] for row in store.list_posts()}
    store.undo()  # the deletion
    assert "p2" in {row["post_id"] for row in store.list_posts()}
    store.undo(edited.change_id)  # the edit: the old text is back, the new one is not found
    assert "zebrawood" not in store.get_post("p1")["raw"]
    assert not search("zebrawood marquetry", settings, store=store, embedder=HashEmbedder(), mode="fts").hits

    # A fresh connection (another process would make one) sees the same table.
    assert Store(uri).counts() == store.counts()
    # Side files live in the local home, not at the URI.
    save_rules(settings.data_dir, '[essays]\nkeywords = ["dovetail"]\n', ["essays"])
    assert rules_path(settings.data_dir) == tmp_path / "local" / "routes.toml"
    assert load_rules(settings.data_dir, ["essays"])[0]
    conversations = Conversations.for_settings(settings)
    assert conversations.path.parent == tmp_path / "local"
    if commits == "conditional-put":  # every commit was put-if-absent
        assert s3.stats().get("manifest_puts_unconditional", 0) == unconditional
    else:  # every commit went through the DynamoDB table
        assert s3.commits_recorded() - recorded >= len(store.posts.list_versions()) - 1


def test_cli_on_s3_ingest_search_and_posts(s3, s3_env, embed_server, tmp_path) -> None:
    uri = s3.uri("cli")
    env = {**environ(embed_server, uri), **s3_env}  # type: ignore[arg-type]
    folder = write_posts(tmp_path / "posts", _posts(3))

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "core.cli", *args], cwd=ROOT, env=env, capture_output=True, text=True
        )

    ingested = cli("ingest", str(folder))
    assert ingested.returncode == 0, ingested.stderr[-2000:]
    info = json.loads(cli("info", "--json").stdout)
    assert info["data_dir"] == uri and info["posts"] == 3
    found = cli("search", "--json", "--mode", "fts", paragraphs("p2").split(".")[0])
    assert found.returncode == 0, found.stderr[-2000:]
    assert json.loads(found.stdout)["hits"][0]["post_id"] == "p2"
    assert cli("posts", "delete", "p0").returncode == 0
    assert json.loads(cli("info", "--json").stdout)["posts"] == 2
    for output in (ingested, found):
        assert s3.env["AWS_SECRET_ACCESS_KEY"] not in output.stdout + output.stderr  # no credentials shown
        assert s3.env["AWS_ACCESS_KEY_ID"] not in output.stdout + output.stderr


@pytest.mark.parametrize("commits", ["conditional-put", "dynamodb"])
def test_two_ingesters_and_an_editor_on_s3_lose_and_duplicate_nothing(
    s3, s3_env, embed_server, tmp_path, commits
) -> None:
    from core.ingest import ingest_paths

    uri = s3.uri(f"writers-{commits}") if commits == "conditional-put" else s3.ddb_uri("writers-ddb")
    env = {**environ(embed_server, uri), **s3_env}  # type: ignore[arg-type]
    base_posts = {
        "common": post("Common", paragraphs("common")),
        "quiet": post("Quiet", paragraphs("quiet"), "notes"),
        **{f"post-{i}": post(f"Post {i}", paragraphs(f"post-{i}")) for i in range(2)},
    }
    base = write_posts(tmp_path / "base", base_posts)
    report = ingest_paths([base], settings_from(env))
    assert report.ok and report.count("new") == len(base_posts), report.summary()
    folders = writer_folders(tmp_path / "folders", 2)

    # The reference: the same writes one after the other, in a local table.
    local_base = tmp_path / "local-base"
    local_env = environ(embed_server, local_base)
    assert ingest_paths([base], settings_from(local_env)).ok
    reference_db = tmp_path / "reference"
    build_reference(local_base, reference_db, folders, environ(embed_server, reference_db), edits=3)
    reference = snapshot(reference_db)
    assert not reference.problems, reference.problems

    before = s3.stats()
    outcome = run_writers(folders, env, edits=3)
    assert not outcome.tracebacks, outcome.tracebacks[0][-3000:]
    assert outcome.codes == [0, 0, 0], list(zip(outcome.codes, outcome.stderr, strict=True))
    differences = compare(snapshot(uri), reference)  # type: ignore[arg-type]
    assert not differences, "\n".join(differences[:20])
    again = ingest_paths(folders, settings_from(env))
    assert again.count("unchanged") == len(again.outcomes) and again.chunks_embedded == 0, again.summary()
    after = s3.stats()
    if commits == "conditional-put":
        assert after.get("manifest_puts_unconditional", 0) == before.get("manifest_puts_unconditional", 0)
    refused = after.get("manifest_puts_refused", 0) - before.get("manifest_puts_refused", 0)
    print(f"\n2 ingesters + 1 editor on {uri}: exact in {outcome.seconds:.1f} s; PUTs refused: {refused}")


READER = """
import sys, time
from core.store import Store
store = Store(sys.argv[1], read_consistency_seconds=float(sys.argv[2]))
store.list_posts()  # tables opened before the other process writes
print("ready", flush=True)
for line in sys.stdin:
    word = line.strip()
    ids = sorted({row["post_id"] for row in store.keyword_search(word, 10)}) if store.chunks else []
    print(",".join(ids) + "|" + str(store.counts()[0]), flush=True)
"""
CONSISTENCY_SECONDS = 1.0
DEADLINE_SECONDS = 60.0  # generous on a loaded machine; the figure printed is what the bench reports


def test_a_second_process_sees_the_first_ones_ingest_and_undo(s3, s3_env, embed_server, tmp_path) -> None:
    from core.ingest import ingest_paths
    from core.store import Store

    uri = s3.uri("replicas")
    env = {**environ(embed_server, uri), **s3_env}  # type: ignore[arg-type]
    settings = settings_from(env)
    ingest_paths([write_posts(tmp_path / "a", _posts(2))], settings)
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, uri, str(CONSISTENCY_SECONDS)],
        cwd=ROOT,
        env={**os.environ, **env},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert reader.stdout and reader.stdin and reader.stdout.readline().strip() == "ready"

        def ask(word: str) -> tuple[set[str], int]:
            reader.stdin.write(word + "\n")
            reader.stdin.flush()
            ids, posts = reader.stdout.readline().strip().split("|")
            return set(filter(None, ids.split(","))), int(posts)

        def wait_for(word: str, expected: tuple[set[str], int]) -> float:
            started = time.monotonic()
            while (seen := ask(word)) != expected:
                assert time.monotonic() - started < DEADLINE_SECONDS, f"replica still sees {seen}"
                time.sleep(0.1)
            return time.monotonic() - started

        assert ask("xylophone") == (set(), 2)
        store = Store(uri)
        novel = post("Xylophone", "A xylophone of quartersawn oak, tuned by ear.")
        assert ingest_paths([write_posts(tmp_path / "b", {"xylo": novel})], settings).count("new") == 1
        seen_after = wait_for("xylophone", ({"xylo"}, 3))
        store.undo()  # the ingest, in the first process
        undone_after = wait_for("xylophone", (set(), 2))
        print(
            f"\nreplica (read_consistency_seconds={CONSISTENCY_SECONDS}): ingest seen after {seen_after:.1f} s, "
            f"undo after {undone_after:.1f} s"
        )
    finally:
        if reader.stdin:
            reader.stdin.close()
        reader.wait(timeout=30)


def test_the_app_on_s3_ingests_a_paste_and_undoes_it(s3, s3_env, monkeypatch, tmp_path) -> None:
    from tests.conftest import isolate_app, open_app, shown, texts

    isolate_app(monkeypatch, s3.uri("app"))  # type: ignore[arg-type]
    monkeypatch.setenv("INKWELL_LOCAL_DIR", str(tmp_path / "local"))
    monkeypatch.setenv("INKWELL_READ_CONSISTENCY_SECONDS", "2")  # handles kept open, as a replica would

    def table_caption(at) -> str:
        return next(c for c in shown(at.sidebar.caption) if c.startswith("**Table:**"))

    at = open_app("pages/posts.py")
    at.text_input(key="paste_title").input("On Veneer")
    at.text_area(key="paste_text").input("Zebrawood veneer is sawn thin and glued to a stable core.")
    at.button(key="paste_ingest").click().run()
    assert not at.exception, at.exception
    assert table_caption(at) == "**Table:** 1 post · 1 chunk"
    undo = next(b for b in at.button if str(b.label).startswith("Undo last change"))
    undo.click().run()
    assert not at.exception, at.exception
    assert any(t.startswith("Undone:") for t in texts(at.success))
    assert table_caption(at) == "**Table:** 0 posts · 0 chunks"


def test_eval_scratch_tables_live_at_the_uri(s3, s3_env, embed_server, tmp_path) -> None:
    from core.evaluate.compare import posts_table
    from core.ingest import ingest_paths
    from core.parse import parse_paths

    uri = s3.uri("eval")
    settings = settings_from({**environ(embed_server, uri), **s3_env})  # type: ignore[arg-type]
    folder = write_posts(tmp_path / "posts", _posts(3))
    assert ingest_paths([folder], settings).ok
    scratch = posts_table(
        parse_paths([folder]).posts, settings.replace(chunk_tokens=60), embedder=HashEmbedder()
    )
    assert str(scratch.data_dir).startswith(f"{uri}/eval-tables/")
    assert scratch.counts()[0] == 3
    assert not any(p.suffix == ".lance" for p in tmp_path.rglob("*.lance"))  # no table on local disk
