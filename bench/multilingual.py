"""Multilingual questions offline (issue #5): which option finds the English chunks best?

Prints, in one run, on the demo blog (20 English posts) with its 15 judged questions asked in English
(queries.jsonl: 12 English + one Turkish, German and French), German, French and Turkish
(queries_de/fr/tr.jsonl, same ids, so qrels.tsv applies):

- nDCG@10 and recall@10 per language for (a) MiniLM dense, (b) MiniLM hybrid, (c) e5 dense,
  (d) e5 hybrid, (e) MiniLM hybrid with the question first translated to English by the built-in
  SmolLM2-135M (the offline LLM), and e5 hybrid on raw cosines (no relevance rescale) for comparison;
- the translation's latency per question and how many questions it left unchanged or failed on;
- embedding throughput (chunks/s, measured inside the demo ingest) and query-embedding latency;
- the cosine calibration behind the relevance scales of the model profiles (core/profiles): each model's median cosine of a question
  to its best relevant chunk and to unrelated chunks, and how many chunks the answer rules
  (threshold 0.25, min 20, max 40) keep per question with and without the rescale;
- with --scifact N: English SciFact dense nDCG@10 for both models on a slice (the first N judged
  queries, their relevant abstracts and 4 distractors per query; whole abstracts, as bench/bench.py
  indexes them). e5 embeds far slower than MiniLM on 2 shared cores, so the full 5,183 abstracts
  take hours; `--scifact 300 --distractors 0` gives the full corpus instead of a slice.

Metrics come from core/evaluate/metrics.py's run_eval (as `inkwell eval`: the full ranking, no answer rules).
Figures, not asserts: timings on shared machines are noisy.

    .venv/bin/python bench/multilingual.py [--no-llm] [--scifact 100] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

import core.embed.scales
from core.config import BUILTIN_EMBED_MODEL, MULTILINGUAL_EMBED_MODEL, Settings
from core.embed import Embedder, get_embedder
from core.evaluate import EvalReport, Query, load_qrels, load_queries, percentile, run_eval
from core.ingest import ingest_posts
from core.models import Post
from core.parse import parse_paths
from core.profiles import PROFILES_DIR_ENV, find_entry, profile_for, save_profile
from core.search import search
from core.store import Store
from core.text import detect_language

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"
SCIFACT = ROOT.parent / "shared" / "eval" / "scifact"
LANGS = {"en": "queries.jsonl", "de": "queries_de.jsonl", "fr": "queries_fr.jsonl", "tr": "queries_tr.jsonl"}
MODELS = {"MiniLM": BUILTIN_EMBED_MODEL, "e5": MULTILINGUAL_EMBED_MODEL}


@dataclass
class TimedEmbedder:
    """An embedder that adds up the time spent embedding, for throughput inside a real ingest."""

    inner: Embedder
    embed_seconds: float = 0.0
    embedded: int = 0
    query_ms: list[float] = field(default_factory=list)

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        started = time.perf_counter()
        vectors = self.inner.embed(texts)
        self.embed_seconds += time.perf_counter() - started
        self.embedded += len(texts)
        return vectors

    def query(self, texts: Sequence[str]) -> np.ndarray:
        started = time.perf_counter()
        vectors = self.inner.query(texts)
        self.query_ms.append((time.perf_counter() - started) * 1000)
        return vectors


@dataclass
class Table:
    name: str
    settings: Settings
    store: Store
    embedder: TimedEmbedder
    ingest_seconds: float = 0.0


def build(name: str, model: str, posts: list[Post], data_dir: Path, **overrides: object) -> Table:
    settings = Settings.load({"data_dir": data_dir, "embed_model": model, **overrides}, environ={})
    embedder = TimedEmbedder(get_embedder(settings))
    embedder.embed(["warm-up"])  # the model load is not throughput
    embedder.embed_seconds, embedder.embedded = 0.0, 0
    store = Store(settings.data_dir)
    report = ingest_posts(posts, settings, store=store, embedder=embedder)
    print(f"  {name}: {report.summary()}", flush=True)
    return Table(name, settings, store, embedder, report.seconds)


def evaluate(
    table: Table,
    queries: list[Query],
    qrels: dict[str, dict[str, int]],
    mode: str,
    name: str,
    rewrite: Callable[[str], str] | None = None,
) -> EvalReport:
    """As `inkwell eval`: the full top_k ranking, no answer-context rules."""
    settings = table.settings.replace(
        threshold=0.0, min_chunks=0, max_chunks=table.settings.top_k, retrieval_mode=mode
    )

    def retrieve(text: str) -> list[tuple[str, str]]:
        asked = rewrite(text) if rewrite else text
        result = search(asked, settings, store=table.store, embedder=table.embedder)
        return [(h.post_id, h.text) for h in result.hits]

    return run_eval(queries, qrels, retrieve, k=10, name=name)


def translations(questions: list[Query], settings: Settings) -> tuple[dict[str, str], list[float], int, int]:
    """Each question in English by the built-in SmolLM2 (as answer.py's translation does), its latency,
    how many were left as they were (already English) and how many failed (then used as asked)."""
    from core.answer import translate_to_english
    from core.llm import LLMError

    out: dict[str, str] = {}
    latencies: list[float] = []
    unchanged = failed = 0
    for q in questions:
        started = time.perf_counter()
        try:
            english = translate_to_english(q.text, settings)
        except LLMError as exc:
            print(f"  translation failed for {q.id}: {exc}", file=sys.stderr)
            english, failed = q.text, failed + 1
        if english == q.text:
            unchanged += 1
        else:
            latencies.append((time.perf_counter() - started) * 1000)
        out[q.text] = english
    return out, latencies, unchanged, failed


def cosine_stats(table: Table, queries: list[Query], qrels: dict[str, dict[str, int]]) -> tuple[float, float]:
    """Median cosine of a question to its best relevant chunk, and to chunks of unrelated posts."""
    rows = table.store.list_chunks(columns=["post_id", "vector"])
    matrix = np.asarray([r["vector"] for r in rows], dtype=np.float32)
    posts = [r["post_id"] for r in rows]
    best, unrelated = [], []
    for q in queries:
        relevant = {d for d, g in qrels.get(q.id, {}).items() if g > 0}
        if not relevant:
            continue
        cos = matrix @ table.embedder.inner.query([q.text])[0]
        best.append(max(c for c, p in zip(cos, posts, strict=True) if p in relevant))
        unrelated.extend(c for c, p in zip(cos, posts, strict=True) if p not in relevant)
    return float(np.median(best)), float(np.median(unrelated))


def kept_per_question(table: Table, queries: list[Query], mode: str) -> float:
    """Mean number of chunks the answer rules keep (threshold, min_chunks, max_chunks as configured)."""
    settings = table.settings.replace(retrieval_mode=mode)
    kept = [len(search(q.text, settings, store=table.store, embedder=table.embedder).hits) for q in queries]
    return float(np.mean(kept))


def scifact_slice(n_queries: int, distractors: int) -> tuple[list[Post], list[Query], dict]:
    queries = load_queries(SCIFACT / "queries.jsonl")
    qrels = load_qrels(SCIFACT / "qrels.tsv")
    chosen = [q for q in queries if q.id in qrels][:n_queries]
    posts = parse_paths([SCIFACT / "corpus.jsonl"], collection="scifact").posts
    relevant = {d for q in chosen for d in qrels[q.id]}
    if distractors == 0 and n_queries >= len(chosen):
        return posts, chosen, qrels
    others = [p for p in posts if p.post_id not in relevant]
    want = distractors * len(chosen)
    step = max(1, len(others) // max(1, want))
    picked = [p for p in posts if p.post_id in relevant] + others[::step][:want]
    return picked, chosen, qrels


def raw_scale(folder: Path, model_id: str) -> None:
    """Until INKWELL_PROFILES_DIR is unset: the model's own profile with the identity relevance scale."""
    profile, entry = profile_for(model_id), find_entry(model_id)
    save_profile(profile.replace(relevance_scale=(0.0, 1.0)), folder / "raw.json")
    item = {"model_id": model_id, "names": list(entry.names), "backend": entry.backend, "profile": "raw.json"}
    (folder / "registry.json").write_text(json.dumps({"models": [item]}))
    os.environ[PROFILES_DIR_ENV] = str(folder)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--no-llm", action="store_true", help="skip (e), the SmolLM2 translation")
    parser.add_argument("--scifact", type=int, default=0, help="SciFact: this many judged queries (0 = skip)")
    parser.add_argument("--distractors", type=int, default=4, help="SciFact: unjudged abstracts per query")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()

    figures: dict[str, float] = {}
    qrels = load_qrels(DEMO / "eval" / "qrels.tsv")
    sets = {lang: load_queries(DEMO / "eval" / name) for lang, name in LANGS.items()}
    posts = parse_paths([DEMO / "posts"]).posts
    print(f"Demo: {len(posts)} posts; {os.cpu_count()} cores (shared: timings are noisy)", flush=True)
    with tempfile.TemporaryDirectory(prefix="inkwell-multilingual-") as tmp:
        tables = {name: build(name, model, posts, Path(tmp) / name) for name, model in MODELS.items()}
        for table in tables.values():
            e = table.embedder
            figures[f"{table.name}_chunks_per_s"] = e.embedded / e.embed_seconds

        rows: dict[str, dict[str, EvalReport]] = {}
        configs = [
            ("(a) MiniLM dense", "MiniLM", "dense"),
            ("(b) MiniLM hybrid", "MiniLM", "hybrid"),
            ("(c) e5 dense", "e5", "dense"),
            ("(d) e5 hybrid", "e5", "hybrid"),
        ]
        for label, model, mode in configs:
            tables[model].embedder.query_ms.clear()
            rows[label] = {
                lang: evaluate(tables[model], queries, qrels, mode, f"{label} {lang}")
                for lang, queries in sets.items()
            }
            if mode == "dense":
                figures[f"{model}_query_embed_p50_ms"] = percentile(tables[model].embedder.query_ms, 50)
                figures[f"{model}_dense_search_p50_ms"] = float(
                    np.median([r.means["latency_p50_ms"] for r in rows[label].values()])
                )

        # Both columns, the question's language picking one: MiniLM for English, e5 for the others.
        def by_language(lang: str, queries: list[Query]) -> EvalReport:
            english = [q for q in queries if detect_language(q.text) == "en"]
            other = [q for q in queries if detect_language(q.text) != "en"]
            parts = [
                evaluate(tables[model], part, qrels, "hybrid", f"(f) {lang}")
                for model, part in (("MiniLM", english), ("e5", other))
                if part
            ]
            per_query = [r for part in parts for r in part.per_query]
            merged = parts[0]
            merged.per_query = per_query
            merged.means = {
                key: float(np.mean([r.metrics[key] for r in per_query])) for key in ("ndcg@10", "recall@10")
            }
            return merged

        rows["(f) by language: MiniLM en, e5 others"] = {
            lang: by_language(lang, queries) for lang, queries in sets.items()
        }

        # The same e5 hybrid on raw cosines: what the relevance rescale changes in the fused ranking.
        raw_scale(Path(tmp) / "raw-profiles", tables["e5"].embedder.model_id)
        rows["e5 hybrid, raw cosine"] = {
            lang: evaluate(tables["e5"], queries, qrels, "hybrid", f"raw {lang}")
            for lang, queries in sets.items()
        }
        kept_raw = {mode: kept_per_question(tables["e5"], sets["en"], mode) for mode in ("dense", "hybrid")}
        os.environ.pop(PROFILES_DIR_ENV)

        llm_note = "skipped (--no-llm)"
        if not args.no_llm:
            llm_settings = Settings.load({"data_dir": Path(tmp) / "MiniLM"}, environ={})
            all_questions = [q for queries in sets.values() for q in queries]
            started = time.perf_counter()
            english, latencies, unchanged, failed = translations(all_questions, llm_settings)
            total_s = time.perf_counter() - started
            rows["(e) SmolLM2→en + MiniLM hybrid"] = {
                lang: evaluate(tables["MiniLM"], queries, qrels, "hybrid", f"(e) {lang}", english.get)
                for lang, queries in sets.items()
            }
            p50 = percentile(latencies, 50) if latencies else 0.0
            figures.update(translate_p50_ms=p50, translate_total_s=total_s, translate_failed=failed)
            llm_note = (
                f"{len(all_questions)} questions, {unchanged} left as asked (already English), {failed} failed; "
                f"translation p50 {p50:.0f} ms, p95 {percentile(latencies, 95) if latencies else 0:.0f} ms per "
                f"question; {total_s:.0f} s in all (including the server start)"
            )
            samples = [q for q in sets["de"][:3]] + [sets["tr"][0]]
            for q in samples:
                print(f"  SmolLM2: {q.text!r} → {english[q.text]!r}")

        print()
        print("Demo retrieval, nDCG@10 / recall@10 (15 judged questions per language)")
        header = f"{'config':<32}" + "".join(f"{lang:>15}" for lang in LANGS) + f"{'mean':>15}"
        print(header)
        for label, by_lang in rows.items():
            cells, ndcgs, recalls = [], [], []
            for lang in LANGS:
                m = by_lang[lang].means
                cells.append(f"{m['ndcg@10']:8.3f} / {m['recall@10']:.2f}")
                ndcgs.append(m["ndcg@10"])
                recalls.append(m["recall@10"])
                key = label.split(")")[0].strip("(") if label.startswith("(") else "e5_raw"
                figures[f"{key}_{lang}_ndcg10"] = m["ndcg@10"]
                figures[f"{key}_{lang}_recall10"] = m["recall@10"]
            print(
                f"{label:<32}"
                + "".join(f"{c:>15}" for c in cells)
                + f"{np.mean(ndcgs):8.3f} / {np.mean(recalls):.2f}"
            )
        # queries.jsonl holds 12 English questions and one each in Turkish, German and French.
        english_ids = {q.id for q in sets["en"] if detect_language(q.text) == "en"}
        print(f"{'English questions only':<32}" + f"({len(english_ids)} of queries.jsonl), nDCG@10:", end="")
        for label, by_lang in rows.items():
            ndcg = np.mean(
                [r.metrics["ndcg@10"] for r in by_lang["en"].per_query if r.query_id in english_ids]
            )
            figures[f"{label}_en_only_ndcg10"] = float(ndcg)
            print(f"  {label.split(')')[0] + ')' if label.startswith('(') else 'raw'} {ndcg:.3f}", end="")
        print()
        e5_rows = rows["(d) e5 hybrid"]
        english = e5_rows["en"].means["ndcg@10"]
        for lang in ("de", "fr", "tr"):
            ratio = e5_rows[lang].means["ndcg@10"] / english
            figures[f"e5_hybrid_{lang}_vs_en"] = ratio
            print(f"  e5 hybrid {lang} / en nDCG@10: {ratio:.2f} (target ≥ 0.90)")
        ingest_ratio = tables["e5"].ingest_seconds / tables["MiniLM"].ingest_seconds
        figures["reader_languages_ingest_ratio"] = ingest_ratio
        print(
            f"  ingest with reader_languages (e5 table) / MiniLM alone: {ingest_ratio:.2f}× "
            f"({tables['e5'].ingest_seconds:.1f} s vs {tables['MiniLM'].ingest_seconds:.1f} s; target ≤ 2.5)"
        )
        print()
        print(f"(e) translation by the built-in SmolLM2-135M: {llm_note}")
        for name, table in tables.items():
            print(
                f"{name:<7} {table.embedder.inner.model_id}: embedding {figures[f'{name}_chunks_per_s']:.1f} chunks/s "
                f"(demo ingest); query embedding p50 {figures[f'{name}_query_embed_p50_ms']:.1f} ms; "
                f"dense search p50 {figures[f'{name}_dense_search_p50_ms']:.1f} ms (embedding included)"
            )

        print()
        print(
            "Cosine calibration (English questions): median cosine to the best relevant chunk / to unrelated chunks"
        )
        for name, table in tables.items():
            best, unrelated = cosine_stats(table, sets["en"], qrels)
            figures[f"{name}_cos_best"], figures[f"{name}_cos_unrelated"] = best, unrelated
            scale = core.embed.scales.relevance_scale(table.embedder.model_id)
            print(f"  {name:<7} {best:.3f} / {unrelated:.3f}   relevance scale (low, high) = {scale}")
        mini_best, mini_un = figures["MiniLM_cos_best"], figures["MiniLM_cos_unrelated"]
        e5_best, e5_un = figures["e5_cos_best"], figures["e5_cos_unrelated"]
        slope = (e5_best - e5_un) / (mini_best - mini_un)
        low = e5_un - mini_un * slope
        print(
            f"  → e5 scale fitted on this run: ({low:.3f}, {low + slope:.3f}) maps e5's anchors onto MiniLM's"
        )
        print(
            "Chunks kept per English question by the answer rules (threshold 0.25, min 20, max 40; 121 chunks):"
        )
        for name, table in tables.items():
            kept = {mode: kept_per_question(table, sets["en"], mode) for mode in ("dense", "hybrid")}
            print(f"  {name:<7} dense {kept['dense']:.1f}  hybrid {kept['hybrid']:.1f}")
        print(f"  e5 raw  dense {kept_raw['dense']:.1f}  hybrid {kept_raw['hybrid']:.1f}   (no rescale)")

        if args.scifact:
            run_scifact(args.scifact, args.distractors, Path(tmp), figures)

    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


def run_scifact(n_queries: int, distractors: int, tmp: Path, figures: dict[str, float]) -> None:
    if not (SCIFACT / "corpus.jsonl").exists():
        print(f"\nSciFact not found at {SCIFACT}: skipped")
        return
    posts, queries, qrels = scifact_slice(n_queries, distractors)
    print(
        f"\nSciFact (English), dense: {len(queries)} judged queries over {len(posts)} whole abstracts",
        flush=True,
    )
    for name, model in MODELS.items():
        table = build(f"SciFact {name}", model, posts, tmp / f"scifact-{name}", chunk_tokens=2000)
        report = evaluate(table, queries, qrels, "dense", name)
        m = report.means
        rate = table.embedder.embedded / table.embedder.embed_seconds
        figures.update({f"scifact_{name}_ndcg10": m["ndcg@10"], f"scifact_{name}_chunks_per_s": rate})
        print(
            f"  {name:<7} nDCG@10 {m['ndcg@10']:.3f}  recall@10 {m['recall@10']:.3f}  "
            f"embedding {rate:.2f} abstracts/s  search p50 {m['latency_p50_ms']:.0f} ms",
            flush=True,
        )


if __name__ == "__main__":
    main()
