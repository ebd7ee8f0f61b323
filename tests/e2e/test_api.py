"""The HTTP API beside the app (server.py → core/serve/api.py), over real HTTP: `streamlit run server.py`
on a loopback port, a real table, the real embedder, and a
scripted OpenAI-compatible server on 127.0.0.1 for the one generated answer. `requests` (Streamlit's own
dependency) is the client: what `curl` sends.

Each test asks from its own client address (X-Forwarded-For from a trusted proxy: 127.0.0.1), so the
per-client rate limit of one test never counts another's questions."""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from click.testing import CliRunner

from core.answer.owner import save_owner
from core.cli.main import main
from core.config import Settings
from core.ingest import ingest_posts
from core.models import Block, Post
from core.store import Store
from core.store.questions import PRIVACY_NOTE, QuestionLog
from tests.conftest import BEES, BREAD, bees_post
from tests.e2e_support import app_environ, streamlit_server
from tests.servers import ScriptedOpenAIServer

STARTERS = ["When does swarming season start?", "How are mites counted?", "How is the starter fed?"]
BLOG = "http://127.0.0.1:4000"  # the one origin the owner allows
PER_MINUTE = 3
_addresses = (f"203.0.113.{i}" for i in itertools.count(1))
# A title that Markdown escapes (`&`, `<`, `*`): the plain answer must give it back as written.
KILN_TITLE = 'Kilns <img src=x onerror="alert(1)"> & "quotes" *fired*'
KILN = [
    "A bisque firing in my electric kiln takes about nine hours.",
    "The kiln must cool for a full day before the door is opened.",
]


def api_environ(data_dir: Path, **settings: str) -> dict[str, str]:
    """The API servers' environment: the test table, quoted answers, no translation or routing."""
    defaults = {
        "INKWELL_DATA_DIR": str(data_dir),
        "INKWELL_CHUNK_TOKENS": "30",
        "INKWELL_ANSWER_MODE": "extractive",
        "INKWELL_TRANSLATE_QUESTION": "false",
        "INKWELL_ROUTING": "off",
    }
    return app_environ(**(defaults | settings))


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as server:
        yield server


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory, embedder) -> Path:
    data_dir = tmp_path_factory.mktemp("api") / "db"
    settings = Settings.load({"data_dir": data_dir, "chunk_tokens": 30}, environ={})
    posts = [
        bees_post(),
        Post("bread", "Sourdough", [Block(BREAD)], raw=BREAD, source="bread.txt", collection="recipes"),
        Post("kiln", KILN_TITLE, [Block(p) for p in KILN], raw="\n\n".join(KILN), source="kiln.txt"),
    ]
    assert ingest_posts(posts, settings, store=Store(data_dir), embedder=embedder).ok
    save_owner(Store(data_dir), {"greeting": "Ask me about bees.", "starters": STARTERS})
    return data_dir


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, table: Path, model: ScriptedOpenAIServer) -> Iterator[str]:
    env = api_environ(
        table,
        INKWELL_ALLOWED_ORIGINS=BLOG,
        INKWELL_TRUSTED_PROXIES="127.0.0.1",
        INKWELL_QUESTIONS_PER_MINUTE=str(PER_MINUTE),
        OPENAI_BASE_URL=model.base_url,
    )
    with streamlit_server(tmp_path_factory.mktemp("api-server"), env, script="server.py") as server:
        yield server.url


@pytest.fixture(scope="module")
def untrusted_api(tmp_path_factory: pytest.TempPathFactory, table: Path) -> Iterator[str]:
    """The API as it starts by default: no trusted proxy; 2 questions a minute per client."""
    env = api_environ(table, INKWELL_QUESTIONS_PER_MINUTE="2")
    with streamlit_server(tmp_path_factory.mktemp("api-untrusted"), env, script="server.py") as server:
        yield server.url


class Client:
    """HTTP to the API from an address of its own (see the module docstring)."""

    def __init__(self, base: str) -> None:
        self.base, self.session = base, requests.Session()
        self.session.headers["X-Forwarded-For"] = next(_addresses)

    def request(self, method: str, path: str, **kwargs) -> requests.Response:
        return self.session.request(method, self.base + path, timeout=300, **kwargs)

    def get(self, path: str, **kwargs) -> requests.Response:
        return self.request("GET", path, **kwargs)

    def options(self, path: str, **kwargs) -> requests.Response:
        return self.request("OPTIONS", path, **kwargs)


