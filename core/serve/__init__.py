"""Serving readers safely: the owner's password gate (wrong passwords throttled server-side, per client
address and overall) and the per-session question rate limit."""

from __future__ import annotations

from core.serve.guard import DEFAULT_QUESTIONS_PER_MINUTE, LoginThrottle, PasswordGate, RateLimiter

__all__ = ["DEFAULT_QUESTIONS_PER_MINUTE", "LoginThrottle", "PasswordGate", "RateLimiter"]
