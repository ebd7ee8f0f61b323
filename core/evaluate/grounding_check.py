"""Measuring the grounding check (core/answer/grounding.py) on a labelled set of sentences
(data/demo/eval/grounding.jsonl: answer sentences about the demo posts, each labelled supported or not,
with a kind: close, paraphrase, loose, or an invented number, name, detail or general knowledge).

    items = measure(settings, load_labels())            # the check's signals for every sentence
    scores(items, flags(items, sim, overlap, details))  # precision, recall, F1 of flagging inventions
    sweep(items, details)                               # the thresholds with the best F1

bench/grounding.py prints these; tests/integration/test_grounding.py holds the profile's thresholds to
them. The profile's `grounding` block (core/profiles) is what the check reads.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.answer import grounding
from core.config import Settings
from core.embed import embedder_for_store
from core.ingest import ingest_posts
from core.parse import parse_paths
from core.search.retrieve import to_hit
from core.store import Store

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"
LABELS = DEMO / "eval" / "grounding.jsonl"
POSTS = DEMO / "posts"


@dataclass
class Item:
    id: str
    kind: str
    supported: bool
    similarity: float
    overlap: float
    unknown: list[str]


def load_labels(path: Path = LABELS) -> list[dict]:
    """The labelled sentences, one JSON object a line ({id, sentence, posts, supported, kind})."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def measure(settings: Settings, labels: list[dict]) -> list[Item]:
    """Ingest the posts the labels refer to, then run the check on each labelled sentence."""
    needed = {p for row in labels for p in row["posts"]}
    ingest_posts([p for p in parse_paths([POSTS]).posts if p.post_id in needed], settings)
    store = Store(settings.data_dir)
    embedder = embedder_for_store(settings, store.model_id())
    items = []
    for row in labels:
        hits = [to_hit(c, i + 1) for p in row["posts"] for i, c in enumerate(store.list_chunks(p))]
        if not hits:
            raise SystemExit(f"{row['id']}: no chunks for {row['posts']}")
        result = grounding.check_grounding(row["sentence"], hits, embedder).sentences[0]
        items.append(
            Item(
                row["id"],
                row["kind"],
                row["supported"],
                result.similarity,
                result.overlap,
                result.unknown_details,
            )
        )
    return items


def flags(items: list[Item], sim: float, overlap: float, details: bool) -> np.ndarray:
    """True where the rule marks the sentence unsupported."""
    return np.array(
        [not ((i.similarity >= sim or i.overlap >= overlap) and not (details and i.unknown)) for i in items]
    )


def scores(items: list[Item], flagged: np.ndarray) -> dict[str, float]:
    """Flagging the unsupported sentences: precision, recall, F1, false alarms (supported ones flagged),
    accuracy."""
    truth = np.array([not i.supported for i in items])
    tp = int((flagged & truth).sum())
    precision = tp / max(1, int(flagged.sum()))
    recall = tp / max(1, int(truth.sum()))
    f1 = 2 * precision * recall / max(1e-9, precision + recall)
    false_alarms = int((flagged & ~truth).sum()) / max(1, int((~truth).sum()))
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "false_alarm": false_alarms,
        "accuracy": float((flagged == truth).mean()),
    }


def sweep(items: list[Item], details: bool) -> tuple[float, float, dict[str, float]]:
    """(similarity, overlap, scores) of the grid point with the best F1 (then fewest false alarms)."""
    best: tuple[float, float, dict[str, float]] | None = None
    for sim in np.arange(0.40, 0.951, 0.025):
        for overlap in np.arange(0.30, 1.001, 0.05):
            result = scores(items, flags(items, sim, overlap, details))
            key = (round(result["f1"], 4), round(-result["false_alarm"], 4), sim, overlap)
            if best is None or key > (
                round(best[2]["f1"], 4),
                round(-best[2]["false_alarm"], 4),
                best[0],
                best[1],
            ):
                best = (float(sim), float(overlap), result)
    assert best is not None
    return best


def by_kind(items: list[Item], flagged: np.ndarray) -> str:
    """ "kind right/total, …": how often the flag is right, per kind of sentence."""
    right: dict[str, list[bool]] = defaultdict(list)
    for item, flag in zip(items, flagged, strict=True):
        right[item.kind].append(flag != item.supported)
    return ", ".join(f"{k} {sum(v)}/{len(v)}" for k, v in sorted(right.items()))
