"""Generative answers with the built-in model on the demo questions: what the model wrote against what
the reader sees. `.venv/bin/python bench/generative.py` (about 30 s per question on 2 cores).

For each of the 15 demo questions (data/demo/eval/queries.jsonl): the default retrieval on the demo blog,
then one answer from the answer model (built-in SmolLM2-135M unless OPENAI_* says otherwise) through
core/answer (AnswerStream, grounding "check"), and the same reply replayed through strict grounding
(core/answer/release.py with a StrictJudge: the same text, judged sentence by sentence). Reported:

- prompt markup in the model's text (`stream.leaks`) and any left in the reader's text (a plain search
  for the tags, labels and scores; should be 0);
- replies stopped by the token limit, and the unfinished sentence left out of each;
- the check: judged sentences and how many the excerpts support; strict: sentences dropped and answers
  left with nothing to show.

Figures, not asserts: a small sampled model (temperature 0.4), so they move from run to run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.answer import GroundingChecker, Release, StrictJudge, answer
from core.answer.generate import post_labels
from core.config import Settings
from core.embed import embedder_for_store
from core.ingest import ingest_paths
from core.search import search
from core.store import Store

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"
# Markup a reader should never see (what core/answer/leaks.py removes, searched for plainly).
MARKUP = re.compile(
    r"</?\s*excerpt|relevance\s*[=:]|^\s*excerpt\s*\d|^\s*post\s*:|excerpts from my writings", re.I | re.M
)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--limit", type=int, default=0, help="only the first N questions")
    parser.add_argument("--show", action="store_true", help="print each answer as the model wrote it")
    args = parser.parse_args()
    queries = [
        json.loads(line) for line in (DEMO / "eval" / "queries.jsonl").read_text().splitlines() if line
    ]
    queries = queries[: args.limit] if args.limit else queries
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.load({"data_dir": Path(tmp) / "db"}, environ=dict(os.environ))
        settings = settings.replace(data_dir=Path(tmp) / "db", grounding="check")
        ingest_paths([DEMO / "posts"], settings)
        store = Store(settings.data_dir)
        embedder = embedder_for_store(settings, store.model_id())
        totals = dict.fromkeys(
            ["leaky", "leaks", "shown_markup", "cut", "judged", "supported", "dropped", "empty", "sentences"],
            0,
        )
        started = time.perf_counter()
        for query in queries:
            hits = search(query["text"], settings, store=store, embedder=embedder).hits
            stream = answer(query["text"], hits, settings, embedder=embedder)
            shown = "".join(stream)
            strict = Release(
                post_labels(stream.used_hits), StrictJudge(GroundingChecker(stream.used_hits, embedder))
            )
            strict.feed(stream.raw_text)
            strict.finish(stream.truncated)
            grounding = stream.grounding
            judged = grounding.judged if grounding else []
            row = {
                "leaks": len(stream.leaks),
                "shown_markup": len(MARKUP.findall(shown)) + len(MARKUP.findall(strict.text)),
                "cut": bool(stream.truncated),
                "judged": len(judged),
                "supported": sum(s.supported for s in judged),
                "dropped": len(strict.dropped),
                "sentences": len(strict.verdicts),
                "empty": not strict.text.strip(),
            }
            totals["leaky"] += bool(row["leaks"])
            for key in (
                "leaks",
                "shown_markup",
                "cut",
                "judged",
                "supported",
                "dropped",
                "sentences",
                "empty",
            ):
                totals[key] += int(row[key])
            print(
                f"{query['id']:<4} markup cut out {row['leaks']}, left {row['shown_markup']}; "
                f"{'cut at the token limit' if row['cut'] else 'finished'}"
                f"{f' (left out: {stream.cut[:40]!r}…)' if stream.cut else ''}; "
                f"supported {row['supported']}/{row['judged']}; strict drops {row['dropped']}/{row['sentences']}"
                f"{' → nothing to show' if row['empty'] else ''}",
                flush=True,
            )
            if args.show:
                print("    model:", json.dumps(stream.raw_text))
                print("    strict:", json.dumps(strict.text))
                for removed in stream.leaks:
                    print("    removed:", json.dumps(removed))
    n = len(queries)
    print(
        f"\n{n} answers by {stream.model_label} in {time.perf_counter() - started:.0f} s\n"
        f"  with prompt markup: {totals['leaky']} ({totals['leaks']} pieces cut out); "
        f"markup left for the reader: {totals['shown_markup']}\n"
        f"  stopped by the token limit: {totals['cut']} (each ends at its last complete sentence)\n"
        f"  check mode: {totals['supported']} of {totals['judged']} judged sentences supported\n"
        f"  strict mode: {totals['dropped']} of {totals['sentences']} sentences dropped; "
        f"{totals['empty']} answers left with nothing to show"
    )


if __name__ == "__main__":
    main()
