"""What the product knows about one embedding model, as one record: its relevance scale, whether it
reads across languages, the relevance bar's thresholds, the extractive scorer's weights, which passages
an answer adds, the grounding check's thresholds and the topic merge threshold.

A profile is a small JSON file (core/profiles/models/*.json, or one of your own: docs/models.md); the
bar's numbers in it are written by `inkwell calibrate --write` (core/evaluate/calibrate.py).
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class ProfileError(ValueError):
    """A profile or registry file that cannot be read; the message names the file and the field."""


@dataclass(frozen=True)
class Bar:
    """The relevance bar (core/answer/abstain.py), on the model's relevance scale."""

    similarity: float  # best sentence similarity that answers by itself
    supported: float  # lower similarity that answers when few question words are missing
    max_missing: float  # share of the question's content words allowed to be missing for that
    cross_language: float  # similarity bar for a question in another language than the posts
    # A missing question word whose nearest passage word (by the model's cosine, core/answer/near_words.py)
    # is at least this close counts as found; 1.0: only words as written (or stemmed) are found.
    word_match: float = 1.0
    # Share of the question's content words that may be missing even when a sentence clears `similarity`
    # (1.0: any): a close sentence does not answer a question most of whose words no passage has.
    max_missing_close: float = 1.0
    # The table floor the thresholds were calibrated at (core/search/floor.py); on another table
    # `similarity` and `supported` move by `floor_weight` × (that table's floor − this), its floor first
    # held within the floors calibrated on (`floor_low`..`floor_high`: no extrapolation). None: never move.
    floor: float | None = None
    floor_weight: float = 1.0
    floor_low: float | None = None
    floor_high: float | None = None

    def on_floor(self, floor: float | None) -> Bar:
        """The bar for a table whose floor is `floor` (unchanged when either floor is unknown), which
        then stays put (its `floor` is None). The cross-language bar does not move: the probes are
        English, so the floor says nothing across languages."""
        if self.floor is None or floor is None:
            return self
        shift = self.floor_shift(floor)
        return dataclasses.replace(
            self, similarity=self.similarity + shift, supported=self.supported + shift, floor=None
        )

    def floor_shift(self, floor: float | None) -> float:
        """How far `similarity` and `supported` move on a table whose floor is `floor` (0 when either
        floor is unknown): `floor_weight` × the difference, the table's floor held within the floors
        calibrated on."""
        if self.floor is None or floor is None:
            return 0.0
        held = floor if self.floor_low is None else max(floor, self.floor_low)
        held = held if self.floor_high is None else min(held, self.floor_high)
        return self.floor_weight * (held - self.floor)


# Bar fields a profile may leave out (they then keep Bar's default).
OPTIONAL_BAR = ("word_match", "max_missing_close", "floor", "floor_weight", "floor_low", "floor_high")


@dataclass(frozen=True)
class Scorer:
    """The extractive answer's sentence score weights (core/answer/extractive.py)."""

    similarity: float = 0.5
    heading: float = 0.4
    coverage: float = 0.1  # content words
    coverage_light: float = 0.2  # keeping common verbs
    hit: float = 0.2  # the best relevance of the hit's section
    length: float = -0.1  # per 30 words (capped at 60)
    question: float = -0.3


@dataclass(frozen=True)
class Passage:
    """When the extractive answer quotes a second post's passage (core/answer/extractive.py)."""

    # A second post whose best sentence has at least this raw cosine (not rescaled) with the first's says
    # the same: not quoted.
    near_duplicate: float = 0.9
    # A second post's passage only when its best sentence scores within this much of the first's.
    second_post_gap: float = 0.05


@dataclass(frozen=True)
class GroundingThresholds:
    """The grounding check's thresholds (core/answer/grounding.py): an answer sentence is supported by an
    excerpt when either passes (and every detail it states is in the excerpts)."""

    similarity: float = 0.65  # on the model's relevance scale
    overlap: float = 0.65  # share of the sentence's content words found in the excerpt


# The mean relevance at which two groups of readers' questions merge into one topic (core/search/topics.py).
TOPICS_MERGE = 0.25


@dataclass(frozen=True)
class ModelProfile:
    """One embedding model's facts. `measured` is False when the numbers are defaults not measured on
    this model (`notes` says what was assumed)."""

    model_id: str
    bar: Bar
    relevance_scale: tuple[float, float] = (0.0, 1.0)  # cosine → relevance: (cosine − low) / (high − low)
    cross_lingual: bool = False  # puts a sentence and its translation close together
    scorer: Scorer = field(default_factory=Scorer)
    passage: Passage = field(default_factory=Passage)
    grounding: GroundingThresholds = field(default_factory=GroundingThresholds)
    topics_merge: float = TOPICS_MERGE
    measured: bool = True
    notes: str = ""
    calibration: dict[str, Any] = field(default_factory=dict)  # how the bar was calibrated, with figures

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["relevance_scale"] = list(self.relevance_scale)
        return data

    def replace(self, **changes: Any) -> ModelProfile:
        return dataclasses.replace(self, **changes)


