"""Calibrating the relevance bar (core/answer/abstain.py) of one embedding model from question sets, and
writing it into the model's profile (core/profiles): `inkwell calibrate`.

Each question (answerable ones and off-topic ones) goes through retrieval and the extractive answer as
in the chat; the bar's signals are kept (`collect`). A set whose answerable questions name their post
is also asked of small blogs drawn from its posts (`small_blogs`, `collect_set`): a new blog has a
handful of posts, and the bar must hold there too. Then every bar of a grid is tried on the signals
(`calibrate_bar`, counted all at once by `_Grid`, which a test holds to `decide`'s counts):

- questions in the posts' language: the bars (similarity, supported, max missing share, the share that
  may be missing above `similarity`, and how near a passage word must come to a missing word to find
  it, `word_match`) that decline at most `target` of the answerable ones (rounded down to whole
  questions) and, among those, decline the most off-topic ones; of the bars that tie, the middle one
  (the median of each threshold over them, snapped to the grid), so every threshold keeps a margin on
  both sides. When no bar meets the target, the bars with the fewest answerable questions declined are
  taken instead;
- questions in another language: `cross_language`, the bar with the fewest errors (answerable ones
  declined plus off-topic ones answered), the middle one of those that tie; each set's counted once.

Each question remembers its table's floor (core/search/floor.py). The bar is written at the mean floor
of the tables calibrated on, held within their lowest and highest (`on_floors`), and every bar tried
is counted moved to each question's table, as readers get it. With three sets or more,
`choose_floor_weight` picks how far the bar moves per unit of floor by leaving each set (with its small
blogs) out in turn.

The figures of the chosen bar (declines on and off topic, per language group and per table) go into the
profile's `calibration` record with the sets used, so a profile says what it was calibrated on.
"""

from __future__ import annotations

import dataclasses
import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.answer.abstain import Signals, decide, signals
from core.answer.extractive import extract_answer
from core.config import Settings
from core.embed import Embedder
from core.evaluate.compare import posts_table
from core.evaluate.metrics import Query
from core.models import Post
from core.profiles import Bar, ModelProfile
from core.search import route_and_search
from core.search.floor import measure_floor
from core.store import Store

# The answerable questions a bar may decline, as a share of them (issue #25: at most 3%).
TARGET_ON_TOPIC_DECLINES = 0.03
# The off-topic questions a bar may answer, as a share of them (issue #25: at least 95% declined).
TARGET_OFF_TOPIC_ANSWERS = 0.05
SIMILARITIES = tuple(float(x) for x in np.round(np.arange(0.2, 0.951, 0.025), 3))
MISSING_SHARES = (0.0, 0.2, 0.25, 0.34, 0.5, 0.67, 1.0)
# How near a passage word must come to a missing word for it to count as found (1.0: never by meaning).
WORD_MATCHES = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 1.0)
# How far the bar may move per unit of a table's floor (core/search/floor.py), tried by choose_floor_weight.
FLOOR_WEIGHTS = (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 7.0, 8.0)
# How many of the question's words may be missing when a sentence clears the upper bar (1.0: any).
MISSING_SHARES_CLOSE = (0.34, 0.5, 0.67, 1.0)
# Small blogs calibrated on beside each set whose questions name their post: (posts per blog, blogs of
# that size). A new blog has a few posts, and its similarities and floor sit lower than a full one's.
SMALL_BLOGS = ((3, 3), (8, 3))
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
    # The question set it comes from: its full table and the small blogs made from its posts share it,
    # and are left out together when the floor weight is chosen ("": told apart by floor).
    family: str = ""
    table: str = ""  # the table's name within the family ("": its only one)


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
    by_table: dict[str, Tally] = dataclasses.field(default_factory=dict)  # same language, per table


def collect(
    queries: Sequence[Query],
    off_topic: Sequence[Query],
    settings: Settings,
    *,
    store: Store,
    embedder: Embedder,
    progress: Progress | None = None,
    family: str = "",
    table: str = "",
) -> list[Sample]:
    """The bar's signals for every question, retrieved and answered as the chat does (each sample
    remembers the table's floor, `family` and `table`)."""
    items = [(q, True) for q in queries] + [(q, False) for q in off_topic]
    floor = measure_floor(store, embedder)
    samples = []
    for i, (query, on_topic) in enumerate(items, 1):
        _, found = route_and_search(query.text, settings, store=store, embedder=embedder)
        answer = extract_answer(query.text, found.hits, embedder)
        samples.append(
            Sample(
                query.id,
                query.text,
                on_topic,
                signals(query.text, found.hits, answer, embedder),
                floor,
                family,
                table,
            )
        )
        if progress:
            progress(i, len(items), query.id)
    return samples


