"""Structured (JSON) chat calls for the preparation stages: schema where the server takes one, a
forgiving parser where it doesn't, a reply cache, and token accounting.

    value = json_call(settings, task="keywords", system=..., user=..., schema=..., max_tokens=400,
                      cache=cache, stats=stats)

- The request asks for `response_format={"type": "json_schema", ...}` (OpenAI's structured outputs;
  llama.cpp turns it into a grammar). A server that rejects it (400 mentioning response_format or
  schema) is asked again without it, and remembered for the rest of the process.
- Replies are parsed by `parse_json_reply`: code fences, prose around the object, trailing commas,
  typographic quotes and truncated output (the object is closed after its last complete value) are
  all tolerated. Nothing usable raises `JSONReplyError`.
- Rate limits, 5xx and timeouts are retried with backoff by the openai client (core/llm/client.py); what
  still fails raises `LLMError` and nothing is cached.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from core.config import Settings
from core.llm.cache import LLMCache, cache_key
from core.llm.client import LLMError, Usage, chat, describe_llm
from core.text import count_tokens, plural

PROMPT_VERSION = "prep-1"
MESSAGE_OVERHEAD = 4  # tokens a chat template adds per message (OpenAI's documented estimate)


class JSONReplyError(ValueError):
    """The model's reply holds no usable JSON."""


@dataclass
class LLMStats:
    """What the preparation stages cost: requests made and served from cache, tiktoken estimates, and
    the token counts the API reported."""

    calls: int = 0
    cached: int = 0
    estimated_prompt_tokens: int = 0
    estimated_completion_tokens: int = 0
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0
    saved_tokens: int = 0  # estimated tokens of the calls answered from cache

    @property
    def estimated_tokens(self) -> int:
        return self.estimated_prompt_tokens + self.estimated_completion_tokens

    def merge(self, other: LLMStats) -> None:
        self.calls += other.calls
        self.cached += other.cached
        self.estimated_prompt_tokens += other.estimated_prompt_tokens
        self.estimated_completion_tokens += other.estimated_completion_tokens
        self.saved_tokens += other.saved_tokens
        self.seconds += other.seconds
        self.usage.prompt_tokens += other.usage.prompt_tokens
        self.usage.completion_tokens += other.usage.completion_tokens
        self.usage.total_tokens += other.usage.total_tokens
        self.usage.calls += other.usage.calls
        self.usage.model = other.usage.model or self.usage.model

    def to_json(self) -> dict:
        return {
            "calls": self.calls,
            "cached_calls": self.cached,
            "estimated_prompt_tokens": self.estimated_prompt_tokens,
            "estimated_completion_tokens": self.estimated_completion_tokens,
            "api_prompt_tokens": self.usage.prompt_tokens,
            "api_completion_tokens": self.usage.completion_tokens,
            "api_total_tokens": self.usage.total_tokens,
            "saved_tokens": self.saved_tokens,
            "request_seconds": round(self.seconds, 3),  # summed over requests (they overlap)
        }

    def summary(self) -> str:
        saved = f" (~{plural(self.saved_tokens, 'token')} saved)" if self.cached else ""
        return (
            f"LLM: {plural(self.calls, 'call')}, {self.cached} from cache{saved}; "
            f"~{plural(self.estimated_tokens, 'token')} (tiktoken), {self.usage.total_tokens} reported by the API"
        )


