"""Posts from the web: feeds (core/parse/feeds.py, which also reads a feed saved as a file), sitemaps
(sitemaps), pages (pages) fetched politely on one host (fetch) with XML parsed safely
(core/parse/safexml.py), a source read whole (read), and remembered sources kept in sync (sync); local
folders and export files are remembered and synced the same way (local)."""

from __future__ import annotations

from core.ingest.web.fetch import Fetcher, FetchError, check_url
from core.ingest.web.sync import SourceOutcome, SyncReport, ingest_path, ingest_url, sync_sources

__all__ = [
    "FetchError",
    "Fetcher",
    "SourceOutcome",
    "SyncReport",
    "check_url",
    "ingest_path",
    "ingest_url",
    "sync_sources",
]
