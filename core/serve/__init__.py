"""Serving readers safely: the owner's password gate and the per-session question rate limit."""

from __future__ import annotations

from core.serve.guard import DEFAULT_QUESTIONS_PER_MINUTE, PasswordGate, RateLimiter

__all__ = ["DEFAULT_QUESTIONS_PER_MINUTE", "PasswordGate", "RateLimiter"]
