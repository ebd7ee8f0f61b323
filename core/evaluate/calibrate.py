"""Calibrating the relevance bar (core/answer/abstain.py) of one embedding model from question sets, and
writing it into the model's profile (core/profiles): `inkwell calibrate`.

Each question (answerable ones and off-topic ones) goes through retrieval and the extractive answer as
in the chat; the bar's signals are kept (`collect`). Then every bar of a grid is tried on them
(`calibrate_bar`):

- questions in the posts' language: the bars (similarity, supported, max missing share, and how near
  a passage word must come to a missing word to find it, `word_match`) that decline at most `target` of the answerable ones
  (rounded down to whole questions) and, among those, decline the most off-topic ones; of the bars
  that tie, the middle one (the median of each threshold over them, snapped to the grid), so every
  threshold keeps a margin on both sides. When no bar meets the target, the bars with the fewest
  answerable questions declined are taken instead;
- questions in another language: `cross_language`, the bar with the fewest errors (answerable ones
  declined plus off-topic ones answered), the middle one of those that tie.

Each question remembers its table's floor (core/search/floor.py). The bar is written at the mean floor
of the tables calibrated on, held within their lowest and highest (`on_floors`), and every bar tried
is counted moved to each question's table, as readers get it. With three tables or more,
`choose_floor_weight` picks how far the bar moves per unit of floor by leaving each table out in turn.

The figures of the chosen bar (declines on and off topic, per language group) go into the profile's
`calibration` record with the sets used, so a profile says what it was calibrated on.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.answer.abstain import Signals, decide, signals
from core.answer.extractive import extract_answer
from core.config import Settings
from core.embed import Embedder
from core.evaluate.metrics import Query
from core.profiles import Bar, ModelProfile
from core.search import route_and_search
from core.search.floor import measure_floor
from core.store import Store

# The answerable questions a bar may decline, as a share of them (issue #25: at most 3%).
TARGET_ON_TOPIC_DECLINES = 0.03
SIMILARITIES = tuple(float(x) for x in np.round(np.arange(0.2, 0.951, 0.025), 3))
MISSING_SHARES = (0.0, 0.2, 0.25, 0.34, 0.5, 0.67, 1.0)
# How near a passage word must come to a missing word for it to count as found (1.0: never by meaning).
WORD_MATCHES = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 1.0)
# How far the bar may move per unit of a table's floor (core/search/floor.py), tried by choose_floor_weight.
FLOOR_WEIGHTS = (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0)
CROSS_LANGUAGE = tuple(float(x) for x in np.round(np.arange(0.0, 0.951, 0.025), 3))

Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class Sample:
    """One question's bar signals, and whether the posts answer it."""

    query_id: str
    text: str
    on_topic: bool
    signals: Signals
    floor: float | None = None  # the floor of the table it was asked of (core/search/floor.py)


@dataclass(frozen=True)
class Tally:
    """Declines of one bar over a group of samples."""

    on_topic: int
    on_declined: int
    off_topic: int
    off_declined: int

    @property
    def on_rate(self) -> float | None:
        return self.on_declined / self.on_topic if self.on_topic else None

    @property
    def off_rate(self) -> float | None:
        return self.off_declined / self.off_topic if self.off_topic else None

    def to_json(self) -> dict[str, Any]:
        return {
            "on_topic": self.on_topic,
            "on_topic_declined": self.on_declined,
            "off_topic": self.off_topic,
            "off_topic_declined": self.off_declined,
        }


@dataclass(frozen=True)
class Calibration:
    bar: Bar
    same_language: Tally  # questions in the posts' language
    other_language: Tally  # questions in another language (judged on `cross_language`)
    met_target: bool  # some bar declined at most the target share of answerable questions
    tied: int  # bars that tied for best in the posts' language (the margin's width)


def collect(
    queries: Sequence[Query],
    off_topic: Sequence[Query],
    settings: Settings,
    *,
    store: Store,
    embedder: Embedder,
    progress: Progress | None = None,
) -> list[Sample]:
    """The bar's signals for every question, retrieved and answered as the chat does."""
    items = [(q, True) for q in queries] + [(q, False) for q in off_topic]
    floor = measure_floor(store, embedder)
    samples = []
    for i, (query, on_topic) in enumerate(items, 1):
        _, found = route_and_search(query.text, settings, store=store, embedder=embedder)
        answer = extract_answer(query.text, found.hits, embedder)
        samples.append(
            Sample(query.id, query.text, on_topic, signals(query.text, found.hits, answer, embedder), floor)
        )
        if progress:
            progress(i, len(items), query.id)
    return samples


def tally(samples: Sequence[Sample], bar: Bar) -> Tally:
    """Declines of `bar` (moved to each sample's table floor, as for readers) over the samples."""
    on = [s for s in samples if s.on_topic]
    off = [s for s in samples if not s.on_topic]
    return Tally(
        len(on),
        sum(not decide(s.signals, bar.on_floor(s.floor))[0] for s in on),
        len(off),
        sum(not decide(s.signals, bar.on_floor(s.floor))[0] for s in off),
    )


def on_floors(start: Bar, samples: Sequence[Sample]) -> Bar:
    """`start` written at the samples' floors: at their tables' mean floor, held within the lowest and
    highest of them (moving by `start.floor_weight` per unit of floor); never moving when a sample's
    table floor is unknown."""
    floors = {s.floor for s in samples}
    if not floors or None in floors:
        return dataclasses.replace(start, floor=None, floor_low=None, floor_high=None)
    known = [f for f in floors if f is not None]
    return dataclasses.replace(
        start,
        floor=round(statistics.fmean(known), 4),
        floor_low=round(min(known), 4),
        floor_high=round(max(known), 4),
    )


