"""Collections routing: when the reader picks no collection, guess one from the question.

Two signals, per collection:
- the author's keyword rules, `<data_dir>/routes.toml` (a `[collection]` table with `keywords = [...]`;
  a keyword matches a whole word or phrase in any case, plural -s/-es included);
- how close the question comes to the collection: the cosine between its embedding and the
  collection's nearest chunk (on the model's relevance scale), one top-1 query per collection through
  the store's vector index (exact below its size threshold), so no chunk vector is read into memory:
  reading them all took 10 s and most of 7 GB at a million chunks. The number of collections is
  checked first, from the posts table, so a one-collection blog never pays even that. The collection's
  centroid (its mean chunk vector) was tried first:
  on the demo (bench/routing.py) the nearest chunk guessed the right collection for 13 of 15 questions
  against 10 for the centroid (a collection of essays on many topics has a centroid close to none of
  them), and at the default margin it narrowed 2 questions, both rightly, where the centroid narrowed
  none.

A collection's score is that similarity, plus `2 × margin` when one of its rules matched. The search
is narrowed to the best collection only when it leads the runner-up by at least `margin` (default
ROUTE_MARGIN; the rules file may set its own): so a rule routes unless the wording is clearly closer to
another collection (a weak similarity cannot overrule it), and without a rule only a clear lead
routes. Otherwise every collection is searched and the best collection is only shown as a guess: a wrong
confident route hides results, so the margin is set to keep the demo's figures from getting worse
(bench/routing.py measures it). With `routing = "off"`, one collection, or the reader's own choice, the
router does nothing.

A broken rules file never breaks a question: its problems become notes and the valid rules still apply.
"""

from __future__ import annotations

import os
import re
import threading
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from core.config import Settings, local_home
from core.embed import Embedder, embed_query, embedder_for_store, relevance_scale, rescale
from core.search.posts import mean_vectors
from core.search.retrieve import Retrieval, search
from core.search.warm import warming
from core.store import Store

RULES_FILE = "routes.toml"
# The lead (in relevance-scaled cosine) the best collection needs over the runner-up before the search is
# narrowed to it. Measured on the demo (bench/routing.py): below 0.35 some narrowing hid a relevant post
# in another collection (with centroids, a walnut-bench question led by 0.33 and lost a relevant essay);
# at 0.35 the two questions narrowed are narrowed rightly and nDCG@10 equals routing off. A question
# plainly about one of two distinct collections leads by more (see tests/integration/test_route.py).
ROUTE_MARGIN = 0.35
# What a matching rule adds to its collection's score, in margins: 2 lets a rule win unless the question
# is closer to another collection by more than one margin.
RULE_WEIGHT = 2.0


class RulesError(ValueError):
    """The rules file cannot be used as written; the message lists every problem."""


# Rules -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rules:
    keywords: dict[str, tuple[str, ...]] = field(default_factory=dict)
    margin: float | None = None  # the file's own margin, else ROUTE_MARGIN

    def matches(self, question: str) -> dict[str, list[str]]:
        """The keywords of each collection that the question mentions (collections with none left out)."""
        found: dict[str, list[str]] = {}
        for collection, words in self.keywords.items():
            hits = [w for w in words if _keyword_pattern(w).search(question)]
            if hits:
                found[collection] = hits
        return found


def _keyword_pattern(keyword: str) -> re.Pattern[str]:
    words = [re.escape(w) for w in keyword.split()]
    # Whole words only ("art" must not match "start"); a plural -s/-es still matches.
    return re.compile(r"(?<!\w)" + r"\s+".join(words) + r"(?:s|es)?(?!\w)", re.IGNORECASE)


