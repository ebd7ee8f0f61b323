"""Cosine similarity → relevance (0..1) per embedding model, so thresholds mean the same for each."""

from __future__ import annotations

from core.embed.multilingual import MODEL_ID as MULTILINGUAL_MODEL_ID

# Per-model map of cosine similarity to relevance: (cosine − low) / (high − low), clamped to 0..1 by the
# caller. e5 models were trained with a low softmax temperature, so their cosines crowd into ≈ 0.65–0.95
# and an unrelated chunk still scores ≈ 0.78: without a rescale the threshold (0.25) never cuts and
# score fusion's dense side is nearly flat. The two anchors put e5's median cosine of a demo question
# to an unrelated chunk (0.781) and to its best relevant chunk (0.834) where MiniLM's are (0.094 and
# 0.449), so the threshold keeps its meaning (bench/multilingual.py prints the fit; it also lifted e5
# hybrid's demo nDCG@10 from 0.76 to 0.85 over four languages). Unlisted models: identity.
RELEVANCE_SCALES: dict[str, tuple[float, float]] = {MULTILINGUAL_MODEL_ID: (0.767, 0.917)}


def relevance_scale(model_id: str) -> tuple[float, float]:
    return RELEVANCE_SCALES.get(model_id, (0.0, 1.0))


def rescale(cosine: float, scale: tuple[float, float]) -> float:
    """A cosine similarity as relevance on the model's scale (not clamped)."""
    low, high = scale
    return (cosine - low) / (high - low)