@dataclass(frozen=True)
class WeightTrial:
    """One floor weight, judged leaving each table out: its declines under the bar calibrated on the others."""

    weight: float
    held_out: dict[float, Tally]  # by the left-out table's floor

    @property
    def on_declined(self) -> int:
        return sum(t.on_declined for t in self.held_out.values())

    @property
    def off_answered(self) -> int:
        return sum(t.off_topic - t.off_declined for t in self.held_out.values())


def choose_floor_weight(
    samples: Sequence[Sample], start: Bar, weights: Sequence[float] = FLOOR_WEIGHTS
) -> tuple[float, list[WeightTrial]]:
    """How far the bar moves with a table's floor, chosen on tables it was not calibrated on: for each
    weight and each table, the bar calibrated on the other tables' questions is tried on that table's;
    the weight with the fewest answerable questions declined in all, then the fewest off-topic ones
    answered, wins (the smaller weight on a tie). Needs questions from three tables or more."""
    same = [s for s in samples if not s.signals.other_language]
    tables = sorted({s.floor for s in same if s.floor is not None})
    if len(tables) < 3 or any(s.floor is None for s in same):
        raise ValueError("choosing the floor weight needs questions asked of three tables or more")
    trials = []
    for weight in weights:
        held_out = {}
        for floor in tables:
            others = [s for s in same if s.floor != floor]
            bar = calibrate_bar(others, dataclasses.replace(start, floor_weight=weight)).bar
            held_out[floor] = tally([s for s in same if s.floor == floor], bar)
        trials.append(WeightTrial(weight, held_out))
    best = min(trials, key=lambda t: (t.on_declined, t.off_answered, t.weight))
    return best.weight, trials


def calibrate_bar(
    samples: Sequence[Sample], start: Bar, target: float = TARGET_ON_TOPIC_DECLINES, *, floors: bool = True
) -> Calibration:
    """The bar the samples call for (see the module docstring); `start` supplies what the samples
    cannot decide (a language group without samples keeps its threshold). With `floors`, the bar is
    written at the samples' reference floor and moves with each table's (core/search/floor.py)."""
    same = [s for s in samples if not s.signals.other_language]
    other = [s for s in samples if s.signals.other_language]
    start = on_floors(start, samples) if floors else dataclasses.replace(start, floor=None)
    bar, met, tied = start, True, 0
    if any(s.on_topic for s in same) and any(not s.on_topic for s in same):
        bar, met, tied = _same_language_bar(same, start, target)
    if any(s.on_topic for s in other) and any(not s.on_topic for s in other):
        bar = dataclasses.replace(bar, cross_language=_cross_language(other, bar))
    return Calibration(bar, tally(same, bar), tally(other, bar), met, tied)


def _same_language_bar(samples: Sequence[Sample], start: Bar, target: float) -> tuple[Bar, bool, int]:
    allowed = int(target * sum(s.on_topic for s in samples) + 1e-9)
    scored = []
    for high in SIMILARITIES:
        for low in (x for x in SIMILARITIES if x <= high):
            for missing in MISSING_SHARES:
                for match in WORD_MATCHES:
                    bar = dataclasses.replace(
                        start, similarity=high, supported=low, max_missing=missing, word_match=match
                    )
                    counts = tally(samples, bar)
                    scored.append((counts.on_declined, counts.off_declined, bar))
    fewest = min(on for on, _, _ in scored)
    met = fewest <= allowed
    eligible = [(off, bar) for on, off, bar in scored if on <= (allowed if met else fewest)]
    most = max(off for off, _ in eligible)
    best = [bar for off, bar in eligible if off == most]
    middle = dataclasses.replace(
        start,
        similarity=_median(b.similarity for b in best),
        supported=_median(b.supported for b in best),
        max_missing=_median(b.max_missing for b in best),
        word_match=_median(b.word_match for b in best),
    )
    return _nearest(middle, best), met, len(best)


def _cross_language(samples: Sequence[Sample], bar: Bar) -> float:
    errors = []
    for value in CROSS_LANGUAGE:
        counts = tally(samples, dataclasses.replace(bar, cross_language=value))
        errors.append((counts.on_declined + counts.off_topic - counts.off_declined, value))
    fewest = min(e for e, _ in errors)
    tied = [v for e, v in errors if e == fewest]
    return min(tied, key=lambda v: abs(v - _median(tied)))


def _median(values: Any) -> float:
    return float(statistics.median(list(values)))


def _nearest(target: Bar, bars: Sequence[Bar]) -> Bar:
    """The bar of `bars` closest to `target` (so the one chosen was measured, not interpolated)."""

    def distance(bar: Bar) -> float:
        return (
            abs(bar.similarity - target.similarity)
            + abs(bar.supported - target.supported)
            + abs(bar.max_missing - target.max_missing)
            + abs(bar.word_match - target.word_match)
        )

    return min(bars, key=distance)


def calibrated_profile(
    profile: ModelProfile, result: Calibration, sets: Sequence[str], trials: Sequence[WeightTrial] = ()
) -> ModelProfile:
    """`profile` with the calibrated bar and a record of how it was calibrated (with the floor weights
    tried, when they were)."""
    record: dict[str, Any] = {
        "sets": list(sets),
        "target_on_topic_declines": TARGET_ON_TOPIC_DECLINES,
        "met_target": result.met_target,
        "tied_bars": result.tied,
        "same_language": result.same_language.to_json(),
        "other_language": result.other_language.to_json(),
    }
    if trials:
        record["floor_weights"] = [
            {"weight": t.weight, "on_topic_declined": t.on_declined, "off_topic_answered": t.off_answered}
            for t in trials
        ]
    return profile.replace(bar=result.bar, measured=True, calibration=record)
