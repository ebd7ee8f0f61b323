"""core.llm and core.llm.builtin, over real HTTP: the real openai client against the scripted server on
loopback, and (marked llm) against the built-in llama.cpp server."""

from __future__ import annotations

import logging
import socket
import time
import traceback
from pathlib import Path

import pytest

from core.config import Settings
from core.llm import LLMError, Usage, chat, describe_llm, get_builtin_server, make_client, stream_chat
from core.llm.builtin import BuiltinModelError, builtin_model_path, start_builtin_server
from core.llm.client import BUILTIN_LABEL, PLACEHOLDER_KEY
from tests.servers import Reply, ScriptedOpenAIServer, chat_chunks

FAKE_KEY = "sk-inkwell-test-9f8e7d6c5b4a3210fedcba"
MESSAGES = [{"role": "user", "content": "Say hello in five words."}]


@pytest.fixture(scope="module")
def builtin_settings() -> Settings:
    settings = Settings(max_tokens=24, temperature=0.0)
    get_builtin_server(settings)  # start it once for the module
    return settings


def remote(server: ScriptedOpenAIServer, **changes) -> Settings:
    return Settings(openai_base_url=server.base_url, max_retries=2, request_timeout=5.0).replace(**changes)


# Built-in server ------------------------------------------------------------------------------------------


def test_bundled_model_path_is_a_gguf():
    path = builtin_model_path(Settings())
    assert path.is_file()
    assert path.suffix == ".gguf"


def test_missing_local_model_is_a_clear_error(tmp_path: Path):
    settings = Settings(local_model_path=str(tmp_path / "nope.gguf"))
    with pytest.raises(BuiltinModelError, match=r"nope\.gguf"):
        builtin_model_path(settings)
    with pytest.raises(LLMError, match=r"nope\.gguf") as info:
        make_client(settings)
    assert info.value.kind == "builtin"


@pytest.mark.llm
def test_builtin_server_is_cached_and_on_loopback(builtin_settings: Settings):
    first = get_builtin_server(builtin_settings)
    assert get_builtin_server(builtin_settings) is first
    assert first.base_url.startswith("http://127.0.0.1:")
    assert first.base_url.endswith("/v1")
    assert first.model == "smollm2"
    client, model = make_client(builtin_settings)
    assert str(client.base_url).rstrip("/") == first.base_url
    assert model == "smollm2"
    client.close()


@pytest.mark.llm
def test_builtin_server_stops_when_closed():
    server = start_builtin_server(Settings(local_context=512))  # a separate, uncached one
    port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
    socket.create_connection(("127.0.0.1", port), timeout=2).close()
    server.close()
    assert not server.running
    time.sleep(0.2)
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


@pytest.mark.llm
def test_builtin_chat(builtin_settings: Settings):
    usage = Usage()
    text = chat(builtin_settings, MESSAGES, usage=usage)
    assert isinstance(text, str)
    assert text.strip()
    assert usage.completion_tokens > 0
    assert usage.prompt_tokens > 0


@pytest.mark.llm
def test_builtin_stream(builtin_settings: Settings):
    usage = Usage()
    deltas = list(stream_chat(builtin_settings, MESSAGES, max_tokens=16, usage=usage))
    assert len(deltas) > 1
    assert all(isinstance(d, str) and d for d in deltas)
    assert "".join(deltas).strip()
    assert 0 < usage.completion_tokens <= 16  # asked for with stream_options.include_usage


# Labels ---------------------------------------------------------------------------------------------------


def test_describe_llm():
    assert describe_llm(Settings()) == BUILTIN_LABEL
    assert "offline" in BUILTIN_LABEL
    assert (
        describe_llm(Settings(local_model_path="/models/qwen2.5-0.5b.gguf"))
        == "built-in qwen2.5-0.5b.gguf (offline)"
    )
    assert describe_llm(Settings(openai_api_key=FAKE_KEY)) == "gpt-4o-mini via OpenAI"
    assert describe_llm(Settings(openai_api_key=FAKE_KEY, chat_model="gpt-4.1")) == "gpt-4.1 via OpenAI"
    local = Settings(openai_base_url="http://localhost:11434/v1", chat_model="llama3")
    assert describe_llm(local) == "llama3 via http://localhost:11434/v1"
    secretive = Settings(openai_base_url="https://user:pw@llm.example/v1?key=abc", openai_api_key=FAKE_KEY)
    label = describe_llm(secretive)
    assert label == "gpt-4o-mini via https://llm.example/v1"
    assert FAKE_KEY not in label