@pytest.fixture
def client(api: str) -> Iterator[Client]:
    http = Client(api)
    yield http
    http.session.close()


def ask(client: Client, body: dict | str, **headers: str) -> requests.Response:
    content = body if isinstance(body, str) else json.dumps(body)
    return client.request("POST", "/api/ask", data=content.encode(),
                          headers={"Content-Type": "application/json", **headers})  # fmt: skip


def events(response: requests.Response) -> list[tuple[str, dict]]:
    """The server-sent events of a whole response, as (event, data)."""
    out = []
    for block in response.text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        out.append((lines["event"], json.loads(lines["data"])))
    return out


def test_health_counts_the_posts(client):
    response = client.get("/api/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "posts": 3, "chunks": response.json()["chunks"]}
    assert response.json()["chunks"] >= 2


def test_ask_quotes_the_author_verbatim_and_names_the_posts(client):
    response = ask(client, {"question": "When does swarming season start?"})
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    data = response.json()
    assert data["mode"] == "extractive" and not data["declined"]
    assert data["sentences"] and all(any(s["text"] in p for p in BEES) for s in data["sentences"])
    assert "Swarming season starts in May." in [s["text"] for s in data["sentences"]]
    assert {s["post_id"] for s in data["sources"]} == {"bees"} and data["sources"][0]["title"] == "On Bees"
    # No address on the blog: a click opens Inkwell's reader page at the quoted sentences.
    assert data["sources"][0]["url"] is None
    assert data["sources"][0]["link"].startswith(f"{client.base}/read?post=bees&q=Swarming")
    (passage,) = data["passages"]
    assert passage["post_id"] == "bees" and "Swarming season starts in May." in passage["text"]
    assert "relevance" not in json.dumps(data)  # no machinery for readers


def test_the_api_and_the_cli_give_the_same_answer(client, table):
    question = "How often are the mites counted?"
    api_answer = ask(client, {"question": question}).json()
    env = {"INKWELL_DATA_DIR": str(table), "INKWELL_CHUNK_TOKENS": "30", "INKWELL_ROUTING": "off"}
    result = CliRunner(env=env).invoke(main, ["ask", question, "--answer-mode", "extractive", "--json"])
    assert result.exit_code == 0, result.output
    cli = json.loads(result.stdout)
    assert api_answer["answer"] == cli["answer"] and api_answer["mode"] == cli["answer_mode"]
    assert [s["text"] for s in api_answer["sentences"]] == [s["text"] for s in cli["sentences"]]


def test_an_off_topic_question_gets_the_honest_reply_and_the_closest_posts(client):
    data = ask(client, {"question": "Who won the football world cup in 2018?"}).json()
    assert data["declined"] and data["mode"] == "none"
    assert data["answer"].startswith("I haven't written about that")
    assert data["suggestions"] and not data["sentences"]


def test_the_answer_streams_as_server_sent_events(client):
    response = ask(client, {"question": "When does swarming season start?"}, Accept="text/event-stream")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    got = events(response)
    assert got[0] == ("meta", {"mode": "extractive", "searched_for": None})
    assert got[-1][0] == "done"
    deltas = "".join(d["text"] for e, d in got if e == "delta")
    assert deltas == got[-1][1]["answer"] and "Swarming season starts in May." in deltas


def test_the_plain_answer_gives_a_title_as_written(client):
    data = ask(client, {"question": "How long does a bisque firing in the kiln take?"}).json()
    assert data["mode"] == "extractive" and [s["post_id"] for s in data["sources"]] == ["kiln"]
    assert data["answer_text"].startswith(f"From {KILN_TITLE}:\n"), data["answer_text"]
    assert KILN[0] in data["answer_text"]
    assert not any(escape in data["answer_text"] for escape in ("&amp;", "&lt;", "\\"))
    assert "&amp;" in data["answer"]  # the Markdown form keeps its escapes, for Markdown renderers
    got = events(ask(client, {"question": "How long does a bisque firing in the kiln take?"},
                     Accept="text/event-stream"))  # fmt: skip
    plain = "".join(d["plain"] for e, d in got if e == "delta")
    assert plain == got[-1][1]["answer_text"] == data["answer_text"]


def test_a_generated_answer_streams_from_the_model(client, model):
    model.chat(["Swarming season ", "starts in May."])
    response = ask(
        client,
        {"question": "When does swarming season start?", "mode": "generative"},
        Accept="text/event-stream",
    )
    got = events(response)
    assert got[0][1]["mode"] == "generative"
    assert [d["text"] for e, d in got if e == "delta"] and got[-1][0] == "done", got
    assert got[-1][1]["answer"] == "Swarming season starts in May."
    assert "When does swarming season start?" in json.dumps(model.chat_requests[-1].body)


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ("{not json", 400, "not valid JSON"),
        ('["a list"]', 400, "JSON object"),
        ({"question": ""}, 400, "empty"),
        ({"question": 42}, 400, "string"),
        ({"question": "Bees?", "conversation": "hello"}, 400, "conversation"),
        ({"question": "Bees?", "conversation": [{"role": "system", "content": "x"}]}, 400, "role"),
        ({"question": "Bees?", "mode": "poetry"}, 400, "mode"),
        ({"question": "Bees?", "collection": 7}, 400, "collection"),
        ({"question": "Bees?", "collection": "recipe"}, 400, 'No collection named "recipe"'),  # a typo
        ({"question": "x" * 1001}, 413, "1,000"),
        ({"question": "Bees?", "padding": "x" * 70_000}, 413, "64 KB"),
        ("[" * 30_000 + "]" * 30_000, 400, "nested too deeply"),  # was a RecursionError: 500
        ('{"question": "Bees \\ud800?"}', 400, "unpaired UTF-16 surrogate"),  # was a TypeError: 500
        ('{"question": "Bees?", "conversation": [{"role": "user", "content": "\\udc00"}]}', 400, "surrogate"),
    ],
)
def test_bad_requests_get_a_json_error_and_no_traceback(client, body, status, words):
    response = ask(client, body)
    assert response.status_code == status, response.text
    assert response.json()["status"] == status and words in response.json()["error"]
    assert "Traceback" not in response.text