def parse_rules(text: str, collections: Sequence[str] | None = None) -> tuple[Rules, list[str]]:
    """The rules a file's text defines, and its problems (empty when it is fine).

    Invalid parts are left out and reported, the rest is kept: a typo in one collection's table does not
    switch off the others. With `collections`, a table naming another collection is a problem.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return Rules(), [f"not valid TOML: {exc}"]
    problems: list[str] = []
    margin: float | None = None
    keywords: dict[str, tuple[str, ...]] = {}
    known = set(collections) if collections is not None else None
    for key, value in data.items():
        if key == "margin":
            if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1:
                margin = float(value)
            else:
                problems.append(f"margin must be a number between 0 and 1, not {value!r}")
        elif not isinstance(value, dict):
            problems.append(f"{key!r} is not a [collection] table (the only top-level setting is margin)")
        elif known is not None and key not in known:
            listed = ", ".join(sorted(known)) or "none yet"
            problems.append(f"[{key}]: no such collection (collections: {listed})")
        else:
            words, problem = _table_keywords(key, value)
            if problem:
                problems.append(problem)
            if words:
                keywords[key] = words
    return Rules(keywords, margin), problems


def _table_keywords(collection: str, table: dict[str, Any]) -> tuple[tuple[str, ...], str | None]:
    unknown = sorted(set(table) - {"keywords"})
    if unknown:
        word = "key" if len(unknown) == 1 else "keys"
        return (), f"[{collection}]: unknown {word} {', '.join(unknown)} (only keywords = [...] is read)"
    words = table.get("keywords", [])
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        return (), f'[{collection}]: keywords must be a list of strings, like keywords = ["sawmill"]'
    cleaned = tuple(dict.fromkeys(" ".join(w.split()) for w in words if w.strip()))
    return cleaned, None


def rules_path(data_dir: str | Path) -> Path:
    return local_home(data_dir) / RULES_FILE


def read_rules_text(data_dir: str | Path) -> str | None:
    """The rules file's text, or None when there is none."""
    try:
        return rules_path(data_dir).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def load_rules(data_dir: str | Path, collections: Sequence[str] | None = None) -> tuple[Rules, list[str]]:
    """The usable rules in the data dir's rules file (none without a file), and its problems."""
    try:
        text = read_rules_text(data_dir)
    except (OSError, UnicodeDecodeError) as exc:
        return Rules(), [f"cannot read {RULES_FILE}: {exc}"]
    if text is None:
        return Rules(), []
    rules, problems = parse_rules(text, collections)
    return rules, [f"{RULES_FILE}: {p}" for p in problems]


def save_rules(data_dir: str | Path, text: str, collections: Sequence[str]) -> Rules:
    """Validate and write the rules file; an invalid text raises RulesError and the old file stays."""
    rules, problems = parse_rules(text, collections)
    if problems:
        raise RulesError("; ".join(problems))
    path = rules_path(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)  # atomic: a crash never leaves half a file
    return rules


def rules_template(collections: Sequence[str]) -> str:
    """A commented starting point for the rules file, naming the stored collections."""
    lines = [
        "# Collections routing: a question that mentions one of a collection's keywords (whole words or",
        "# phrases, any case, plural -s included) is searched in that collection only, unless its wording",
        "# is clearly closer to another collection. Remove the # before a table to use it.",
        "#",
        f"# margin = {ROUTE_MARGIN}  # lead the best collection needs over the next before the search narrows",
    ]
    for name in collections:
        lines += ["#", f"# [{name}]", '# keywords = ["…", "…"]']
    return "\n".join(lines) + "\n"


# Collection vectors ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CollectionVectors:
    names: list[str]
    centroids: np.ndarray  # one unit-length mean row per collection (bench/routing.py compares it)
    vectors: np.ndarray  # every chunk's vector
    labels: np.ndarray  # each chunk's collection, as an index into `names`
    chunks: dict[str, int]  # chunks per collection

    def nearest(self, vector: np.ndarray) -> np.ndarray:
        """Per collection, the cosine of its chunk nearest to `vector`."""
        best = np.full(len(self.names), -1.0, dtype=np.float32)
        np.maximum.at(best, self.labels, self.vectors @ vector)
        return best


_CACHE: dict[str, tuple[tuple[int, int, str], CollectionVectors]] = {}
_CACHE_LOCK = threading.Lock()