# Client construction and routing -------------------------------------------------------------------------


def test_openai_client_uses_key_default_url_and_retry_settings():
    settings = Settings(openai_api_key=FAKE_KEY, max_retries=3, request_timeout=12.5)
    client, model = make_client(settings)
    assert client.base_url.host == "api.openai.com"
    assert model == "gpt-4o-mini"
    assert client.max_retries == 3
    assert client.timeout.read == 12.5 and client.timeout.connect == settings.connect_timeout == 5.0
    assert client.api_key == FAKE_KEY
    client.close()


def test_base_url_without_key_routes_there_with_placeholder_key(scripted: ScriptedOpenAIServer):
    scripted.chat("Hi from the compatible server.")
    settings = remote(scripted, chat_model="llama3")
    assert chat(settings, MESSAGES) == "Hi from the compatible server."
    [request] = scripted.requests
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "llama3"
    assert request.authorization == f"Bearer {PLACEHOLDER_KEY}"


def test_key_is_sent_as_bearer_token(scripted: ScriptedOpenAIServer):
    scripted.chat("ok")
    chat(remote(scripted, openai_api_key=FAKE_KEY), MESSAGES)
    assert scripted.requests[0].authorization == f"Bearer {FAKE_KEY}"


def test_chat_sends_settings_and_overrides(scripted: ScriptedOpenAIServer):
    scripted.chat("one").chat("two")
    settings = remote(scripted, temperature=0.4, max_tokens=1000)
    chat(settings, MESSAGES)
    chat(settings, MESSAGES, temperature=0, max_tokens=50, response_format={"type": "json_object"})
    first, second = (r.body for r in scripted.requests)
    assert (first["temperature"], first["max_tokens"]) == (0.4, 1000)
    assert "response_format" not in first
    assert first["messages"] == MESSAGES
    assert (second["temperature"], second["max_tokens"]) == (0, 50)
    assert second["response_format"] == {"type": "json_object"}


def test_stream_chat_yields_deltas_and_usage(scripted: ScriptedOpenAIServer):
    deltas = ["Writing ", "is ", "paying ", "attention."]
    usage_body = {"prompt_tokens": 42, "completion_tokens": 4, "total_tokens": 46}
    scripted.push(Reply(events=chat_chunks(deltas, usage=usage_body)))
    usage = Usage()
    assert list(stream_chat(remote(scripted), MESSAGES, usage=usage)) == deltas
    assert scripted.requests[0].body["stream"] is True
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (42, 4, 46)


# Retries and errors ---------------------------------------------------------------------------------------


def test_429_then_success_is_retried(scripted: ScriptedOpenAIServer):
    scripted.error(429, "Rate limit reached", code="rate_limit_exceeded", retry_after="0.05")
    scripted.chat("Second time lucky.")
    assert chat(remote(scripted), MESSAGES) == "Second time lucky."
    assert len(scripted.chat_requests) == 2


def test_429_every_time_gives_rate_limit_error(scripted: ScriptedOpenAIServer):
    scripted.error(429, "Rate limit reached", times=3)
    with pytest.raises(LLMError) as info:
        chat(remote(scripted, max_retries=2), MESSAGES)
    assert info.value.kind == "rate_limit"
    assert "429" in str(info.value) and "2 retries" in str(info.value)
    assert len(scripted.requests) == 3


def test_500_exhausts_retries_with_clear_message(scripted: ScriptedOpenAIServer):
    scripted.error(500, "The server had an error", type="server_error", times=3)
    settings = remote(scripted, max_retries=2)
    with pytest.raises(LLMError) as info:
        chat(settings, MESSAGES)
    message = str(info.value)
    assert info.value.kind == "server" and info.value.status == 500
    assert message.startswith(f"The model server at {scripted.base_url}")
    assert "(500) after 2 retries" in message
    assert "\n" not in message
    assert len(scripted.requests) == settings.max_retries + 1


def test_5xx_then_success_in_a_stream(scripted: ScriptedOpenAIServer):
    scripted.error(503, "overloaded").chat("Back again.")
    assert "".join(stream_chat(remote(scripted), MESSAGES)) == "Back again."
    assert len(scripted.requests) == 2