def collect_set(
    family: str,
    store: Store,
    queries: Sequence[Query],
    off_topic: Sequence[Query],
    settings: Settings,
    *,
    embedder: Embedder,
    posts: Sequence[Post] = (),
    root: str | Path | None = None,
    work_dir: Path | None = None,
    progress: Progress | None = None,
) -> list[Sample]:
    """`collect` on a set's table, then, given its `posts` (files under `root`) and a `work_dir`, on each
    of its small blogs (`small_blogs`, each a scratch table in `work_dir`, the set's off-topic questions
    asked of it too). A small blog's questions in other languages are left out: the cross-language bar
    counts each set's once. `progress` gets (questions done, questions in all, query id)."""
    blogs = small_blogs(posts, root, queries) if posts and root is not None and work_dir is not None else []
    runs = [("", store, list(queries))]
    for i, blog in enumerate(blogs):
        assert work_dir is not None
        table = posts_table(
            blog.posts, settings, embedder=embedder, work_dir=work_dir / f"small-{i}", reuse=[store]
        )
        runs.append((blog.name, table, blog.queries))
    total = sum(len(on) + len(off_topic) for _, _, on in runs)
    samples: list[Sample] = []
    done = 0
    for name, table, on in runs:

        def step(i: int, _: int, query_id: str, done: int = done) -> None:
            if progress:
                progress(done + i, total, query_id)

        found = collect(
            on, off_topic, settings, store=table, embedder=embedder, progress=step, family=family, table=name
        )
        done += len(found)
        samples += [s for s in found if not (name and s.signals.other_language)]
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
    """One floor weight, judged leaving each family of tables out: its declines under the bar calibrated
    on the others."""

    weight: float
    held_out: dict[str, Tally]  # by the left-out family
    met_target: bool = True  # calibrated on every family, some bar declines at most the target

    @property
    def on_declined(self) -> int:
        return sum(t.on_declined for t in self.held_out.values())

    @property
    def off_answered(self) -> int:
        return sum(t.off_topic - t.off_declined for t in self.held_out.values())

    @property
    def errors(self) -> float:
        """Its errors, each kind as a share of its questions over the share the targets allow: 1.0 is
        one kind's whole allowance."""
        on = sum(t.on_topic for t in self.held_out.values())
        off = sum(t.off_topic for t in self.held_out.values())
        declined = self.on_declined / on / TARGET_ON_TOPIC_DECLINES if on else 0.0
        answered = self.off_answered / off / TARGET_OFF_TOPIC_ANSWERS if off else 0.0
        return declined + answered


def family_of(sample: Sample) -> str:
    """The group a sample is left out with: its family, else its table's floor."""
    return sample.family or f"floor {sample.floor}"


def choose_floor_weight(
    samples: Sequence[Sample], start: Bar, weights: Sequence[float] = FLOOR_WEIGHTS
) -> tuple[float, list[WeightTrial]]:
    """How far the bar moves with a table's floor, chosen on writing it was not calibrated on: for each
    weight and each family (a question set's tables), the bar calibrated on the other families'
    questions is tried on that family's; the weight with the fewest errors in all wins, each kind counted
    against what the targets allow (`WeightTrial.errors`: declining 3% of the answerable questions
    weighs as much as answering 5% of the off-topic ones; the smaller weight on a tie), among the
    weights under which some bar calibrated on every family meets the target. Needs three families or
    more."""
    same = [s for s in samples if not s.signals.other_language]
    families = sorted({family_of(s) for s in same})
    if len(families) < 3 or any(s.floor is None for s in same):
        raise ValueError("choosing the floor weight needs questions asked of three tables or more")
    trials = []
    for weight in weights:
        held_out = {}
        for family in families:
            others = [s for s in same if family_of(s) != family]
            bar = calibrate_bar(others, dataclasses.replace(start, floor_weight=weight)).bar
            held_out[family] = tally([s for s in same if family_of(s) == family], bar)
        met = calibrate_bar(same, dataclasses.replace(start, floor_weight=weight)).met_target
        trials.append(WeightTrial(weight, held_out, met))
    # A weight under which no bar meets the target even on the sets themselves is not chosen.
    eligible = [t for t in trials if t.met_target] or trials
    best = min(eligible, key=lambda t: (round(t.errors, 9), t.weight))
    return best.weight, trials


@dataclass(frozen=True)
class SmallBlog:
    """A blog of a few posts of a set, with the set's questions those posts answer."""

    name: str
    posts: list[Post]
    queries: list[Query]


def small_blogs(
    posts: Sequence[Post],
    root: str | Path,
    queries: Sequence[Query],
    sizes: Sequence[tuple[int, int]] = SMALL_BLOGS,
) -> list[SmallBlog]:
    """Blogs of a few of `posts` (files under `root`): for each (size, count) of `sizes`, `count` blogs of
    `size` posts drawn at random (the same ones on every run), each with the questions of `queries`
    whose `post` (a path under `root`) is one of its posts. None when no question names its post, and
    no size that takes every post."""
    by_path = _by_path(posts, root)
    named = [q for q in queries if q.post in by_path]
    if not named:
        return []
    blogs = []
    for size, count in sizes:
        if size >= len(by_path):
            continue
        for i in range(count):
            chosen = set(random.Random(f"{size}/{i}").sample(sorted(by_path), size))
            blogs.append(
                SmallBlog(
                    f"{size} posts #{i + 1}",
                    [by_path[p] for p in sorted(chosen)],
                    [q for q in named if q.post in chosen],
                )
            )
    return blogs


