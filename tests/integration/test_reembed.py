"""Switching embedding models: `reembed` through a real OpenAI-compatible server on loopback."""

from __future__ import annotations

import numpy as np
import pytest

from core.embed import EmbedError
from core.ingest import ingest_posts, reembed
from core.models import Block, Post
from core.search import search
from core.store import ModelMismatchError
from tests.servers import ScriptedOpenAIServer

TEXTS = {
    "owls": "Barn owls hunt voles over the meadow at dusk.",
    "kilns": "The wood-fired kiln burns for three days before the pots are done.",
    "tides": "Spring tides come twice a month, with the new and the full moon.",
}


@pytest.fixture
def stored(settings, store, embedder):
    posts = [
        Post(pid, pid.title(), [Block(text)], raw=text, source=f"{pid}.txt") for pid, text in TEXTS.items()
    ]
    ingest_posts(posts, settings, store=store, embedder=embedder)
    return store


def unit_vectors(n: int, dim: int = 8) -> list[list[float]]:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(n, dim))
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).tolist()


def test_reembed_switches_the_table_to_the_new_model(stored, settings):
    before = {r["chunk_id"]: r["text"] for r in stored.list_chunks()}
    vectors = unit_vectors(len(before))
    with ScriptedOpenAIServer() as server:
        server.embeddings(vectors)
        remote = settings.replace(
            embed_backend="openai",
            embed_model="test-embed",
            embed_base_url=server.base_url,
            embed_batch_size=100,
        )
        assert reembed(remote, store=stored) == len(before)
        assert len(server.requests_to("/embeddings")) == 1  # batched

        info = stored.model_info()
        assert (info.model_id, info.dim) == ("openai:test-embed", 8)
        assert {r["chunk_id"]: r["text"] for r in stored.list_chunks()} == before

        # Nothing configured: later commands follow the table's model (and its server).
        target = stored.list_chunks()[1]
        server.embeddings([vectors[1]])
        follow = settings.replace(embed_base_url=server.base_url)
        assert search("anything", follow, store=stored).hits[0].chunk_id == target["chunk_id"]

    explicit = settings.replace(embed_model="all-MiniLM-L6-v2")
    with pytest.raises(ModelMismatchError, match="inkwell reembed"):
        search("owls", explicit, store=stored)


def test_failed_reembed_changes_nothing(stored, settings):
    info = stored.model_info()
    before = stored.chunks.to_arrow().select(["chunk_id", "vector"]).to_pylist()
    with ScriptedOpenAIServer() as server:
        server.error(500, "boom", times=5)
        remote = settings.replace(
            embed_backend="openai", embed_model="test-embed", embed_base_url=server.base_url, max_retries=1
        )
        with pytest.raises(EmbedError, match="server error") as failed:
            reembed(remote, store=stored)
        # No chat LLM is configured, but the message names the server that failed, not the built-in one.
        assert f"the embedding server at {server.base_url}" in str(failed.value).lower()
    assert stored.model_info() == info
    assert stored.chunks.to_arrow().select(["chunk_id", "vector"]).to_pylist() == before


def test_openai_backend_without_key_or_url_is_a_clear_error(settings):
    from core.embed import get_embedder

    with pytest.raises(EmbedError, match="OPENAI_API_KEY"):
        get_embedder(settings.replace(embed_backend="openai"))
