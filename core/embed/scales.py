"""Cosine similarity → relevance (0..1) per embedding model, so thresholds mean the same for each.

The scale is the model's profile's `relevance_scale` (core/profiles): (cosine − low) / (high − low),
clamped to 0..1 by the caller. Models whose cosines crowd near 1 (e5: an unrelated chunk still scores
≈ 0.78) get a scale that spreads them; the others the identity.
"""

from __future__ import annotations

from core.profiles import profile_for


def relevance_scale(model_id: str) -> tuple[float, float]:
    return profile_for(model_id).relevance_scale


def rescale(cosine: float, scale: tuple[float, float]) -> float:
    """A cosine similarity as relevance on the model's scale (not clamped)."""
    low, high = scale
    return (cosine - low) / (high - low)
