"""Remote embeddings at scale (core/embed/remote.py): an OpenAI-compatible `/v1/embeddings` server on
127.0.0.1 serving real vectors (the bundled MiniLM, as a TEI or vLLM server would), with batching,
bounded concurrency and retries."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from core.config import ConfigError, Settings
from core.embed import EmbedError
from core.embed.remote import OpenAIEmbedder
from tests.servers import Reply, ScriptedOpenAIServer, error_body

TEXTS = [
    f"Note {i}: the {['oak', 'walnut', 'cherry', 'ash'][i % 4]} board cupped after {i} days."
    for i in range(70)
]


@pytest.fixture
def model_server(embedder):
    """The server answers with the local model's vectors, slowly enough for requests to overlap."""
    with ScriptedOpenAIServer() as server:

        def respond(body: dict) -> Reply:
            time.sleep(0.05)
            return Reply(vectors=embedder.embed(body.get("input") or []).tolist())

        server.responder = respond
        yield server


def remote(server: ScriptedOpenAIServer, **overrides) -> OpenAIEmbedder:
    values = {
        "embed_backend": "openai",
        "embed_base_url": server.base_url,
        "embed_model": "minilm",
        **overrides,
    }
    return OpenAIEmbedder(Settings.load(values, environ={}))


def test_batches_in_parallel_come_back_in_order_with_the_models_vectors(model_server, embedder) -> None:
    client = remote(model_server, embed_batch_size=8, embed_concurrency=3)
    vectors = client.embed(TEXTS)
    assert vectors.shape == (len(TEXTS), embedder.dim) and client.dim == embedder.dim
    assert np.allclose(vectors, embedder.embed(TEXTS), atol=1e-4)  # same vectors, same order
    calls = model_server.requests_to("/embeddings")
    assert len(calls) == 9 and max(len(c.body["input"]) for c in calls) == 8  # ceil(70 / 8) batches
    assert 1 < model_server.max_in_flight <= 3  # overlapped, never more than embed_concurrency


def test_one_at_a_time_when_concurrency_is_one(model_server) -> None:
    remote(model_server, embed_batch_size=16, embed_concurrency=1).embed(TEXTS[:40])
    assert len(model_server.requests_to("/embeddings")) == 3 and model_server.max_in_flight == 1


def test_overloaded_server_is_retried_and_a_refusal_is_an_error(model_server) -> None:
    model_server.push(Reply(status=503, body=error_body("busy", type="server_error")))
    model_server.push(Reply(status=429, body=error_body("slow down", type="rate_limit_error")))
    client = remote(model_server, embed_batch_size=100, embed_concurrency=2, max_retries=3)
    assert client.embed(TEXTS[:5]).shape[0] == 5
    assert len(model_server.requests_to("/embeddings")) == 3  # two refusals, then the answer

    model_server.push(Reply(status=400, body=error_body("input too long")))
    with pytest.raises(EmbedError, match="input too long"):
        client.embed(TEXTS[:5])


def test_a_failed_batch_fails_the_whole_call(model_server) -> None:
    lock = threading.Lock()
    seen = {"n": 0}
    good = model_server.responder

    def one_fails(body: dict) -> Reply:
        with lock:
            seen["n"] += 1
            n = seen["n"]
        if n == 2:
            return Reply(status=400, body=error_body("bad batch"))
        return good(body)

    model_server.responder = one_fails
    with pytest.raises(EmbedError, match="bad batch"):
        remote(model_server, embed_batch_size=10, embed_concurrency=2, max_retries=0).embed(TEXTS[:40])


def test_embed_concurrency_must_be_positive() -> None:
    with pytest.raises(ConfigError, match="embed_concurrency"):
        Settings.load({"embed_concurrency": 0}, environ={})
