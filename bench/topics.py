"""How `inkwell questions --topics` groups readers' questions: purity, completeness and the number of
groups on data/eval-topics/questions.jsonl (68 questions, 7 themes the demo blog does not cover; 47 in
English, 21 in French, German or Spanish, 7 each), per embedding model and merge threshold, on the whole
set and on its English questions alone (core/evaluate/topics.py defines the figures).

Then the Readers page's grouping time at its cap (MAX_QUESTIONS distinct questions, pairs of the set's):
the first grouping in a process (embedding every question) and the next with one question more (the
vectors kept: linkage and naming only; 18 s before the vectors were kept and the linkage went O(n²)).

Run: `.venv/bin/python bench/topics.py [--models all-MiniLM-L6-v2,multilingual-e5-small]` (about a
minute a model on 2 cores). Figures, not asserts; tests/integration/test_questions.py asserts the default's.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.config import Settings
from core.embed import get_embedder
from core.evaluate.topics import TOPIC_SET, score_topics
from core.profiles import profile_for
from core.search.topics import MAX_QUESTIONS, find_topics, question_vectors

GRID = (0.2, 0.25, 0.3, 0.35, 0.4, 0.45)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="all-MiniLM-L6-v2,multilingual-e5-small")
    args = parser.parse_args()
    rows = [json.loads(line) for line in TOPIC_SET.read_text(encoding="utf-8").splitlines() if line.strip()]
    sets = {
        "all": [(r["question"], r["theme"]) for r in rows],
        "english": [(r["question"], r["theme"]) for r in rows if r["language"] == "en"],
    }
    print("model\tset\tthreshold\tpurity\tcompleteness\tgroups\tsingletons")
    for model in args.models.split(","):
        embedder = get_embedder(Settings.load({"embed_model": model}, environ={}))
        default = profile_for(embedder.model_id).topics_merge
        for name, labelled in sets.items():
            for threshold in GRID:
                topics = find_topics([q for q, _ in labelled], embedder, threshold=threshold)
                s = score_topics(topics, labelled)
                mark = " (default)" if threshold == default else ""
                print(
                    f"{model}\t{name}\t{threshold}{mark}\t{s.purity:.3f}\t{s.completeness:.3f}\t"
                    f"{s.groups}\t{s.singletons}"
                )
        for topic in find_topics([q for q, _ in sets["all"]], embedder)[:8]:
            print(f"  {topic.count:>3}  {topic.name}  | {topic.examples[0]}")
        grouping_speed(embedder, [q for q, _ in sets["all"]])


def grouping_speed(embedder, questions: list[str]) -> None:
    """Seconds to group MAX_QUESTIONS distinct questions: first in the process, then with one more."""
    many = [f"{a} {b}" for a in questions for b in questions if a != b][:MAX_QUESTIONS]
    question_vectors.clear()
    started = time.perf_counter()
    find_topics(many, embedder)
    first = time.perf_counter() - started
    started = time.perf_counter()
    find_topics(["Where do swallows nest?", *many], embedder)
    print(f"  grouping {len(many)} questions: {first:.1f} s first, {time.perf_counter() - started:.1f} s "
          "with one question more")  # fmt: skip


if __name__ == "__main__":
    main()
