"""Talking to chat models: the OpenAI-compatible client (client), JSON replies and their repair
(structured), the reply cache (cache) and the built-in llama.cpp server (builtin, llama_worker).
"""

from __future__ import annotations

from core.llm.builtin import get_builtin_server
from core.llm.cache import LLMCache, corpus_language
from core.llm.client import (
    LLMError,
    Usage,
    chat,
    describe_llm,
    make_client,
    openai_client,
    stream_chat,
    to_llm_error,
)
from core.llm.structured import JSONReplyError, LLMStats, endpoint_label, json_call

__all__ = [
    "JSONReplyError",
    "LLMCache",
    "LLMError",
    "LLMStats",
    "Usage",
    "chat",
    "corpus_language",
    "describe_llm",
    "endpoint_label",
    "get_builtin_server",
    "json_call",
    "make_client",
    "openai_client",
    "stream_chat",
    "to_llm_error",
]
