"""Answer quality, per answer mode side by side: what a reader would be told, not just what was found.

Per on-topic query (with a reference `answer` and `evidence` quotes) and per off-topic query (which
the blog does not answer), the question goes through retrieval and `core.answer.reply` exactly as in
the chat, and the reply is scored:

- token F1 against the reference answer (SQuAD's: lower case, punctuation and English articles
  dropped, bag of words); an extractive answer is scored on its quoted sentences, not its frame;
- evidence in answer: the answer contains one of the evidence quotes (ignoring case and spacing);
- invented words: the share of the answer's content words found in none of the excerpts it was made
  from (titles and sections count as excerpt text). 0 by construction for extractive answers;
- grounding: the share of the answer's sentences the grounding check supports (core/answer/grounding.py);
- no answer: how often the reply was "I haven't written about that", or a generated answer of which
  grounding left nothing to show ("I can't answer that from my posts without guessing") (wanted:
  rarely on topic, almost always off topic);
- seconds per answer, after retrieval (generation included).
"""

from __future__ import annotations

import re
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.answer import check_grounding, search_turn
from core.config import Settings
from core.embed import Embedder
from core.evaluate.baseline import naive_answer
from core.evaluate.metrics import Query, evidence_found, percentile
from core.store import Store
from core.text.words import content_forms

_ARTICLES = re.compile(r"\b(?:a|an|the)\b")

Progress = Callable[[int, int, str], None]
# The answer mode of the naive baseline (core/evaluate/baseline.py): judged by the same relevance bar as
# the extractive answer, so only the sentences chosen differ.
NAIVE = "naive"


def answer_tokens(text: str) -> list[str]:
    """The words SQuAD's answer F1 compares (its `normalize_answer`, for any script): NFKC, case-folded,
    punctuation and symbols removed (joining what they split: "well-known" → "wellknown", "3.5" → "35"),
    the English articles dropped, split on whitespace."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    kept = "".join(ch for ch in folded if not unicodedata.category(ch).startswith(("P", "S")))
    return _ARTICLES.sub(" ", kept).split()


def token_f1(prediction: str, reference: str) -> float:
    """SQuAD's answer token F1: the harmonic mean of precision and recall of the `answer_tokens` bags;
    0.0 when either is empty."""
    predicted, wanted = answer_tokens(prediction), answer_tokens(reference)
    common = sum((Counter(predicted) & Counter(wanted)).values())
    if not common:
        return 0.0
    precision, recall = common / len(predicted), common / len(wanted)
    return 2 * precision * recall / (precision + recall)


def invented_share(answer: str, excerpts: Sequence[str]) -> float | None:
    """Share of the answer's content words that occur in none of the excerpts; None without content words."""
    words = content_forms(answer)
    if not words:
        return None
    known: set[str] = set()
    for text in excerpts:
        known |= content_forms(text)
    return len(words - known) / len(words)


