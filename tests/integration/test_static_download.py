"""The Ingest page's "Static site" expander under Streamlit's AppTest, on real tables: Build static site
writes the export of core/publish and offers it as a zip whose members are the page, the data and the
model, and each refusal core/publish has is shown as its message."""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

import pytest

from core.config import Settings
from core.embed.multilingual import MODEL_ID as E5
from core.ingest import ingest_paths
from core.publish.site import runtime_dir
from core.store import Store
from tests.conftest import DEMO, isolate_app, open_app, shown

PAGE = "pages/posts.py"


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory, embedder) -> Path:
    """The demo's five project posts, ingested."""
    db = tmp_path_factory.mktemp("static-download") / "db"
    report = ingest_paths(
        [DEMO / "posts" / "projects"], Settings.load({"data_dir": db}, environ={}), embedder=embedder
    )
    assert report.ok, report.summary()
    return db


def runtime() -> None:
    """Skip (fail under CI) without the page's npm runtime, which `make static` installs."""
    if not (runtime_dir() / "onnxruntime-web" / "dist").is_dir():
        message = "the static runtime is missing: run `make static`"
        if os.environ.get("CI", "").lower() in ("true", "1"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


def build(monkeypatch: pytest.MonkeyPatch, db: Path, **env: str):
    runtime_env = os.environ.get("INKWELL_STATIC_RUNTIME")
    isolate_app(monkeypatch, db)
    if runtime_env:  # isolate_app drops INKWELL_*: a runtime installed elsewhere is kept
        monkeypatch.setenv("INKWELL_STATIC_RUNTIME", runtime_env)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    at = open_app(PAGE)
    at.button(key="static_build").click().run(timeout=600)
    assert not at.exception, at.exception
    return at


def test_build_static_site_offers_a_zip_of_the_page_data_and_model(projects, monkeypatch):
    runtime()
    at = build(monkeypatch, projects)
    assert not at.error, shown(at.error)
    (button,) = at.get("download_button")
    data = at.session_state["static_zip"][0]  # what the button serves
    assert button.proto.label == f"Download inkwell-static.zip ({len(data) / 1e6:.1f} MB)"
    archive = zipfile.ZipFile(io.BytesIO(data))
    assert archive.testzip() is None
    names = set(archive.namelist())
    assert {"index.html", "inkwell-static.mjs", "data/index.json", "data/vectors.i8"} <= names
    assert {"model/question.onnx", "model/tokenizer.json", "vendor/ort-wasm-simd-threaded.wasm"} <= names
    assert all(i.compress_type == zipfile.ZIP_DEFLATED for i in archive.infolist())
    index = json.loads(archive.read("data/index.json"))
    chunks = Store(projects).counts()[1]
    assert index["counts"]["chunks"] == chunks
    assert any(f"Built from {chunks:,} chunks" in t for t in shown(at.caption)), shown(at.caption)
    # The static widget's tag for the blog's template, pointing at the folder's widget.js.
    (tag,) = [c.value for c in at.code if "data-static" in c.value]  # the Share section has the server's
    assert tag.startswith('<script src="/ask/widget.js"') and "data-static" in tag
    assert "widget.js" in names and "data/welcome.json" in names


def test_an_empty_table_is_refused_with_its_message(tmp_path, monkeypatch):
    at = build(monkeypatch, tmp_path / "db")
    assert shown(at.error) == ["Not built: nothing to export: the table holds no chunks (ingest posts first)"]
    assert not at.get("download_button")


def test_an_e5_table_and_a_missing_runtime_are_refused_by_name(projects, tmp_path, monkeypatch):
    e5 = tmp_path / "e5"
    Store(e5).ensure_chunks_table(E5, 384)
    at = build(monkeypatch, e5)
    (error,) = shown(at.error)
    assert (
        "supports tables embedded with sentence-transformers/all-MiniLM-L6-v2 only" in error and E5 in error
    )

    at = build(monkeypatch, projects, INKWELL_STATIC_RUNTIME=str(tmp_path / "empty"))
    (error,) = shown(at.error)
    assert error.startswith("Not built: the browser runtime is not installed") and "`make static`" in error
    assert not at.get("download_button")