def test_timeout_is_retried_then_reported(scripted: ScriptedOpenAIServer):
    scripted.hang(120, times=2)
    settings = remote(scripted, request_timeout=0.5, max_retries=1)
    started = time.monotonic()
    with pytest.raises(LLMError) as info:
        chat(settings, MESSAGES)
    # Both tries cut by the 0.5 s timeout (~1.5 s in all); the bound only tells that from one 120 s wait.
    assert time.monotonic() - started < 60
    assert info.value.kind == "timeout"
    assert "timeout" in str(info.value)
    assert "did not answer" in str(info.value) and "1 retry" in str(info.value)
    assert len(scripted.requests) == 2


def test_connection_refused_is_reported():
    with socket.socket() as sock:  # find a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = Settings(openai_base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)
    with pytest.raises(LLMError) as info:
        chat(settings, MESSAGES)
    assert info.value.kind == "connection"
    assert f"127.0.0.1:{port}" in str(info.value)


def retried(records: list[logging.LogRecord]) -> list[str]:
    """The openai client's "Retrying request …" log lines."""
    return [r.getMessage() for r in records if r.getMessage().startswith("Retrying request")]


def test_a_refused_connection_fails_in_one_attempt_without_backoff(caplog):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = Settings(openai_base_url=f"http://127.0.0.1:{port}/v1", max_retries=4)
    with caplog.at_level(logging.INFO, logger="openai"), pytest.raises(LLMError) as info:
        chat(settings, MESSAGES)
    assert info.value.kind == "connection" and "refused" in str(info.value).lower()
    assert "retries" not in str(info.value)  # none were made, so the message claims none
    assert retried(caplog.records) == []  # was 4, with ~8 s of backoff


def test_a_connection_not_accepted_in_time_is_not_retried(caplog):
    # A listener whose accept queue is full: the kernel drops further SYNs, as for an unreachable host.
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(0)
        port = server.getsockname()[1]
        waiting = []
        for _ in range(3):
            client = socket.socket()
            client.setblocking(False)
            client.connect_ex(("127.0.0.1", port))
            waiting.append(client)
        settings = Settings(
            openai_base_url=f"http://127.0.0.1:{port}/v1",
            connect_timeout=0.3,
            request_timeout=2,
            max_retries=4,
        )
        try:
            with caplog.at_level(logging.INFO, logger="openai"), pytest.raises(LLMError) as info:
                chat(settings, MESSAGES)
        finally:
            for client in waiting:
                client.close()
    assert info.value.kind == "connection" and "no answer within 0.3 s" in str(info.value)
    assert retried(caplog.records) == []


def test_a_server_error_after_connecting_is_still_retried(scripted: ScriptedOpenAIServer, caplog):
    scripted.error(503, "overloaded").error(503, "overloaded").chat("Back again.")
    with caplog.at_level(logging.INFO, logger="openai"):
        assert chat(remote(scripted, max_retries=2), MESSAGES) == "Back again."
    assert len(retried(caplog.records)) == 2 and len(scripted.chat_requests) == 3


def test_the_public_label_leaves_out_the_servers_address():
    settings = Settings(openai_base_url="http://10.0.0.7:8000/v1", chat_model="llama3")
    assert describe_llm(settings) == "llama3 via http://10.0.0.7:8000/v1"
    assert describe_llm(settings, endpoint=False) == "llama3"
    assert describe_llm(Settings(openai_api_key=FAKE_KEY), endpoint=False) == "gpt-4o-mini via OpenAI"


def test_unknown_model_is_reported(scripted: ScriptedOpenAIServer):
    scripted.error(404, "The model `gpt-9` does not exist", code="model_not_found")
    with pytest.raises(LLMError) as info:
        chat(remote(scripted, chat_model="gpt-9"), MESSAGES)
    assert info.value.kind == "not_found"
    assert "'gpt-9'" in str(info.value) and "404" in str(info.value)
    assert len(scripted.requests) == 1  # 404 is not retried


def test_context_too_long_is_reported(scripted: ScriptedOpenAIServer):
    scripted.error(400, "request (9000 tokens) exceeds the available context size (8192 tokens)")
    with pytest.raises(LLMError) as info:
        chat(remote(scripted), MESSAGES)
    assert info.value.kind == "context_length"
    assert "too long" in str(info.value)