@dataclass
class AnswerRow:
    """One question's reply and its scores (None where a score does not apply)."""

    query_id: str
    question: str
    on_topic: bool
    kind: str
    mode: str  # the mode asked for
    replied: str  # the mode that answered: extractive | generative | none
    answer: str
    f1: float | None = None
    evidence: bool | None = None
    invented: float | None = None
    grounded: float | None = None
    seconds: float = 0.0
    sources: list[str] = field(default_factory=list)
    declined: bool = False  # generated, but grounding left nothing to show: a fixed message instead

    @property
    def no_answer(self) -> bool:
        """The reader got no answer: "haven't written about that", or a generated one declined."""
        return self.replied == "none" or self.declined

    def to_json(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["no_answer"] = self.no_answer
        return data


@dataclass
class AnswerReport:
    mode: str
    rows: list[AnswerRow]

    def summary(self) -> dict[str, Any]:
        on = [r for r in self.rows if r.on_topic]
        off = [r for r in self.rows if not r.on_topic]
        answered = [r for r in on if not r.no_answer]

        def mean(values: Sequence[float | bool | None]) -> float | None:
            present = [float(v) for v in values if v is not None]
            return sum(present) / len(present) if present else None

        seconds = [r.seconds for r in self.rows]
        return {
            "mode": self.mode,
            "on_topic": len(on),
            "off_topic": len(off),
            # Over every on-topic question with a reference (score_reply scores a "haven't written about
            # that" 0 F1 and no evidence); None when no question has one, rather than a made-up 0.
            "token_f1": mean([r.f1 for r in on]),
            "evidence_in_answer": mean([r.evidence for r in on]),
            "invented_words": mean([r.invented for r in answered]),
            "grounded": mean([r.grounded for r in answered]),
            "no_answer_on_topic": mean([r.no_answer for r in on]),
            "no_answer_off_topic": mean([r.no_answer for r in off]),
            "seconds_p50": percentile(seconds, 50) if seconds else None,
            "seconds_p95": percentile(seconds, 95) if seconds else None,
        }


def score_reply(query: Query, on_topic: bool, mode: str, result: Any, embedder: Embedder) -> AnswerRow:
    """Scores of one consumed `core.answer.Reply`."""
    quoted = " ".join(q.text for q in result.quotes) if result.mode == "extractive" else result.text
    row = AnswerRow(
        query.id, query.text, on_topic, query.kind, mode, result.mode, result.text,
        seconds=result.seconds, sources=[s.post_id for s in result.sources], declined=result.declined,
    )  # fmt: skip
    if on_topic and query.answer:
        row.f1 = token_f1(quoted, query.answer) if not row.no_answer else 0.0
    if on_topic and query.evidence:
        row.evidence = bool(evidence_found([quoted], query.evidence, 1)) if not row.no_answer else False
    if not row.no_answer:
        used = result.used_hits
        row.invented = invented_share(quoted, [f"{h.title} {h.section} {h.text}" for h in used])
        row.grounded = check_grounding(quoted, used, embedder).supported_fraction
    return row


def run_answer_eval(
    queries: Sequence[Query],
    off_topic: Sequence[Query],
    settings: Settings,
    modes: Sequence[str],
    *,
    store: Store,
    embedder: Embedder,
    progress: Progress | None = None,
) -> list[AnswerReport]:
    """Every query through the readers' turn (core/answer/turn.py: translation and routing included) and
    a reply per mode.

    The search runs once per query and is shared by the modes, so they answer from the same hits.
    """
    items = [(q, True) for q in queries] + [(q, False) for q in off_topic]
    retrieved = []
    for i, (query, on_topic) in enumerate(items, 1):
        retrieved.append((query, on_topic, search_turn(query.text, settings, store=store, embedder=embedder)))
        if progress:
            progress(i, len(items) * (len(modes) + 1), f"searched {query.id}")
    reports = []
    done = len(items)
    for mode in modes:
        rows = []
        for query, on_topic, searched in retrieved:
            started = time.perf_counter()
            result = searched.answer(settings, embedder, mode="extractive" if mode == NAIVE else mode)
            if mode == NAIVE and result.mode == "extractive":  # the same bar, the naive sentences
                result.extracted = naive_answer(searched.query, searched.retrieval.hits, embedder)
                result.text = result.extracted.text
            for _ in result:  # generate (or take) the whole text
                pass
            result.seconds = time.perf_counter() - started
            rows.append(score_reply(query, on_topic, mode, result, embedder))
            done += 1
            if progress:
                progress(done, len(items) * (len(modes) + 1), f"{mode}: {query.id}")
        reports.append(AnswerReport(mode, rows))
    return reports


def answer_table(reports: Sequence[AnswerReport]) -> str:
    """The summaries as a Markdown table, one row per mode."""
    header = [
        "answer mode", "token F1", "evidence in answer", "invented words", "grounded",
        "no answer (on topic)", "no answer (off topic)", "s/answer p50", "p95",
    ]  # fmt: skip
    keys = [
        "token_f1", "evidence_in_answer", "invented_words", "grounded", "no_answer_on_topic",
        "no_answer_off_topic", "seconds_p50", "seconds_p95",
    ]  # fmt: skip
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for report in reports:
        summary = report.summary()
        cells = [f"{v:.3f}" if isinstance(v, float) else "–" for v in (summary[k] for k in keys)]
        lines.append("| " + " | ".join([report.mode, *cells]) + " |")
    return "\n".join(lines)
