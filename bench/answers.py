"""Extractive answers and the no-answer gate on the demo blog: `.venv/bin/python bench/answers.py`.

Ingests data/demo/posts into a temporary table per embedder (MiniLM, multilingual-e5-small), asks
every question of data/demo/eval (the 15 demo questions, their German, French and Turkish
translations, and the 40 off-topic questions of offtopic.jsonl) in each retrieval mode, answers
with core/answer/extractive.py and gates with core/answer/abstain.py, and prints:

- evidence in answer: the answer's text contains one of the question's evidence quotes (matched as
  core.evaluate.evidence_found does: case and spacing ignored); also "retrievable", the share whose
  quote was in the hits the answerer reads, which bounds it;
- invented words: the share of the answer's content words found in no hit given to it (title
  included); 0 by construction, measured here rather than assumed;
- token F1 against the reference "answer" of queries.jsonl (SQuAD's normalisation);
- no-answer rate on topic (per question set) and off topic (per kind), with the shipped thresholds;
- time per answer (extract_answer + judge, after retrieval), p50 and p95.

No figure is asserted: it prints, for docs/answers.md. The relevance bar's thresholds are chosen by
`inkwell calibrate` (core/evaluate/calibrate.py), not here.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from core.answer.abstain import Signals, judge, signals
from core.answer.extractive import MAX_HITS, ExtractiveAnswer, extract_answer
from core.config import BUILTIN_EMBED_MODEL, MULTILINGUAL_EMBED_MODEL, Settings
from core.embed import get_embedder
from core.evaluate import evidence_found, percentile
from core.evaluate.answers import invented_share, token_f1
from core.ingest import ingest_posts
from core.models import Hit
from core.parse import parse_paths
from core.profiles import entries, profile_for
from core.search import bar_for_table, search
from core.store import Store

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"
EVAL = DEMO / "eval"
MODELS = {"MiniLM": BUILTIN_EMBED_MODEL, "e5": MULTILINGUAL_EMBED_MODEL}
MODES = ("hybrid", "dense", "fts")
ON_TOPIC = {
    "en": "queries.jsonl",
    "de": "queries_de.jsonl",
    "fr": "queries_fr.jsonl",
    "tr": "queries_tr.jsonl",
    # 20 English questions with evidence, written by someone who had read neither the code nor the
    # demo set, after the thresholds were chosen: never used to calibrate.
    "new": "heldout.jsonl",
}
KINDS = ("general", "other_author", "nonsense", "near_miss")


@dataclass
class Row:
    model: str
    mode: str
    set: str  # en, de, fr, tr or off
    id: str
    kind: str  # "on" or the off-topic kind
    text: str
    evidence: tuple[str, ...]
    reference: str
    answer: ExtractiveAnswer
    hits: list[Hit]
    signals: Signals
    answered: bool
    seconds: float  # extract_answer + judge, wall clock
    cpu_seconds: float  # the same, CPU time of the process (all threads): steadier on a shared machine

    @property
    def on_topic(self) -> bool:
        return self.kind == "on"


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def questions() -> list[tuple[str, dict]]:
    out = [(name, q) for name, file in ON_TOPIC.items() for q in load(EVAL / file)]
    return out + [("held", q) for q in held_out()] + [("off", q) for q in load(EVAL / "offtopic.jsonl")]


def held_out() -> list[dict]:
    """On-topic questions written apart from the demo set and never used for calibration: the
    standalone questions of followups.jsonl (every "previous", and the followups that do not refer
    back), without those that repeat a demo question word for word."""
    demo = {q["text"] for q in load(EVAL / "queries.jsonl")}
    texts: dict[str, str] = {}
    for pair in load(EVAL / "followups.jsonl"):
        texts.setdefault(pair["previous"], f"{pair['id']}p")
        if not pair["refers"]:
            texts.setdefault(pair["followup"], f"{pair['id']}f")
    return [{"id": i, "text": t} for t, i in texts.items() if t not in demo]


def run(model: str, modes: list[str], tmp: Path) -> list[Row]:
    settings = Settings.load({"data_dir": tmp / model, "embed_model": MODELS[model]}, environ={})
    embedder = get_embedder(settings)
    store = Store(settings.data_dir)
    report = ingest_posts(parse_paths([DEMO / "posts"]).posts, settings, store=store, embedder=embedder)
    print(f"{model}: {report.summary()}", flush=True)
    english = {q["id"]: q for q in load(EVAL / "queries.jsonl")}
    bar = bar_for_table(store, embedder)  # the profile's bar on this table's floor, as readers get it
    rows = []
    for mode in modes:
        for name, q in questions():
            try:
                hits = search(q["text"], settings, store=store, embedder=embedder, mode=mode).hits
            except ValueError:  # a question search refuses (empty after stripping)
                hits = []
            started, cpu = time.perf_counter(), time.process_time()
            answer = extract_answer(q["text"], hits, embedder)
            verdict = judge(q["text"], hits, answer, bar, embedder=embedder)
            seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
            evidence = q.get("evidence") or ()
            rows.append(
                Row(
                    model,
                    mode,
                    name,
                    q["id"],
                    q.get("kind", "on"),
                    q["text"],
                    (evidence,) if isinstance(evidence, str) else tuple(evidence),
                    english.get(q["id"], {}).get("answer", "") if name != "off" else "",
                    answer,
                    hits,
                    signals(q["text"], hits, answer, embedder),
                    verdict.answer,
                    seconds,
                    cpu,
                )
            )
        print(f"  {model} {mode}: {sum(r.mode == mode for r in rows)} questions", flush=True)
    return rows


# Figures ----------------------------------------------------------------------------------------------


def body(answer: ExtractiveAnswer) -> str:
    return " ".join(q.text for q in answer.sentences)


def rate(values: list[bool]) -> str:
    return f"{sum(values)}/{len(values)} = {sum(values) / len(values):.2f}" if values else "–"


def report(rows: list[Row]) -> None:
    for (model, mode), group in itertools.groupby(rows, key=lambda r: (r.model, r.mode)):
        group = list(group)
        print(f"\n== {model}, {mode}")
        held = [r for r in group if r.set == "held"]
        refused = " ".join(
            f"{r.id}({r.signals.similarity:.2f}, missing {r.signals.missing})" for r in held if not r.answered
        )
        print(
            f"  held-out on topic ({len(held)} questions): no answer {rate([not r.answered for r in held])}: {refused}"
        )
        for name in ON_TOPIC:
            on = [r for r in group if r.set == name]
            evidence = [bool(evidence_found([r.answer.text], r.evidence, 1)) for r in on]
            retrievable = [
                bool(evidence_found([h.text for h in r.hits[:MAX_HITS]], r.evidence, MAX_HITS)) for r in on
            ]
            delivered = [e and r.answered for e, r in zip(evidence, on, strict=True)]
            line = (
                f"  {name}: evidence in answer {rate(evidence)} (retrievable {rate(retrievable)}; "
                f"answered and with evidence {rate(delivered)}); no answer {rate([not r.answered for r in on])}"
            )
            if name in ("en", "new"):
                f1 = [token_f1(body(r.answer), r.reference) for r in on if r.reference]
                line += f"; token F1 {np.mean(f1):.3f}" if f1 else ""
                missed = [r.id for r in on if not r.answered]
                line += f"; not answered: {' '.join(missed) or 'none'}"
            print(line)
        off = [r for r in group if not r.on_topic]
        per_kind = "  ".join(f"{k} {rate([not r.answered for r in off if r.kind == k])}" for k in KINDS)
        print(f"  off topic: no answer {rate([not r.answered for r in off])}  ({per_kind})")
        passed = [f"{r.id}({r.signals.similarity:.2f})" for r in off if r.answered]
        print(f"    answered: {' '.join(passed) or 'none'}")
        # core/evaluate's measure, over the answer with its frame and every hit's title and text
        invented = [
            invented_share(r.answer.text, [f"{h.title} {h.text}" for h in r.hits]) or 0.0
            for r in group
            if not r.answer.empty
        ]
        words = [r.answer.words for r in group if r.on_topic and not r.answer.empty]
        seconds = [r.seconds * 1000 for r in group]
        cpu = [r.cpu_seconds * 1000 for r in group]
        print(
            f"  invented content words: max {max(invented):.3f}, mean {np.mean(invented):.3f} over "
            f"{len(invented)} answers; words per answer p50 {percentile(words, 50):.0f}, max {max(words)}; "
            f"time per answer p50 {percentile(seconds, 50):.0f} ms, p95 {percentile(seconds, 95):.0f} ms "
            f"(CPU time p50 {percentile(cpu, 50):.0f} ms, p95 {percentile(cpu, 95):.0f} ms)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated: MiniLM,e5")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated: hybrid,dense,fts")
    args = parser.parse_args()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models.split(","):
            rows += run(model, args.modes.split(","), Path(tmp))
    report(rows)
    shipped = {e.model_id: profile_for(e.model_id).bar for e in entries() if e.backend != "openai"}
    print(f"\nshipped thresholds (model profiles): {shipped}; to choose them: inkwell calibrate")


if __name__ == "__main__":
    main()
