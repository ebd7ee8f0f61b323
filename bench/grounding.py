"""Calibrate the grounding check on a labelled set: `.venv/bin/python bench/grounding.py`.

data/demo/eval/grounding.jsonl holds answer sentences in the author's voice about the demo posts, each
labelled supported or not by the post(s) given as its context: paraphrases at three distances from
the text (close, paraphrase, loose) and four kinds of invention (a wrong number, a wrong name, an
invented detail, general knowledge the posts don't hold). The context is every chunk of those posts,
ingested with the default settings, as the chat would show them to the model.

Prints each signal's best thresholds (F1 of flagging the unsupported sentences), the current rule,
and the rule with and without the unknown-details check, broken down by kind. A small hand-made set
(85 sentences): the figures guide the thresholds, they don't prove them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from core.answer import grounding
from core.config import Settings
from core.embed import embedder_for_store
from core.ingest import ingest_posts
from core.parse import parse_paths
from core.profiles import profile_for
from core.search.retrieve import to_hit
from core.store import Store

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "data" / "demo" / "eval" / "grounding.jsonl"
POSTS = ROOT / "data" / "demo" / "posts"


@dataclass
class Item:
    id: str
    kind: str
    supported: bool
    similarity: float
    overlap: float
    unknown: list[str]


def load_labels(path: Path = LABELS) -> list[dict]:
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
    right: dict[str, list[bool]] = defaultdict(list)
    for item, flag in zip(items, flagged, strict=True):
        right[item.kind].append(flag != item.supported)
    return ", ".join(f"{k} {sum(v)}/{len(v)}" for k, v in sorted(right.items()))


def line(name: str, result: dict[str, float]) -> str:
    return (
        f"{name:<44} P {result['precision']:.2f}  R {result['recall']:.2f}  F1 {result['f1']:.2f}  "
        f"false alarms {result['false_alarm']:.2f}  accuracy {result['accuracy']:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--embed-model", default="", help="embedding model (default: the built-in one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.load({"data_dir": Path(tmp) / "db", "embed_model": args.embed_model}, environ={})
        items = measure(settings, load_labels())
    print(
        f"{len(items)} sentences, {sum(not i.supported for i in items)} unsupported; "
        f"embedder {settings.effective_embed_model}\n"
    )
    for kind in sorted({i.kind for i in items}):
        group = [i for i in items if i.kind == kind]
        print(
            f"  {kind:<18} similarity {np.mean([i.similarity for i in group]):.3f}  "
            f"overlap {np.mean([i.overlap for i in group]):.3f}  "
            f"with unknown details {sum(bool(i.unknown) for i in group)}/{len(group)}"
        )
    print()
    thresholds = profile_for(settings.effective_embed_model).grounding
    current = (thresholds.similarity, thresholds.overlap)
    for details in (False, True):
        label = "+ unknown details" if details else "similarity/overlap only"
        flagged = flags(items, *current, details)
        print(line(f"current {current[0]:.2f}/{current[1]:.2f} {label}", scores(items, flagged)))
        print(f"    right by kind: {by_kind(items, flagged)}")
        sim, overlap, result = sweep(items, details)
        print(line(f"best    {sim:.3f}/{overlap:.2f} {label}", result))
        print(f"    right by kind: {by_kind(items, flags(items, sim, overlap, details))}")
        # Two-fold check of the fitted thresholds: fit on one half, score the other.
        halves = [items[0::2], items[1::2]]
        held_out = []
        for fit, test in (halves, halves[::-1]):
            s, o, _ = sweep(fit, details)
            held_out.append((s, o, scores(test, flags(test, s, o, details))["f1"]))
        print(
            "    two-fold: " + "; ".join(f"fit {s:.3f}/{o:.2f} → held-out F1 {f:.2f}" for s, o, f in held_out)
        )
    print("\nmissed inventions with the current rule:")
    flagged = flags(items, *current, True)
    for item, flag in zip(items, flagged, strict=True):
        if flag == item.supported:
            print(
                f"  {item.id} {item.kind:<17} labelled {'supported' if item.supported else 'unsupported'}: "
                f"similarity {item.similarity:.3f} overlap {item.overlap:.2f} unknown {item.unknown}"
            )


if __name__ == "__main__":
    main()