def profile_from_json(data: Any, source: str) -> ModelProfile:
    """A profile from its JSON object; ProfileError naming `source` and the field when one is wrong."""
    if not isinstance(data, dict):
        raise ProfileError(f"{source}: a profile is a JSON object")
    try:
        model_id = data["model_id"]
        bar_data = data["bar"]
        if not isinstance(bar_data, dict):
            raise TypeError
        optional = {k: _number(bar_data, k, source) for k in OPTIONAL_BAR if bar_data.get(k) is not None}
        bar = Bar(
            **{k: _number(bar_data, k, source) for k in _fields(Bar) if k not in OPTIONAL_BAR}, **optional
        )
    except KeyError as err:
        raise ProfileError(f"{source}: missing {err.args[0]!r}") from None
    except TypeError:
        raise ProfileError(f"{source}: 'bar' must be an object of numbers") from None
    scorer = Scorer(**_block(data, "scorer", Scorer, source))
    passage = Passage(**_block(data, "passage", Passage, source))
    grounding = GroundingThresholds(**_block(data, "grounding", GroundingThresholds, source))
    for key, value, low, high in (
        ("bar.floor_weight", bar.floor_weight, 0.0, math.inf),
        ("bar.max_missing_close", bar.max_missing_close, 0.0, 1.0),  # a share of words
        ("passage.near_duplicate", passage.near_duplicate, -1.0, 1.0),  # a cosine
        ("passage.second_post_gap", passage.second_post_gap, 0.0, math.inf),
        ("grounding.overlap", grounding.overlap, 0.0, 1.0),  # a share of words
    ):
        if not low <= value <= high:
            raise ProfileError(f"{source}: {key!r} must be between {low} and {high}, not {value}")
    floors = [f for f in (bar.floor_low, bar.floor, bar.floor_high) if f is not None]
    if floors != sorted(floors):
        raise ProfileError(f"{source}: 'bar' needs floor_low <= floor <= floor_high, not {floors}")
    topics_merge = _number(data, "topics_merge", source) if "topics_merge" in data else TOPICS_MERGE
    scale = data.get("relevance_scale", [0.0, 1.0])
    if not (isinstance(scale, list) and len(scale) == 2) or not all(_is_number(x) for x in scale):
        raise ProfileError(f"{source}: 'relevance_scale' must be [low, high]")
    if not scale[0] < scale[1]:
        raise ProfileError(f"{source}: 'relevance_scale' needs low < high, not {scale}")
    if not isinstance(model_id, str) or not model_id:
        raise ProfileError(f"{source}: 'model_id' must be a non-empty string")
    return ModelProfile(
        model_id=model_id,
        bar=bar,
        relevance_scale=(float(scale[0]), float(scale[1])),
        cross_lingual=bool(data.get("cross_lingual", False)),
        scorer=scorer,
        passage=passage,
        grounding=grounding,
        topics_merge=topics_merge,
        measured=bool(data.get("measured", True)),
        notes=str(data.get("notes", "")),
        calibration=dict(data.get("calibration") or {}),
    )


def load_profile(path: Path) -> ModelProfile:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ProfileError(f"{path}: cannot read the profile ({err})") from None
    return profile_from_json(data, str(path))


def save_profile(profile: ModelProfile, path: Path) -> None:
    """Write the profile as indented JSON (atomically: a reader never sees half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(profile.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def _fields(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


def _block(data: dict[str, Any], name: str, cls: type, source: str) -> dict[str, float]:
    """The numbers of the optional block `name` (fields of `cls`); a field left out keeps its default."""
    block = data.get(name, {})
    if not isinstance(block, dict):
        raise ProfileError(f"{source}: {name!r} must be an object of numbers")
    unknown = set(block) - set(_fields(cls))
    if unknown:
        raise ProfileError(f"{source}: unknown {name} field {sorted(unknown)[0]!r}")
    return {k: _number(block, k, source, f"{name}.{k}") for k in block}


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _number(data: dict[str, Any], key: str, source: str, name: str = "") -> float:
    value = data[key]
    if not _is_number(value):
        raise ProfileError(f"{source}: {name or key!r} must be a number, not {value!r}")
    return float(value)