def collection_vectors(store: Store) -> CollectionVectors:
    """The chunk vectors by collection (and their means), read again only when the chunks table changes.

    Not used to route (that reads no vectors): bench/routing.py compares centroids with nearest chunks."""
    table = store.chunks
    if table is None:
        return _EMPTY
    key = store.key
    # The row count too: undoing a first ingest drops the table, and a new one numbers its versions from 1.
    version = (int(table.version), int(table.count_rows()), store.model_id() or "")
    with _CACHE_LOCK:
        cached = _CACHE.get(key)
        if cached is not None and cached[0] == version:
            return cached[1]
    result = _group_by_collection(*store.chunk_vectors())
    with _CACHE_LOCK:
        _CACHE[key] = (version, result)
    return result


_EMPTY = CollectionVectors(
    [], np.zeros((0, 0), np.float32), np.zeros((0, 0), np.float32), np.zeros(0, np.int64), {}
)


def _group_by_collection(meta: Any, vectors: np.ndarray) -> CollectionVectors:
    collections = np.array([c or "" for c in meta["collection"].to_pylist()])
    names = sorted({str(c) for c in collections if c})
    if not names:
        return _EMPTY
    keep = collections != ""  # a chunk without a collection cannot be routed to
    vectors, labels = vectors[keep], np.searchsorted(names, collections[keep])
    counts = {name: int((labels == i).sum()) for i, name in enumerate(names)}
    return CollectionVectors(names, mean_vectors(vectors, labels, len(names)), vectors, labels, counts)


# Routing -----------------------------------------------------------------------------------------------


@dataclass
class Route:
    """What the router decided for one question.

    status: "routed" (search narrowed to `collections`), "unsure" (everything searched, `guess` shown),
    "chosen" (the reader's own collections), "off" (routing switched off) or "single" (one collection
    or none: nothing to route).
    """

    status: str
    collections: list[str] = field(default_factory=list)  # the search filter; empty = everything
    guess: str | None = None
    confidence: float = 0.0  # lead over the runner-up in units of 2 × margin, capped at 1; routes at ≥ 0.5
    scores: dict[str, float] = field(default_factory=dict)  # similarity (+ rule weight), best first
    similarity: dict[str, float] = field(default_factory=dict)  # nearest-chunk similarity alone
    rule_hits: dict[str, list[str]] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # rules-file problems

    @property
    def routed(self) -> bool:
        return self.status == "routed"

    def summary(self) -> str:
        """One line for the reader, e.g. "Searched projects (the question mentions 'sawmill')"."""
        if self.status == "chosen":
            return f"Searched {', '.join(self.collections) or 'everything'} (your choice)"
        if self.status == "routed" and self.guess:
            hits = self.rule_hits.get(self.guess)
            if hits:
                return f"Searched {self.guess} (the question mentions {_quoted(hits)})"
            return f"Searched {self.guess} (the question is closest to it)"
        if self.status == "unsure" and self.guess:
            return f"Searched everything (closest: {self.guess})"
        return "Searched everything"

    def alternatives(self, collections: Sequence[str]) -> list[tuple[str, list[str]]]:
        """The reader's one-click overrides: (label, collections to search; [] = everything)."""
        options = [("Search all collections", [])] if self.collections else []
        others = [c for c in collections if c not in self.collections]
        return options + [(f"Search only {c}", [c]) for c in others]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Route:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "collections": self.collections,
            "guess": self.guess,
            "confidence": round(self.confidence, 3),
            "scores": {k: round(v, 4) for k, v in self.scores.items()},
            "similarity": {k: round(v, 4) for k, v in self.similarity.items()},
            "rule_hits": self.rule_hits,
            "reasons": self.reasons,
            "notes": self.notes,
        }


def _quoted(words: Sequence[str]) -> str:
    return ", ".join(f"'{w}'" for w in words)


