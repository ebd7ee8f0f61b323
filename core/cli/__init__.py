"""The `inkwell` command line: one module per command group, all registered on `main`."""

from __future__ import annotations

from core.cli import ask, calibrate, changes, evaluate, ingest, library, questions, search, settings, sources  # noqa: F401  (each registers its commands)
from core.cli.main import main

__all__ = ["main"]