def unknown_posts(posts: Sequence[Post], root: str | Path, queries: Sequence[Query]) -> list[str]:
    """The `post` paths of `queries` that name no post of `posts` under `root` (a typo, a moved file):
    their questions are left out of the small blogs."""
    by_path = _by_path(posts, root)
    return sorted({q.post for q in queries if q.post and q.post not in by_path})


def _by_path(posts: Sequence[Post], root: str | Path) -> dict[str, Post]:
    """`posts` by their file's path under `root` (posts from elsewhere left out)."""
    by_path = {}
    for post in posts:
        try:
            by_path[Path(post.source).resolve().relative_to(Path(root).resolve()).as_posix()] = post
        except ValueError:
            continue
    return by_path


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
    tables = sorted({(s.family, s.table) for s in same})
    by_table = {
        ", ".join(filter(None, (f, t))): tally([s for s in same if (s.family, s.table) == (f, t)], bar)
        for f, t in tables
    }
    return Calibration(bar, tally(same, bar), tally(other, bar), met, tied, by_table)


@dataclass(frozen=True)
class _Grid:
    """Same-language samples as arrays, to count the declines of every bar of the grid at once: `decide`'s
    rule for a question in the posts' language, vectorised (a test holds the two to the same counts)."""

    similarity: np.ndarray
    floors: list[float | None]  # each sample's table floor
    asked: np.ndarray
    blocked: np.ndarray  # declined whatever the bar: nothing quotable, no content word, an unknown name
    on_topic: np.ndarray
    missing: dict[float, np.ndarray]  # by word_match: the words still missing under it

    @classmethod
    def of(cls, samples: Sequence[Sample]) -> _Grid:
        found = [s.signals for s in samples]
        return cls(
            similarity=np.array([f.similarity for f in found], dtype=float),
            floors=[s.floor for s in samples],
            asked=np.array([f.asked for f in found], dtype=float),
            blocked=np.array([not f.quotable or not f.asked or bool(f.unknown_names) for f in found]),
            on_topic=np.array([s.on_topic for s in samples]),
            missing={
                match: np.array([len(f.missing_under(Bar(0, 0, 0, 0, word_match=match))) for f in found])
                for match in WORD_MATCHES
            },
        )

    def declines(self, start: Bar) -> list[tuple[int, int, Bar]]:
        """(answerable declined, off-topic declined, bar) for every bar of the grid (`start` supplying the
        floor and the cross-language bar)."""
        pairs = [(high, low) for high in SIMILARITIES for low in SIMILARITIES if low <= high]
        shift = np.array([start.floor_shift(floor) for floor in self.floors])  # as Bar.on_floor moves it
        high = np.array([p[0] for p in pairs])[:, None] + shift[None, :]
        low = np.array([p[1] for p in pairs])[:, None] + shift[None, :]
        close, near = self.similarity >= high, self.similarity >= low
        open_ = ~self.blocked
        scored = []
        for match in WORD_MATCHES:
            missing = self.missing[match]
            for close_share in MISSING_SHARES_CLOSE:
                close_ok = close & (missing <= close_share * self.asked)
                for share in MISSING_SHARES:
                    answered = (close_ok | (near & (missing <= share * self.asked))) & open_
                    on = (~answered & self.on_topic).sum(axis=1)
                    off = (~answered & ~self.on_topic).sum(axis=1)
                    for k, (h, lo) in enumerate(pairs):
                        bar = dataclasses.replace(
                            start,
                            similarity=h,
                            supported=lo,
                            max_missing=share,
                            word_match=match,
                            max_missing_close=close_share,
                        )
                        scored.append((int(on[k]), int(off[k]), bar))
        return scored


def _same_language_bar(samples: Sequence[Sample], start: Bar, target: float) -> tuple[Bar, bool, int]:
    allowed = int(target * sum(s.on_topic for s in samples) + 1e-9)
    scored = _Grid.of(samples).declines(start)
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
        max_missing_close=_median(b.max_missing_close for b in best),
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
            + abs(bar.max_missing_close - target.max_missing_close)
        )

    return min(bars, key=distance)


def calibrated_profile(
    profile: ModelProfile,
    result: Calibration,
    sets: Sequence[str],
    trials: Sequence[WeightTrial] = (),
    small_blogs: int = 0,
) -> ModelProfile:
    """`profile` with the calibrated bar and a record of how it was calibrated (with the floor weights
    tried, when they were, and how many small blogs were made from the sets)."""
    record: dict[str, Any] = {
        "sets": list(sets),
        "small_blogs": small_blogs,
        "target_on_topic_declines": TARGET_ON_TOPIC_DECLINES,
        "met_target": result.met_target,
        "tied_bars": result.tied,
        "same_language": result.same_language.to_json(),
        "other_language": result.other_language.to_json(),
        "by_table": {name: t.to_json() for name, t in result.by_table.items()},
    }
    if trials:
        record["floor_weights"] = [
            {
                "weight": t.weight,
                "on_topic_declined": t.on_declined,
                "off_topic_answered": t.off_answered,
                "met_target": t.met_target,
            }
            for t in trials
        ]
    return profile.replace(bar=result.bar, measured=True, calibration=record)
