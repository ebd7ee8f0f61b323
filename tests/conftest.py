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
