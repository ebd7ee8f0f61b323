"""How well `find_topics` (core/search/topics.py) groups questions, against a labelled set.

    labelled = load_topic_set(TOPIC_SET)          # [(question, theme), ...]
    score = score_topics(find_topics([q for q, _ in labelled], embedder), labelled)
    score.purity, score.completeness, score.groups

- purity: each group counts its most common theme; the sum over all questions (1.0: no group mixes
  themes; one group per question would score 1.0 too, hence the next two figures);
- completeness: each theme counts the questions in its biggest group; the sum over all questions
  (1.0: every theme in one group);
- groups: how many groups there are (the set's themes: the ideal).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from core.search.topics import Topic, normalised

TOPIC_SET = Path(__file__).resolve().parents[2] / "data" / "eval-topics" / "questions.jsonl"


@dataclass(frozen=True)
class TopicScore:
    purity: float
    completeness: float
    groups: int
    themes: int
    singletons: int  # groups of one question

    def to_json(self) -> dict:
        return {
            "purity": round(self.purity, 3),
            "completeness": round(self.completeness, 3),
            "groups": self.groups,
            "themes": self.themes,
            "singletons": self.singletons,
        }


def load_topic_set(path: Path = TOPIC_SET) -> list[tuple[str, str]]:
    """(question, theme) pairs of a JSON-lines file with `question` and `theme` fields."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(row["question"], row["theme"]) for row in rows]


def score_topics(topics: Sequence[Topic], labelled: Sequence[tuple[str, str]]) -> TopicScore:
    """The grouping's purity, completeness and size against the labels (questions matched by text)."""
    theme_of = {normalised(q): theme for q, theme in labelled}
    group_themes = [Counter(theme_of[normalised(q)] for q in t.questions) for t in topics]
    total = sum(sum(c.values()) for c in group_themes)
    if not total:
        return TopicScore(0.0, 0.0, 0, len(set(theme_of.values())), 0)
    purity = sum(max(c.values()) for c in group_themes if c) / total
    themes = sorted(set(theme_of.values()))
    biggest = {theme: max((c[theme] for c in group_themes), default=0) for theme in themes}
    completeness = sum(biggest.values()) / total
    singletons = sum(1 for t in topics if len(t.questions) == 1)
    return TopicScore(purity, completeness, len(topics), len(themes), singletons)