# Parsing --------------------------------------------------------------------------------------------------

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)(?:```|$)", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_QUOTES = str.maketrans({"“": '"', "”": '"'})


def parse_json_reply(text: str) -> Any:
    """The JSON value in a model's reply, repaired where that is safe; raises JSONReplyError."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for candidate in candidates:
        start = _first_bracket(candidate)
        if start < 0:
            continue
        body = candidate[start:].strip()
        for attempt in (body, _TRAILING_COMMA.sub(r"\1", body)):
            value = _loads_prefix(attempt)
            if value is not None:
                return value
        repaired = _close_truncated(_TRAILING_COMMA.sub(r"\1", body))
        if repaired is not None:
            return repaired
        quoted = body.translate(_QUOTES)
        if quoted != body:
            value = _loads_prefix(_TRAILING_COMMA.sub(r"\1", quoted)) or _close_truncated(quoted)
            if value is not None:
                return value
    raise JSONReplyError(f"no JSON object in the reply ({_preview(text)})")


def _preview(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def _first_bracket(text: str) -> int:
    positions = [p for p in (text.find("{"), text.find("[")) if p >= 0]
    return min(positions) if positions else -1


def _loads_prefix(text: str) -> Any:
    """The first complete JSON value at the start of `text` (text after it is ignored), else None."""
    try:
        value, _ = json.JSONDecoder().raw_decode(text)
    except ValueError:
        return None
    return value if isinstance(value, (dict, list)) else None


def _close_truncated(text: str) -> Any:
    """A reply cut off mid-object: keep everything up to its last complete value and close the brackets.

    One scan records, after each complete value (a closing bracket or the end of a string or literal
    followed by a comma), which brackets are still open; the longest such prefix that parses wins.
    """
    stack: list[str] = []
    cuts: list[tuple[int, str]] = []  # (end of prefix, closers)
    in_string = escape = False
    for i, ch in enumerate(text):
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if not stack or stack[-1] != ch:
                break
            stack.pop()
            cuts.append((i + 1, "".join(reversed(stack))))
            if not stack:
                break
        elif ch == ",":
            cuts.append((i, "".join(reversed(stack))))
    for end, closers in reversed(cuts[-200:]):
        try:
            value = json.loads(text[:end] + closers)
        except ValueError:
            continue
        if isinstance(value, (dict, list)):
            return value
    return None


# Calls ----------------------------------------------------------------------------------------------------

_NO_SCHEMA: set[str] = set()  # endpoints that refused response_format in this process
_NO_SCHEMA_LOCK = threading.Lock()


def prep_settings(settings: Settings) -> Settings:
    """The settings the preparation calls use: `prep_model` when set, else the chat model."""
    return settings.replace(chat_model=settings.prep_model) if settings.prep_model else settings


def endpoint_label(settings: Settings) -> str:
    """Which model at which endpoint (key-free): part of every cache key."""
    return describe_llm(prep_settings(settings))


def response_format(name: str, schema: dict) -> dict:
    return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}


def _schema_refused(err: LLMError) -> bool:
    text = err.message.lower()
    return err.kind == "bad_request" and any(w in text for w in ("response_format", "json_schema", "schema"))


def json_call(
    settings: Settings,
    *,
    task: str,
    system: str,
    user: str,
    schema: dict,
    max_tokens: int,
    cache: LLMCache | None,
    stats: LLMStats,
) -> Any:
    """One structured call (or a cache hit). Returns the parsed JSON value.

    Raises LLMError when the call fails (after the client's retries) and JSONReplyError when the reply
    has no usable JSON (that reply is cached all the same: asking again would give the same answer).
    """
    settings = prep_settings(settings)
    label = describe_llm(settings)
    key = cache_key(label, task, PROMPT_VERSION, system, user, schema)
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    estimate_in = count_tokens(system) + count_tokens(user) + 2 * MESSAGE_OVERHEAD
    hit = cache.get(key) if cache is not None else None
    if hit is not None:
        stats.cached += 1
        stats.saved_tokens += estimate_in + count_tokens(hit.reply)
        return parse_json_reply(hit.reply)

    started = time.perf_counter()
    usage = Usage()
    with _NO_SCHEMA_LOCK:
        use_schema = label not in _NO_SCHEMA
    try:
        stats.calls += 1
        stats.estimated_prompt_tokens += estimate_in
        try:
            reply = chat(
                settings,
                messages,
                temperature=0,
                max_tokens=max_tokens,
                response_format=response_format(task, schema) if use_schema else None,
                usage=usage,
            )
        except LLMError as err:
            if not (use_schema and _schema_refused(err)):
                raise
            with _NO_SCHEMA_LOCK:
                _NO_SCHEMA.add(label)
            stats.calls += 1
            stats.estimated_prompt_tokens += estimate_in
            reply = chat(settings, messages, temperature=0, max_tokens=max_tokens, usage=usage)
    finally:
        stats.seconds += time.perf_counter() - started
        stats.usage.prompt_tokens += usage.prompt_tokens
        stats.usage.completion_tokens += usage.completion_tokens
        stats.usage.total_tokens += usage.total_tokens
        stats.usage.calls += usage.calls
        stats.usage.model = usage.model or stats.usage.model
    stats.estimated_completion_tokens += count_tokens(reply)
    if cache is not None:
        cache.put(
            key,
            model=label,
            task=task,
            reply=reply,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
        )
    return parse_json_reply(reply)
