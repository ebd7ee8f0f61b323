"""LanceDB storage: the `chunks` and `posts` tables (tables) and their schemas (schema)."""

from __future__ import annotations

from core.store.schema import KeywordSearchError, ModelMismatchError, StoreError, Versions
from core.store.tables import Store

__all__ = ["KeywordSearchError", "ModelMismatchError", "Store", "StoreError", "Versions"]
