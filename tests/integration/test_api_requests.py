"""The HTTP API's handling of malformed requests, called in-process through its ASGI interface (no server,
no network): core/serve/api.py's `api_app` over a real, empty table."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from core.config import Settings
from core.ingest import ingest_posts
from core.serve.api import api_app, routes
from core.store import Store
from tests.conftest import bees_post


def get(app, path: str, query: bytes) -> tuple[int, dict]:
    """A GET of `path` with the raw query string `query` (bytes as a client sends them): status, JSON body."""
    return call(app, "GET", path, query)


def post(app, path: str, data: dict) -> tuple[int, dict]:
    """A POST of `data` as JSON to `path`: status, JSON body."""
    return call(app, "POST", path, b"", json.dumps(data).encode())


def call(app, method: str, path: str, query: bytes, data: bytes = b"") -> tuple[int, dict]:
    sent: list[dict] = []
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": query,
        "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json")],
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 8501),
    }

    async def receive() -> dict:
        return {"type": "http.request", "body": data, "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], json.loads(body)


@pytest.fixture
def app(tmp_path: Path):
    settings = Settings.load({"data_dir": tmp_path / "db"}, environ={})
    return api_app(lambda: settings)


@pytest.mark.parametrize(
    "query",
    [
        b"q=%ED%A0%80",  # an encoded lone surrogate: was searched as "\ufffd", 200
        b"q=bees%FF&k=3",  # a byte that is no UTF-8
        b"q=bees&k=%C3",  # a cut-off sequence, in another parameter
        b"q=caf\xe9",  # a raw Latin-1 byte, not percent-encoded
    ],
)
def test_a_query_string_that_is_not_utf8_is_a_400(app, query):
    status, body = get(app, "/search", query)
    assert status == 400 and body == {
        "error": "The query string holds bytes that are not UTF-8 text: encode it as UTF-8.",
        "status": 400,
    }


def test_a_utf8_query_string_is_read_as_text(app):
    status, body = get(app, "/search", b"q=caf%C3%A9&q=cr%C3%A8me+br%C3%BBl%C3%A9e")
    assert status == 200 and body == {"question": "crème brûlée", "hits": []}  # the last q, as Starlette's
    # Raw UTF-8 (curl sends it unencoded) is text too: it was read as Latin-1, "cafÃ©".
    assert get(app, "/search", "q=café".encode())[1]["question"] == "café"
    assert get(app, "/search", b"q=&k=3")[0] == 400  # an empty question, as before


def test_a_reader_asking_an_empty_table_gets_the_usual_decline(app):
    """Not an error naming the owner's data directory (as `inkwell ask` gives the owner): a reader is told
    "I haven't written about that", as for any question nothing answers."""
    status, body = post(app, "/ask", {"question": "anything?"})
    assert status == 200 and body["declined"] and body["answer"].startswith("I haven't written about that")
    assert "ingest" not in json.dumps(body)
    assert body["lang"] == "en"  # for the widget's lang attribute (a screen reader's pronunciation)


@pytest.mark.parametrize("k", ["%C2%B2", "%E2%91%A0", "%D9%A3"])  # "²", "①", Arabic-Indic "٣"
def test_a_k_that_is_not_ascii_digits_is_a_400(app, k):
    """Unicode digits pass str.isdigit() but int() refuses some ("²"): that was a 503, "Inkwell could not
    answer just now", for a request that is simply malformed."""
    status, body = get(app, "/search", f"q=bees&k={k}".encode())
    assert status == 400 and body == {"error": '"k" must be a whole number from 1 to 50.', "status": 400}


def test_feedback_that_is_not_a_json_object_is_told_what_feedback_takes(app):
    """It was told to send {"question": "..."}, the ask endpoint's body, which feedback then refuses too."""
    status, body = post(app, "/feedback", ["up"])
    assert status == 400 and body["error"] == (
        'Send a JSON object such as {"question_id": "...", "up": true or false, "comment": "..."}.'
    )
    assert post(app, "/ask", ["Bees?"])[1]["error"] == 'Send a JSON object such as {"question": "..."}.'


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/api/ask/"), ("POST", "/api/feedback/"), ("GET", "/api/health/"), ("GET", "/api/search//")],
)
def test_an_address_with_a_trailing_slash_answers_as_without(tmp_path, method, path):
    """`POST /api/ask/` was a 307 to /api/ask: `curl` without -L and many blog plugins do not follow it,
    so their question was lost. The API mounted as server.py mounts it (under /api), no redirects."""
    settings = Settings.load({"data_dir": tmp_path / "db"}, environ={})
    client = TestClient(Starlette(routes=routes(lambda: settings)), follow_redirects=False)
    body = {"question": "Bees?"} if path.startswith("/api/ask") else {"question_id": "x", "up": True}
    slash = client.request(method, path, params={"q": "bees"}, json=body if method == "POST" else None)
    plain = client.request(
        method, path.rstrip("/"), params={"q": "bees"}, json=body if method == "POST" else None
    )
    assert slash.status_code == plain.status_code != 307
    assert slash.json().keys() == plain.json().keys()
    assert client.get("/api/asks/").status_code == 404  # an unknown address: the JSON 404, not a guess
    assert client.get("/api/").json()["error"] == "There is no such API address."


# Health -------------------------------------------------------------------------------------------------


@pytest.fixture
def bees_table(tmp_path: Path, embedder) -> Path:
    data_dir = tmp_path / "bees-db"
    settings = Settings.load({"data_dir": data_dir}, environ={})
    assert ingest_posts([bees_post()], settings, store=Store(data_dir), embedder=embedder).ok
    return data_dir


def health(tmp_path: Path, **settings) -> tuple[int, dict]:
    return get(api_app(lambda: Settings.load(settings, environ={})), "/health", b"")


def test_health_is_ok_with_posts_and_a_model(bees_table, tmp_path):
    status, body = health(tmp_path, data_dir=bees_table)
    assert status == 200 and body == {"status": "ok", "posts": 1, "chunks": body["chunks"]} and body["chunks"]


def test_health_says_no_posts_have_been_ingested(tmp_path):
    """It answered 200 "ok" with 0 posts: a monitor saw a healthy server that declines every question."""
    status, body = health(tmp_path, data_dir=tmp_path / "db")
    assert status == 503 and body["problem"] == "no_posts"
    assert body["error"] == "No posts have been ingested yet, so there is nothing to answer from."


def test_health_says_the_data_folder_cannot_be_read_without_naming_it(tmp_path):
    """It was the generic "Inkwell could not answer just now" 503; the reason must not show the path."""
    (tmp_path / "not-a-folder").write_text("x")
    status, body = health(tmp_path, data_dir=tmp_path / "not-a-folder")
    assert status == 503 and body["problem"] == "data"
    assert body["error"] == "Inkwell cannot read its data folder." and str(tmp_path) not in json.dumps(body)


def test_health_says_the_embedding_model_cannot_load(bees_table, tmp_path):
    """The table is fine but the configured model is gone: every question would fail to be searched."""
    gone = tmp_path / "models" / "gone"
    status, body = health(tmp_path, data_dir=bees_table, embed_model=str(gone))
    assert status == 503 and body["problem"] == "model" and body["posts"] == 1
    assert body["error"] == "The embedding model cannot be loaded, so questions cannot be searched."
    assert str(tmp_path) not in json.dumps(body)