def test_unknown_addresses_and_methods_answer_in_json(client):
    for response, status in ((client.get("/api/ask"), 405), (client.get("/api/nothing"), 404)):
        assert response.status_code == status and response.json()["status"] == status


def test_search_returns_the_hits_and_checks_k(client):
    data = client.get("/api/search", params={"q": "sourdough starter", "k": 1}).json()
    assert [h["post_id"] for h in data["hits"]] == ["bread"] and BREAD.startswith(
        data["hits"][0]["text"][:20]
    )
    assert client.get("/api/search", params={"q": "bees", "k": 0}).status_code == 400
    assert client.get("/api/search", params={"q": "", "k": 3}).status_code == 400


def test_a_client_past_the_rate_limit_is_told_when_to_come_back(client):
    # Requests refused as malformed cost no question (a widget's typo must not lock its reader out).
    for bad in ({"question": ""}, {"question": "Bees?", "collection": "recipe"}) * PER_MINUTE:
        assert ask(client, bad).status_code == 400
    assert client.get("/api/search", params={"q": "bees", "k": 0}).status_code == 400
    statuses = [ask(client, {"question": "Bees?"}) for _ in range(PER_MINUTE + 1)]
    assert [r.status_code for r in statuses[:PER_MINUTE]] == [200] * PER_MINUTE
    refused = statuses[-1]
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
    assert "wait" in refused.json()["error"]


def test_a_new_x_forwarded_for_on_each_request_is_still_one_client(untrusted_api):
    # uvicorn believes loopback's header; with no proxy trusted, Inkwell must not (issue #31's rule).
    client = Client(untrusted_api)
    spoofed = [f"198.51.100.{n}" for n in range(1, 5)]
    statuses = [ask(client, {"question": "Bees?"}, **{"X-Forwarded-For": a}).status_code for a in spoofed]
    assert statuses == [200, 200, 429, 429]


