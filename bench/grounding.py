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
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from core.config import Settings
from core.evaluate.grounding_check import by_kind, flags, load_labels, measure, scores, sweep
from core.profiles import profile_for


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
