from __future__ import annotations

import os
from pathlib import Path

import pytest

# Before anything imports xllamacpp or torch: keep the tests offline and the CPU polite.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from core.config import Settings

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"
SHARED = ROOT.parent / "shared"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Defaults with a fresh data dir, ignoring the developer's own INKWELL_*/OPENAI_* variables."""
    return Settings.load({"data_dir": tmp_path / "db"}, environ={})


@pytest.fixture(scope="session")
def embedder():
    from core.embed import get_embedder

    return get_embedder(Settings.load(environ={}))


@pytest.fixture
def store(settings: Settings):
    from core.store import Store

    return Store(settings.data_dir)


@pytest.fixture(scope="session")
def demo_table(tmp_path_factory: pytest.TempPathFactory, embedder):
    """The demo blog (data/demo/posts) ingested once per session with the defaults: (settings, store).
    Shared: tests only read it."""
    from core.ingest import ingest_posts
    from core.parse import parse_paths
    from core.store import Store

    settings = Settings.load({"data_dir": tmp_path_factory.mktemp("demo") / "db"}, environ={})
    store = Store(settings.data_dir)
    ingest_posts(parse_paths([DEMO / "posts"]).posts, settings, store=store, embedder=embedder)
    return settings, store


@pytest.fixture
def scripted():
    """A scripted OpenAI-compatible server on 127.0.0.1 (tests/servers.py), for one test."""
    from tests.servers import ScriptedOpenAIServer

    with ScriptedOpenAIServer() as server:
        yield server


# The app tests' three short posts -------------------------------------------------------------------------

BEES = [
    "Keeping bees taught me patience. The first hive arrived in April 2019, a nucleus colony of five frames.",
    "Swarming season starts in May. A colony that runs out of space raises a new queen and half of it leaves.",
    "Varroa mites are the real enemy. We count mites on a sticky board every two weeks in summer.",
]
BREAD = "My sourdough starter is fed rye flour twice a day; the loaf proves overnight in the fridge."


def bees_post():
    """The bees post (a paragraph a block), as the app tests ingest it."""
    from core.models import Block, Post

    return Post("bees", "On Bees", [Block(p) for p in BEES], raw="\n\n".join(BEES), source="bees.txt")


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh data dir for the app, and none of the developer's own keys, URLs or INKWELL_* settings."""
    return isolate_app(monkeypatch, tmp_path / "db")


@pytest.fixture
def corpus(data_dir: Path, embedder, monkeypatch: pytest.MonkeyPatch):
    """Three short posts in `data_dir`, ingested through core: bees (3 small chunks), bread (in
    "recipes") and walks (1 each). The Store. (tests/cli_support.py's `corpus` is a folder of files.)"""
    from core.ingest import ingest_posts
    from core.models import Block, Post
    from core.store import Store

    monkeypatch.setenv("INKWELL_CHUNK_TOKENS", "30")  # the app chunks like the fixture did
    settings = Settings.load({"data_dir": data_dir, "chunk_tokens": 30}, environ={})
    posts = [
        bees_post(),
        Post("bread", "Sourdough", [Block(BREAD)], raw=BREAD, source="bread.txt", collection="recipes"),
        Post(
            "walks",
            "On Walking",
            [Block("Walking", heading=True), Block("I walk along the canal every morning before work.")],
            raw="# Walking\n\nI walk along the canal every morning before work.",
            source="walks.md",
            format="markdown",
        ),
    ]
    store = Store(data_dir)
    report = ingest_posts(posts, settings, store=store, embedder=embedder)
    assert report.ok and report.count("new") == 3
    return store


APP = ROOT / "streamlit_app.py"
APP_TIMEOUT = 120  # s: the first run loads the embedding model; an answer may start the llama.cpp server


def open_app(page: str | None = None, *, timeout: float = APP_TIMEOUT, **secrets: str):
    """The app under Streamlit's AppTest, run once (and switched to `page`), with no exception."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=timeout)
    # Non-empty secrets replace st.secrets, so a developer's own .streamlit/secrets.toml is not read.
    at.secrets.update({"inkwell_tests": "1", **secrets})
    at.run()
    if page:
        at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def texts(elements) -> list[str]:
    return [str(e.value) for e in elements]


def shown(elements) -> list[str]:
    """Texts with Markdown escapes removed (user content is escaped wherever Markdown is parsed)."""
    return [text.replace("\\", "") for text in texts(elements)]


def everything(at) -> str:
    """All visible text of an AppTest run (to check what is, and isn't, shown)."""
    kinds = (at.markdown, at.caption, at.text, at.error, at.warning, at.info, at.success, at.code)
    # Markdown escapes removed, so assertions read like what a person sees.
    return "\n".join(text for kind in kinds for text in texts(kind)).replace("\\", "")


def counts_caption(at) -> str:
    return next(t for t in texts(at.sidebar.caption) if t.startswith("**Table:**"))


def button(at, label: str):
    return next(b for b in at.button if b.label == label)


def metrics(at) -> dict[str, str]:
    return {m.label: str(m.value) for m in at.metric}


def select_rows(at, table: str, rows: list[int]):
    """Select rows of a selectable st.dataframe (its key starts with `table`), as a click would."""
    key = next(df.key for df in at.dataframe if df.key and df.key.startswith(table))
    at.session_state[key] = {"selection": {"rows": rows, "columns": [], "cells": []}}
    return at.run()


def isolate_app(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> Path:
    """Point the app at `data_dir`, without the developer's own keys, URLs or INKWELL_* settings."""
    for name in list(os.environ):
        if name.startswith("INKWELL_") or name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("INKWELL_DATA_DIR", str(data_dir))
    return data_dir


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


class CountingEmbedder:
    """A real embedder that counts how often it is asked to embed a question."""

    def __init__(self, inner) -> None:
        from core.embed import query_vectors

        query_vectors.clear()  # questions memoised by earlier tests would not be counted
        self.inner = inner
        self.model_id = inner.model_id
        self.queries = 0

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts):
        return self.inner.embed(texts)

    def query(self, texts):
        self.queries += 1
        return self.inner.query(texts)


# A German blog: three posts about bees (plain text, title on the first line).
GERMAN_POSTS = {
    "winter": "Bienen im Winter\n\nIm Winter bilden die Bienen eine Traube. Die Traube hält in der Mitte etwa "
    "20 Grad, auch wenn es draußen friert. Das kostet viel Energie. Deshalb füttere ich im September "
    "Zuckersirup, und jedes Volk bekommt etwa 15 Kilo.\n",
    "varroa": "Der Kampf gegen die Varroamilbe\n\nDie Varroamilbe ist der größte Feind meiner Bienen. Nach "
    "der letzten Honigernte behandle ich mit Ameisensäure. Im Dezember träufle ich Oxalsäure auf die "
    "Bienen, wenn das Volk brutfrei ist.\n",
    "garten": "Ein Garten für Bienen\n\nSeit ich Bienen halte, ist unser Rasen zur Hälfte einer Blumenwiese "
    "gewichen. Die Phacelia säe ich jedes Jahr neu aus. Diese Pflanze heißt nicht umsonst Bienenfreund.\n",
}
