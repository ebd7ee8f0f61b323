"""The corpus language kept with the posts table: written at ingest, read by every process from the table
(a folder or s3:// on the loopback moto server), and, for a table from before, the local record."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from core.config import Settings
from core.ingest import ingest_posts
from core.llm import LLMCache
from core.parse import parse_text
from core.store import Store
from core.store.corpus import corpus_language, table_language, write_corpus_language

FRENCH = (
    "Je travaille le chêne depuis dix ans. Le bois vient de la scierie du village, et je le laisse "
    "sécher deux ans avant de le couper. C'est une question de patience et de regard."
)
READ = (
    "import json, sys\n"
    "from core.config import Settings\n"
    "from core.store import Store\n"
    "from core.store.corpus import corpus_language\n"
    "s = Settings.load()\n"
    "print(json.dumps({'home': str(s.local_home), 'language': corpus_language(Store(s.data_dir), s.local_home)}))\n"
)


@pytest.fixture(scope="module")
def s3_server():
    pytest.importorskip("moto", reason="moto[server] (requirements-dev.txt) runs the S3 test server")
    from tests.s3_server import S3Server

    with S3Server() as server:
        yield server


def _replica_reads(data_dir: str, home: Path, extra_env: dict[str, str]) -> dict:
    """What another process, whose local folder is `home` (empty), reads as the corpus language."""
    env = {**os.environ, **extra_env, "INKWELL_DATA_DIR": data_dir, "INKWELL_LOCAL_DIR": str(home)}
    done = subprocess.run(
        [sys.executable, "-c", READ], env=env, capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("backend", ["local", "s3"])
def test_a_replica_with_an_empty_local_home_reads_the_language_from_the_table(
    backend, request, tmp_path: Path, embedder, monkeypatch
):
    env: dict[str, str] = {}
    if backend == "s3":
        server = request.getfixturevalue("s3_server")
        env = server.env
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        data_dir = server.uri(f"lang-{uuid.uuid4().hex[:8]}")
    else:
        data_dir = str(tmp_path / "tables")
    monkeypatch.setenv("INKWELL_LOCAL_DIR", str(tmp_path / "writer-home"))
    settings = Settings(data_dir=data_dir)
    ingest_posts([parse_text(FRENCH, "Le chêne")], settings, embedder=embedder)
    assert table_language(Store(data_dir)) == "fr"

    replica_home = tmp_path / "replica-home"
    replica_home.mkdir()
    seen = _replica_reads(data_dir, replica_home, env)
    # A local table is its own home: only object storage has a separate local folder to be empty.
    if backend == "s3":
        assert seen["home"] == str(replica_home) and not any(replica_home.iterdir())
    assert seen["language"] == "fr"


def test_an_older_table_without_the_language_falls_back_to_the_local_record(tmp_path: Path):
    store = Store(tmp_path / "tables")
    home = tmp_path / "home"
    assert corpus_language(store, home) is None
    with LLMCache(home) as cache:
        cache.record_languages([("essai", "de", 4000)])
    assert corpus_language(store, home) == "de"  # no posts table yet: the local record
    write_corpus_language(store, "fr")
    assert corpus_language(store, home) == "fr"  # the table's wins
    write_corpus_language(store, None)
    assert table_language(store) is None and corpus_language(store, home) == "de"


def test_writing_the_same_language_again_makes_no_commit(tmp_path: Path):
    store = Store(tmp_path / "tables")
    write_corpus_language(store, "tr")
    version = store.posts.version
    write_corpus_language(store, "tr")
    assert store.posts.version == version and table_language(store) == "tr"
