"""Chat-model access, only through the `openai` client.

Three kinds of endpoint, chosen by the settings:
- OpenAI itself (`openai_api_key` set, no `openai_base_url`);
- any OpenAI-compatible server (`openai_base_url`, e.g. Ollama, vLLM, LM Studio; the key may be absent);
- the built-in llama.cpp server (neither set; see core/llm/builtin.py).

Every openai exception is turned into `LLMError`, whose message is one line a reader can act on. The API
key never appears in a message, a log line or a repr: server-provided error text is scrubbed of it (and of
anything that looks like a key) before use, and the original openai exception is not chained.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx2
import openai
from openai import OpenAI

from core.config import Settings
from core.llm.cancel import abort_response, current_token

log = logging.getLogger(__name__)

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
PLACEHOLDER_KEY = "not-needed"  # for servers that take no key (the client insists on having one)
BUILTIN_LABEL = "built-in SmolLM2-135M (offline, small: answers are rough)"

_KEYLIKE = re.compile(r"\b(?:sk|rk|pk)-[A-Za-z0-9_*\-]{6,}")


class LLMError(Exception):
    """A chat-model call failed. `str()` is a one-line message for the user; it never contains the key.

    `kind` is a short machine tag: "auth", "forbidden", "rate_limit", "quota", "not_found", "bad_request",
    "context_length", "server", "timeout", "connection", "builtin", "cancelled" (stopped through a
    core.llm.cancel token; the message is the token's reason), "error". `status` is the HTTP status
    when there was one.
    """

    def __init__(self, message: str, *, kind: str = "error", status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.status = status

    def __repr__(self) -> str:
        return f"LLMError({self.message!r}, kind={self.kind!r}, status={self.status!r})"


@dataclass
class Usage:
    """Token counts reported by the server, accumulated over the calls it was passed to."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    calls: int = 0
    model: str = ""

    def add(self, usage: Any, model: str = "") -> None:
        if usage is None:
            return
        self.prompt_tokens += int(getattr(usage, "prompt_tokens", 0) or 0)
        self.completion_tokens += int(getattr(usage, "completion_tokens", 0) or 0)
        self.total_tokens += int(getattr(usage, "total_tokens", 0) or 0)
        self.calls += 1
        self.model = model or self.model


# Endpoint description ------------------------------------------------------------------------------------


def _safe_url(url: str) -> str:
    """The URL without user:password@ and without a query string (either could hold a secret)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<invalid URL>"
    netloc = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, netloc, parts.path, "", "")).rstrip("/")


def _is_openai(settings: Settings) -> bool:
    return not settings.uses_builtin_llm and not settings.openai_base_url


def _where(settings: Settings, base_url: str | None = None) -> str:
    """How messages name the endpoint: "OpenAI", "the built-in model server", "the model server at …"."""
    embed_url = (settings.embed_base_url or "").rstrip("/")
    if base_url and embed_url and base_url.rstrip("/") == embed_url:
        # A separate embeddings server: name it, whatever answers the chat.
        return f"the embedding server at {_safe_url(embed_url)}"
    if settings.uses_builtin_llm:
        return "the built-in model server"
    if _is_openai(settings):
        return "OpenAI"
    return f"the model server at {_safe_url(base_url or settings.openai_base_url or '')}"


def describe_llm(settings: Settings, *, endpoint: bool = True) -> str:
    """A short label for the UI: which model answers, and where. Never contains the key.

    `endpoint=False` leaves out the address of an own server (for public readers); "OpenAI" and the
    built-in model are named either way.
    """
    if settings.uses_builtin_llm:
        if settings.local_model_path:
            return f"built-in {Path(settings.local_model_path).name} (offline)"
        return BUILTIN_LABEL
    model = settings.effective_chat_model
    if _is_openai(settings):
        return f"{model} via OpenAI"
    if not endpoint:
        return model
    return f"{model} via {_safe_url(settings.openai_base_url or '')}"


# Client ---------------------------------------------------------------------------------------------------


def make_client(settings: Settings) -> tuple[OpenAI, str]:
    """An OpenAI client for the configured endpoint, and the model name to ask for.

    Starts the built-in server on first use when no key and no base URL are configured.
    """
    if settings.uses_builtin_llm:
        from core.llm.builtin import BuiltinModelError, get_builtin_server

        try:
            server = get_builtin_server(settings)
        except BuiltinModelError as err:
            raise LLMError(str(err), kind="builtin") from None
        return openai_client(settings, server.base_url, PLACEHOLDER_KEY), settings.effective_chat_model
    return openai_client(settings, settings.openai_base_url), settings.effective_chat_model


class Unreachable(openai.APIConnectionError):
    """No connection could be made to the server (refused, no route, unknown host, or no answer to the
    connect within `connect_timeout`). `reason` is the socket's one-line account of it."""

    def __init__(self, request: httpx2.Request, reason: str, *, timed_out: bool = False) -> None:
        super().__init__(message=f"Connection error: {reason}", request=request)
        self.reason = reason
        self.timed_out = timed_out


class _FailFastTransport(httpx2.HTTPTransport):
    """The HTTP transport, except that a connection that cannot be made raises `Unreachable`.

    The openai client retries httpx errors with backoff but re-raises an openai error as it is
    (openai/_base_client.py, 3.57: "Propagate OpenAIErrors as-is, without retrying"), so a server that
    is not there fails in one attempt instead of `max_retries` attempts and ~8 s of backoff. A
    connection that was made and then failed (a reset, a read timeout, a 5xx) is still retried.
    """

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            return super().handle_request(request)
        except httpx2.ConnectTimeout:
            raise Unreachable(request, "no answer to the connection", timed_out=True) from None
        except httpx2.ConnectError as err:
            raise Unreachable(request, str(err) or type(err).__name__) from None


def openai_client(settings: Settings, base_url: str | None = None, api_key: str | None = None) -> OpenAI:
    """A client for OpenAI (no base URL) or a compatible server; used for chat and for embeddings.

    A connection is given `connect_timeout` seconds and is not retried when it cannot be made; the
    request then has `request_timeout` seconds, and timeouts, dropped connections and 408/409/429/5xx
    are retried `max_retries` times by the client (exponential backoff: 0.5 s doubling, max 8 s, 0-25%
    jitter, honouring Retry-After).
    """
    return OpenAI(
        api_key=api_key or settings.openai_api_key or PLACEHOLDER_KEY,
        base_url=base_url or OPENAI_DEFAULT_BASE_URL,
        timeout=client_timeout(settings),
        max_retries=settings.max_retries,
        http_client=openai.DefaultHttpxClient(transport=_FailFastTransport()),
    )


def client_timeout(settings: Settings) -> httpx2.Timeout:
    """`request_timeout` for the request, `connect_timeout` (at most that) to make the connection."""
    return httpx2.Timeout(
        settings.request_timeout, connect=min(settings.connect_timeout, settings.request_timeout)
    )


# Errors ---------------------------------------------------------------------------------------------------


def _scrub(text: str, settings: Settings, limit: int = 200) -> str:
    """Server-provided text made safe for a one-line message: no key, no key-like tokens, short."""
    key = settings.openai_api_key
    if key:
        text = text.replace(key, "***")
    text = _KEYLIKE.sub("***", text)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _server_detail(err: openai.APIStatusError, settings: Settings) -> str:
    body = err.body
    detail: Any = None
    if isinstance(body, dict):
        inner = body.get("error", body)
        detail = inner.get("message") if isinstance(inner, dict) else inner
        detail = detail or body.get("detail") or body.get("message")
    if not detail:
        try:
            detail = err.response.text
        except Exception:
            detail = ""
    return _scrub(str(detail or ""), settings)


def _error_code(err: openai.APIStatusError) -> str:
    body = err.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            return str(inner.get("code") or inner.get("type") or "")
    return ""


def _retries(settings: Settings) -> str:
    n = settings.max_retries
    return f"{n} {'retry' if n == 1 else 'retries'}"


def to_llm_error(
    err: Exception, settings: Settings, model: str = "", base_url: str | None = None
) -> LLMError:
    """Translate an openai exception into an LLMError with a clear, key-free, one-line message."""
    if isinstance(err, LLMError):
        return err
    error = _translate(err, settings, model, base_url)
    error.message = _cap(error.message)
    error.args = (error.message,)
    return error


def _translate(err: Exception, settings: Settings, model: str, base_url: str | None) -> LLMError:
    where = _where(settings, base_url)
    model = model or settings.effective_chat_model
    if isinstance(err, openai.APITimeoutError):
        return LLMError(
            f"{where} did not answer within {settings.request_timeout:g} s, "
            f"after {_retries(settings)} (timeout)",
            kind="timeout",
        )
    if isinstance(err, Unreachable):
        if err.timed_out:
            return LLMError(
                f"could not connect to {where}: no answer within {settings.connect_timeout:g} s "
                "(connect timeout; INKWELL_CONNECT_TIMEOUT)",
                kind="connection",
            )
        return LLMError(
            f"could not connect to {where}: {_scrub(err.reason, settings)} (connection error)",
            kind="connection",
        )
    if isinstance(err, openai.APIConnectionError):
        return LLMError(
            f"could not connect to {where} after {_retries(settings)} (connection error)", kind="connection"
        )
    if isinstance(err, openai.APIStatusError):
        status = err.status_code
        detail = _server_detail(err, settings)
        code = _error_code(err)
        suffix = f": {detail}" if detail else ""
        if status == 401:
            if settings.openai_api_key:
                return LLMError(f"{where} rejected the API key (401)", kind="auth", status=status)
            return LLMError(
                f"{where} requires an API key (401): set OPENAI_API_KEY", kind="auth", status=status
            )
        if status == 403:
            return LLMError(f"{where} refused access (403){suffix}", kind="forbidden", status=status)
        if status == 404:
            return LLMError(
                f"{where} does not know the model {model!r} (404){suffix}", kind="not_found", status=status
            )
        if status == 429:
            if code == "insufficient_quota":
                return LLMError(
                    f"{where} says the account is out of quota (429 insufficient_quota)",
                    kind="quota",
                    status=status,
                )
            return LLMError(
                f"{where} rate limited the request (429), still after {_retries(settings)}",
                kind="rate_limit",
                status=status,
            )
        if status >= 500:
            return LLMError(
                f"{where} failed with a server error ({status}) after {_retries(settings)}{suffix}",
                kind="server",
                status=status,
            )
        lowered = detail.lower()
        if code == "context_length_exceeded" or (
            "context" in lowered and ("exceed" in lowered or "length" in lowered)
        ):
            return LLMError(
                f"the prompt is too long for model {model!r} ({status}){suffix}",
                kind="context_length",
                status=status,
            )
        return LLMError(f"{where} rejected the request ({status}){suffix}", kind="bad_request", status=status)
    if isinstance(err, openai.APIError):  # e.g. an error event in the middle of a stream
        return LLMError(f"{where} reported an error: {_scrub(str(err.message), settings)}", kind="error")
    if isinstance(err, openai.OpenAIError):
        return LLMError(f"{where} gave an unusable answer: {_scrub(str(err), settings)}", kind="error")
    return LLMError(
        f"calling {where} failed: {type(err).__name__}: {_scrub(str(err), settings)}", kind="error"
    )


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _fail(err: Exception, settings: Settings, model: str, base_url: str | None) -> LLMError:
    error = to_llm_error(err, settings, model, base_url)
    log.warning("LLM call failed: %s", error.message)
    return error


# Calls ----------------------------------------------------------------------------------------------------


def _request_args(
    settings: Settings, temperature: float | None, max_tokens: int | None, response_format: dict | None
) -> dict[str, Any]:
    args: dict[str, Any] = {
        "temperature": settings.temperature if temperature is None else temperature,
        "max_tokens": settings.max_tokens if max_tokens is None else max_tokens,
    }
    if response_format is not None:
        args["response_format"] = response_format
    if settings.uses_builtin_llm:
        # A 135M model loops on one sentence without a repetition penalty (seen: 1,000 tokens of
        # "I'm happy to continue…"), and long answers only add invention: keep them short.
        args["max_tokens"] = min(args["max_tokens"], settings.builtin_max_tokens)
        args["extra_body"] = {"repeat_penalty": settings.builtin_repeat_penalty, "repeat_last_n": 256}
    return args


def chat(
    settings: Settings,
    messages: list[dict],
    *,
    temperature: float | None = None,
    max_tokens: int | None = None,
    response_format: dict | None = None,
    usage: Usage | None = None,
) -> str:
    """One chat completion; returns its text ("" if the model said nothing). `usage` collects tokens.

    Inside a cancelled `core.llm.cancel.cancel_scope`, raises LLMError(kind="cancelled") without calling.
    """
    token = current_token()
    if token is not None and token.cancelled:
        raise LLMError(token.reason, kind="cancelled")
    client, model = make_client(settings)
    base_url = str(client.base_url)
    try:
        with client:
            response = client.chat.completions.create(
                model=model,
                messages=messages,
                **_request_args(settings, temperature, max_tokens, response_format),
            )
    except openai.OpenAIError as err:
        raise _fail(err, settings, model, base_url) from None
    if usage is not None:
        usage.add(getattr(response, "usage", None), getattr(response, "model", "") or model)
    if not response.choices:
        return ""
    return response.choices[0].message.content or ""


def stream_chat(
    settings: Settings,
    messages: list[dict],
    *,
    temperature: float | None = None,
    max_tokens: int | None = None,
    response_format: dict | None = None,
    usage: Usage | None = None,
    on_finish: Callable[[str], None] | None = None,
) -> Iterator[str]:
    """Stream a chat completion, yielding text deltas. Errors (also mid-stream) raise LLMError.

    Usage is requested (`stream_options.include_usage`) from OpenAI and the built-in server, which both
    support it; other compatible servers send it or not, and we take it when they do.

    Started inside `core.llm.cancel.cancel_scope(token)`, the stream stops when the token is cancelled
    (from any thread): its connection is shut down, so the server stops generating, and LLMError with
    kind "cancelled" and the token's reason is raised. Closing the generator also closes the connection.
    """
    token = current_token()
    if token is not None and token.cancelled:
        raise LLMError(token.reason, kind="cancelled")
    client, model = make_client(settings)
    base_url = str(client.base_url)
    args = _request_args(settings, temperature, max_tokens, response_format)
    if settings.uses_builtin_llm or _is_openai(settings):
        args["stream_options"] = {"include_usage": True}
    forget: Callable[[], None] = lambda: None  # noqa: E731
    finished = False
    try:
        with client:
            stream = client.chat.completions.create(model=model, messages=messages, stream=True, **args)
            if token is not None:
                forget = token.on_cancel(lambda: abort_response(stream.response))
            with stream:
                for chunk in stream:
                    if usage is not None and getattr(chunk, "usage", None) is not None:
                        usage.add(chunk.usage, getattr(chunk, "model", "") or model)
                    for choice in chunk.choices or ():
                        delta = choice.delta.content if choice.delta else None
                        if delta:
                            yield delta
                        if choice.finish_reason:
                            finished = True
                            if on_finish is not None:
                                on_finish(choice.finish_reason)  # "length": cut off by max_tokens
    except Exception as err:
        # A shut-down socket surfaces as an openai or an httpx error, depending on where the read was.
        if token is not None and token.cancelled:
            raise LLMError(token.reason, kind="cancelled") from None
        if isinstance(err, openai.OpenAIError):
            raise _fail(err, settings, model, base_url) from None
        raise
    finally:
        forget()
    if token is not None and token.cancelled and not finished:  # the server ended the cut stream quietly
        raise LLMError(token.reason, kind="cancelled")