def route(
    question: str,
    store: Store,
    embedder: Embedder,
    settings: Settings,
    *,
    chosen: Sequence[str] | None = None,
    vector: np.ndarray | None = None,
) -> Route:
    """Decide which collections to search for `question`.

    `chosen` is the reader's own pick: None when they made none (then the router decides), [] when they
    asked for everything. `vector`: the question already embedded with `embedder`'s `query`, if at hand.
    """
    if chosen is not None:
        notes = unknown_collections(store, chosen)
        return Route("chosen", list(chosen), reasons=["the reader chose the collections"], notes=notes)
    if settings.routing == "off":
        return Route("off", reasons=["routing is off"])
    names = store.collections()
    if len(names) < 2:
        return Route("single", reasons=["fewer than two collections: nothing to route"])
    rules, notes = load_rules(store.data_dir, names)
    margin = rules.margin if rules.margin is not None else ROUTE_MARGIN
    store.check_model(embedder.model_id)
    if vector is None:
        vector = embed_query(embedder, question)
    # On the model's relevance scale, so the margin means the same for e5's crowded cosines as for MiniLM's.
    scale = relevance_scale(embedder.model_id)
    cosines = store.nearest_by_collection(vector, names)
    similarity = {name: rescale(c, scale) for name, c in cosines.items()}
    return decide(similarity, rules.matches(question), margin, notes)


def unknown_collections(store: Store, chosen: Sequence[str]) -> list[str]:
    """A note naming the chosen collections that hold no post (a typo, or quotes gone astray), if any."""
    known = store.collections() if chosen else []
    missing = [c for c in chosen if c not in known]
    if not missing:
        return []
    names = ", ".join(repr(c) for c in missing)
    listed = ", ".join(repr(c) for c in known) or "none yet"
    what = "nothing was searched" if len(missing) == len(set(chosen)) else "left out"
    word = "collection" if len(missing) == 1 else "collections"
    return [f"unknown {word} {names}: {what} (collections: {listed})"]


def decide(
    similarity: dict[str, float],
    rule_hits: dict[str, list[str]],
    margin: float,
    notes: list[str] | None = None,
) -> Route:
    """The decision from similarities and rule matches (pure: tests and the benchmark call it)."""
    bonus = RULE_WEIGHT * margin
    scores = {c: s + (bonus if c in rule_hits else 0.0) for c, s in similarity.items()}
    ranked = sorted(scores, key=lambda c: -scores[c])
    best, runner_up = ranked[0], ranked[1]
    lead = scores[best] - scores[runner_up]
    confidence = min(1.0, max(0.0, lead / (2 * margin))) if margin > 0 else 1.0
    by_sim = sorted(similarity, key=lambda c: -similarity[c])
    reasons = [f"rule: {_quoted(words)} → {c}" for c, words in rule_hits.items()]
    reasons.append(
        f"closest passage: {by_sim[0]} {similarity[by_sim[0]]:.2f} vs {by_sim[1]} {similarity[by_sim[1]]:.2f}"
    )
    routed = lead >= margin
    reasons.append(
        f"{best} leads by {lead:.2f} (≥ {margin:.2f}): search only {best}"
        if routed
        else f"{best} leads by {lead:.2f} (< {margin:.2f}): unsure, search everything"
    )
    return Route(
        "routed" if routed else "unsure",
        [best] if routed else [],
        best,
        confidence,
        {c: scores[c] for c in ranked},
        {c: similarity[c] for c in by_sim},
        rule_hits,
        reasons,
        list(notes or []),
    )


def route_and_search(
    question: str,
    settings: Settings,
    *,
    store: Store | None = None,
    embedder: Embedder | None = None,
    chosen: Sequence[str] | None = None,
    mode: str | None = None,
) -> tuple[Route, Retrieval]:
    """Route the question, then search the routed collections (everything when unsure)."""
    store = store or Store(settings.data_dir)
    embedder = embedder or embedder_for_store(settings, store.model_id())
    mode = mode or settings.retrieval_mode
    # Embedded once for both: the search needs it anyway in these modes (fts may not embed at all).
    vector = None
    if mode in ("dense", "hybrid"):
        with warming(store):  # a process's first question: LanceDB's indexes load beside the model
            vector = embed_query(embedder, question)
    decision = route(question, store, embedder, settings, chosen=chosen, vector=vector)
    retrieval = search(
        question,
        settings,
        store=store,
        embedder=embedder,
        collections=decision.collections or None,
        mode=mode,
        query_vector=vector,
    )
    return decision, retrieval