def test_auth_errors_never_reveal_the_key(scripted: ScriptedOpenAIServer, caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.DEBUG)  # openai, httpx and our own loggers, at their most talkative
    settings = remote(scripted, openai_api_key=FAKE_KEY)
    # A server that echoes the key back, as OpenAI does (partly masked) in its 401 message.
    scripted.error(401, f"Incorrect API key provided: {FAKE_KEY}.", code="invalid_api_key")
    scripted.error(400, f"bad request for key {FAKE_KEY} and {FAKE_KEY[:12]}xxxxxxxx")
    scripted.error(401, f"Incorrect API key provided: {FAKE_KEY}.")

    errors = []
    for call in (lambda: chat(settings, MESSAGES), lambda: chat(settings, MESSAGES)):
        with pytest.raises(LLMError) as info:
            call()
        errors.append(info.value)
    with pytest.raises(LLMError) as info:
        list(stream_chat(settings, MESSAGES))
    errors.append(info.value)

    assert (
        errors[0].kind == "auth"
        and str(errors[0]) == f"The model server at {scripted.base_url} rejected the API key (401)"
    )
    assert errors[1].kind == "bad_request"
    assert errors[2].kind == "auth"
    assert len(scripted.requests) == 3  # 401 and 400 are not retried
    assert all(r.authorization == f"Bearer {FAKE_KEY}" for r in scripted.requests)  # the key was really sent
    for error in errors:
        shown = [str(error), repr(error), "".join(traceback.format_exception(error))]
        assert not any(FAKE_KEY in text or FAKE_KEY[:12] in text for text in shown), shown
    assert caplog.records, "expected some log output to check"
    assert FAKE_KEY not in caplog.text
    assert FAKE_KEY[:12] not in caplog.text
    assert FAKE_KEY not in describe_llm(settings) and FAKE_KEY not in repr(settings)


def test_openai_401_message_names_openai():
    import httpx2
    from openai import AuthenticationError

    from core.llm import to_llm_error
    from tests.servers import error_body

    request = httpx2.Request("POST", "https://api.openai.com/v1/chat/completions")
    response = httpx2.Response(
        401, request=request, json=error_body(f"Incorrect API key provided: {FAKE_KEY}")
    )
    err = AuthenticationError("Error code: 401", response=response, body=response.json())
    error = to_llm_error(err, Settings(openai_api_key=FAKE_KEY))
    assert str(error) == "OpenAI rejected the API key (401)"


def test_401_without_a_key_asks_for_one(scripted: ScriptedOpenAIServer):
    scripted.error(401, "missing key")
    with pytest.raises(LLMError, match=r"requires an API key \(401\)"):
        chat(remote(scripted), MESSAGES)


def test_scripted_server_serves_embeddings(scripted: ScriptedOpenAIServer):
    """The helper other test files use for the OpenAI embeddings backend."""
    vectors = [[0.5, -0.25, 1.0], [0.125, 0.0, -2.0]]  # exact in float32
    scripted.embeddings(vectors).embeddings(vectors)
    client, _ = make_client(Settings(openai_base_url=scripted.base_url, openai_api_key=FAKE_KEY))
    with client:
        as_floats = client.embeddings.create(model="m", input=["a", "b"], encoding_format="float")
        as_base64 = client.embeddings.create(model="m", input=["a", "b"])  # the client asks for base64
    assert [d.embedding for d in as_floats.data] == vectors
    assert [d.embedding for d in as_base64.data] == vectors
    first, second = scripted.requests_to("/embeddings")
    assert first.body["input"] == ["a", "b"]
    assert second.body["encoding_format"] == "base64"
    assert first.authorization == f"Bearer {FAKE_KEY}"


def test_builtin_requests_are_short_and_penalise_repeats():
    from core.llm.client import _request_args

    builtin = _request_args(Settings(), None, 1000, None)
    assert builtin["max_tokens"] == Settings().builtin_max_tokens < 1000
    assert builtin["extra_body"]["repeat_penalty"] == Settings().builtin_repeat_penalty > 1.0
    remote = _request_args(Settings(openai_api_key="sk-test"), None, 1000, None)
    assert remote["max_tokens"] == 1000 and "extra_body" not in remote
