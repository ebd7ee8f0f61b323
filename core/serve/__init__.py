"""Serving readers safely: the owner's password gate (wrong passwords throttled server-side, per client address and overall) and the per-session question rate limit (guard),
which client a connection comes from, believing only the owner's trusted proxies (clients), the
line for model-written answers with its time limit and cancellation (admission), and the chat's
conversations kept across reloads (conversations)."""

from __future__ import annotations

from core.serve.admission import AnswerGate, AnswerRefused, AnswerStopped, GateStatus, Ticket
from core.serve.conversations import (
    URL_PARAM,
    ConversationError,
    Conversations,
    is_conversation_id,
    new_conversation_id,
)
from core.serve.guard import DEFAULT_QUESTIONS_PER_MINUTE, LoginThrottle, PasswordGate, RateLimiter

__all__ = [
    "DEFAULT_QUESTIONS_PER_MINUTE",
    "URL_PARAM",
    "AnswerGate",
    "AnswerRefused",
    "AnswerStopped",
    "ConversationError",
    "Conversations",
    "GateStatus",
    "LoginThrottle",
    "PasswordGate",
    "RateLimiter",
    "Ticket",
    "is_conversation_id",
    "new_conversation_id",
]
