"""Embedding model profiles: one record per model (relevance scale, cross-lingual ability, the relevance
bar's thresholds, the extractive scorer's weights and passages, the grounding and topic thresholds) and
the registry that names, loads and finds them. Imports nothing else from core, so every layer (config included) can ask it."""

from __future__ import annotations

from core.profiles.profile import (
    Bar,
    GroundingThresholds,
    ModelProfile,
    Passage,
    ProfileError,
    Scorer,
    load_profile,
    save_profile,
)
from core.profiles.registry import (
    PROFILES_DIR_ENV,
    Entry,
    default_profile,
    entries,
    find_entry,
    profile_for,
)

__all__ = [
    "PROFILES_DIR_ENV",
    "Bar",
    "Entry",
    "GroundingThresholds",
    "ModelProfile",
    "Passage",
    "ProfileError",
    "Scorer",
    "default_profile",
    "entries",
    "find_entry",
    "load_profile",
    "profile_for",
    "save_profile",
]