def test_behind_a_trusted_proxy_each_forwarded_client_is_counted(client):
    # The module's server trusts 127.0.0.1: the client is the right-most address the proxy forwarded.
    first, *others = [next(_addresses) for _ in range(PER_MINUTE + 1)]
    for address in [first, *others]:
        assert ask(client, {"question": "Bees?"}, **{"X-Forwarded-For": address}).status_code == 200
    # What a client wrote left of the proxy's entry does not make it another client.
    again = [
        ask(client, {"question": "Bees?"}, **{"X-Forwarded-For": f"192.0.2.{n}, {first}"}).status_code
        for n in range(PER_MINUTE)
    ]
    assert again == [200] * (PER_MINUTE - 1) + [429]


def test_only_the_listed_origin_may_call_from_a_browser(client):
    preflight = client.options(
        "/api/ask",
        headers={"Origin": BLOG, "Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "content-type"},
    )  # fmt: skip
    assert preflight.status_code == 200 and preflight.headers["access-control-allow-origin"] == BLOG
    allowed = ask(client, {"question": "When does swarming season start?"}, Origin=BLOG)
    assert allowed.status_code == 200 and allowed.headers["access-control-allow-origin"] == BLOG
    other = "http://127.0.0.1:4001"
    refused = ask(client, {"question": "When does swarming season start?"}, Origin=other)
    assert refused.status_code == 403 and "access-control-allow-origin" not in refused.headers
    bad_preflight = client.options(
        "/api/ask", headers={"Origin": other, "Access-Control-Request-Method": "POST"}
    )
    assert "access-control-allow-origin" not in bad_preflight.headers
    # In JSON like every other error (Starlette's own says "Disallowed CORS origin" in plain text).
    assert bad_preflight.status_code == 403 and bad_preflight.json()["status"] == 403
    assert "not allowed" in bad_preflight.json()["error"]


def test_the_widget_script_is_served(client):
    response = client.get("/widget.js")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/javascript")
    assert "attachShadow" in response.text and "innerHTML" not in response.text


def test_the_openapi_description_names_every_route(client):
    spec = client.get("/api/openapi.json").json()
    assert spec["openapi"].startswith("3.")
    assert set(spec["paths"]) == {"/api/ask", "/api/feedback", "/api/search", "/api/health", "/api/welcome"}


def test_questions_are_logged_without_the_client_and_take_feedback(client, table):
    data = ask(client, {"question": "When does swarming season start?"}).json()
    question_id = data["question_id"]
    assert question_id
    # What the reader got, as the log keeps it: language, mode, declined and the seconds the API reported.
    answered = QuestionLog(Store(table)).get(question_id)
    assert (answered.language, answered.mode, answered.declined) == ("en", "extractive", False)
    assert 0 < answered.seconds < 120 and answered.seconds == pytest.approx(data["seconds"], abs=0.002)
    french = "Qui a gagné la coupe du monde de football en 2018 ?"
    refused = ask(client, {"question": french}).json()
    assert refused["declined"] and refused["question_id"]
    declined = QuestionLog(Store(table)).get(refused["question_id"])
    assert (declined.question, declined.language, declined.mode, declined.declined, declined.posts) == (
        french,
        "fr",
        "none",
        True,
        (),
    )
    assert 0 < declined.seconds < 120 and declined.source == "api" and declined.feedback is None
    rated = client.request(
        "POST", "/api/feedback", json={"question_id": question_id, "up": False, "comment": "Too short"}
    )
    assert rated.status_code == 200 and rated.json() == {"ok": True}
    logged = QuestionLog(Store(table)).get(question_id)
    assert logged.source == "api" and logged.question == "When does swarming season start?"
    assert logged.posts == ("bees",) and logged.feedback == -1 and logged.comment == "Too short"
    address = client.session.headers["X-Forwarded-For"]
    assert address not in json.dumps(logged.to_json())  # nothing identifies the reader
    # The widget says it is the widget, so the author can tell the blog's questions from other clients'.
    widget = Client(client.base)  # an address of its own: the first client's questions are all counted
    from_widget = ask(widget, {"question": "How are mites counted?", "client": "widget"}).json()
    assert QuestionLog(Store(table)).get(from_widget["question_id"]).source == "widget"
    wrong = ask(widget, {"question": "How are mites counted?", "client": "bot"})
    assert wrong.status_code == 400 and '"client"' in wrong.json()["error"]
    unknown = client.request("POST", "/api/feedback", json={"question_id": "0" * 32, "up": True})
    assert unknown.status_code == 404 and "no such question" in unknown.json()["error"]
    bad = client.request("POST", "/api/feedback", json={"question_id": question_id, "up": "yes"})
    assert bad.status_code == 400


def test_welcome_gives_the_owners_greeting_and_starters(client):
    data = client.get("/api/welcome").json()
    assert data["greeting"] == "Ask me about bees." and data["starters"] == STARTERS
    # The log is on by default: the widget shows the chat footer's note (one sentence, core).
    assert data["question_log"] is True and data["privacy_note"] == PRIVACY_NOTE


# INKWELL_QUESTION_LOG=off: a server of its own on a table of its own, so no other test's question counts.


@pytest.fixture(scope="module")
def unlogged(tmp_path_factory: pytest.TempPathFactory, embedder) -> Iterator[tuple[str, Path]]:
    """A server that keeps no questions: (its URL, its data directory)."""
    data_dir = tmp_path_factory.mktemp("api-off") / "db"
    settings = Settings.load({"data_dir": data_dir, "chunk_tokens": 30}, environ={})
    posts = [bees_post()]
    assert ingest_posts(posts, settings, store=Store(data_dir), embedder=embedder).ok
    env = api_environ(data_dir, INKWELL_QUESTION_LOG="off")
    with streamlit_server(tmp_path_factory.mktemp("api-off-server"), env, script="server.py") as server:
        yield server.url, data_dir


def test_with_the_log_off_the_api_stores_nothing(unlogged):
    url, data_dir = unlogged
    http = Client(url)
    try:
        answered = ask(http, {"question": "When does swarming season start?"})
        assert answered.status_code == 200 and "Swarming season starts in May." in answered.json()["answer"]
        assert answered.json()["question_id"] is None  # nothing to rate: nothing was kept
        streamed = events(ask(http, {"question": "Who won the football world cup in 2018?"},
                              Accept="text/event-stream"))  # fmt: skip
        assert streamed[-1][0] == "done" and streamed[-1][1]["question_id"] is None
        rated = http.request("POST", "/api/feedback", json={"question_id": "0" * 32, "up": True})
        assert rated.status_code == 404 and "not kept" in rated.json()["error"]
        welcome = http.get("/api/welcome").json()
        assert welcome["question_log"] is False and welcome["privacy_note"] == ""  # no note in the widget
    finally:
        http.session.close()
    assert Store(data_dir)._open("questions") is None  # not even an empty table


# Every answer slot taken: a follow-up is joined, not rewritten by the model outside the line ------------


@pytest.fixture(scope="module")
def busy_api(
    tmp_path_factory: pytest.TempPathFactory, table: Path
) -> Iterator[tuple[str, ScriptedOpenAIServer]]:
    """The API with one answer slot and a model of its own: (its URL, the model server)."""
    with ScriptedOpenAIServer() as model:
        env = api_environ(
            table,
            INKWELL_ANSWER_MODE="generative",
            INKWELL_ANSWER_CONCURRENCY="1",
            OPENAI_BASE_URL=model.base_url,
        )
        with streamlit_server(tmp_path_factory.mktemp("api-busy"), env, script="server.py") as server:
            yield server.url, model


def test_with_every_slot_taken_a_follow_up_is_joined_not_rewritten_by_the_model(busy_api):
    url, model = busy_api
    first = "When does swarming season start?"
    model.chat("Swarming season starts in May.", delay=15)  # holds the only slot while the follow-up comes
    slow = threading.Thread(target=lambda: ask(Client(url), {"question": first}))
    slow.start()
    try:
        deadline = time.monotonic() + 120
        while not model.chat_requests and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(model.chat_requests) == 1  # the first answer is being written
        conversation = [{"role": "user", "content": first}, {"role": "assistant", "content": "In May."}]
        body = {"question": "And how long does it last?", "conversation": conversation, "mode": "extractive"}
        reply = ask(Client(url), body)
        assert reply.status_code == 200, reply.text
        assert reply.json()["searched_for"] == f"{first} And how long does it last?"
        assert len(model.chat_requests) == 1  # no rewrite asked of the busy model
    finally:
        slow.join(timeout=120)


def test_a_known_collection_narrows_the_search(client):
    reply = ask(Client(client.base), {"question": "How is the starter fed?", "collection": "recipes"})
    assert reply.status_code == 200, reply.text
    assert [s["post_id"] for s in reply.json()["sources"]] == ["bread"]
