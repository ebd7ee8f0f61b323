"""Readers' questions grouped into topics, for "asked but not written about": each topic named by its
most telling words, counted, with three example questions and the closest existing post (if one is
related at all).

    topics = find_topics(questions, embedder, store=store)   # questions: texts, newest first
    topics[0].name, topics[0].count, topics[0].examples, topics[0].closest, topics[0].draft()

Grouping: the questions' vectors (the table's embedder, `query` form) are clustered by average
linkage, merging while two groups' mean cosine similarity is at least `threshold` (every pair of
questions across them counts, so one stray question cannot chain two themes together as single linkage
would). The default is the model profile's `topics_merge`, a relevance on the model's scale, chosen per
model on data/eval-topics/questions.jsonl (docs/readers.md has the figures).
Identical questions (ignoring case and punctuation) are embedded once and counted each time, and a
question's vector is kept for the next grouping in the process (`question_vectors`) and, given the
question log, in the log's `question_vectors` table (core/store/questions.py), so a new question costs
one embedding, not the whole set's, even after a restart.

Naming is c-TF-IDF-like: a word scores by its share of the group's words times log(1 + A / its count in
all groups), A the mean number of words per group, so words every topic shares ("how", "best") sink and
the group's own rise; function words of every language the questions are in are left out (the
`stop-words` lists, core/text/function_words.py), and words are counted by stem, shown as their most
common form.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import regex

from core.embed import Embedder, VectorMemo, normalise_rows, relevance_scale, rescale
from core.profiles import profile_for
from core.search.floor import bar_for_table
from core.search.posts import post_vectors
from core.store import Store, StoreError
from core.store.questions import LoggedQuestion, QuestionLog
from core.text import detect_language, function_words, languages_differ, stemmer_for
from core.text.words import QUESTION_FILLER

# Average linkage is quadratic in memory and cubic in time: at most this many distinct questions (the
# newest) are grouped, about a second on two cores.
MAX_QUESTIONS = 1500
# The questions' vectors, kept for the next grouping in this process: the Readers page groups again on
# each new question or period, and embedding 1,500 questions anew took ~15 s of its load on 2 cores.
question_vectors = VectorMemo(2 * MAX_QUESTIONS, queries=True)
NAME_WORDS = 3
# The longest word that may name a topic: past it a run of letters is a key held down or a pasted blob,
# not a word (German compounds stay under it), and named a topic in one unbroken line across the page.
MAX_NAME_WORD = 50
EXAMPLES = 3
# Function words are removed for these languages always (a short question's language is often a guess).
BASE_LANGUAGES = ("en", "fr", "de", "es", "it", "pt", "nl")
# Words of asking rather than of a topic: QUESTION_FILLER and, beyond it, words content_words keeps (a
# question may be about the blog itself) that never name a topic of questions. The stop-word lists
# already hold the rest ("please", "best", "know").
ASKING_WORDS = QUESTION_FILLER | frozenset(
    {
        "advice",
        "article",
        "blog",
        "post",
        "posts",
        "question",
        "questions",
        "recommend",
        "recommendation",
        "tips",
        "write",
        "written",
        "wrote",
    }
)
# Not words.LETTER_WORD: keeps combining marks (Devanagari, Thai) and hyphenated compounds whole.
_WORD = regex.compile(r"\p{L}[\p{L}\p{M}'’-]*")


@dataclass(frozen=True)
class ClosestPost:
    post_id: str
    title: str
    relevance: float  # the best chunk's similarity to the topic's centre, on the model's relevance scale

    def to_json(self) -> dict:
        return {"post_id": self.post_id, "title": self.title, "relevance": round(self.relevance, 3)}


@dataclass
class Topic:
    """A group of questions: `questions` distinct, most central first; `count` with repeats."""

    name: str
    words: list[str]
    questions: list[str]
    count: int
    closest: ClosestPost | None = None
    centre: np.ndarray | None = field(default=None, repr=False)

    @property
    def examples(self) -> list[str]:
        return self.questions[:EXAMPLES]

    def draft(self) -> str:
        """A note for the author: the topic and the questions readers asked about it, as a list."""
        lines = [f"# {self.name}", "", f"Readers asked {self.count} time{'s' * (self.count != 1)}:", ""]
        lines += [f"- {q}" for q in self.questions]
        if self.closest is not None:
            lines += ["", f"Closest post so far: {self.closest.title} ({self.closest.post_id})"]
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "words": self.words,
            "count": self.count,
            "examples": self.examples,
            "questions": self.questions,
            "closest_post": self.closest.to_json() if self.closest else None,
        }


def normalised(question: str) -> str:
    """The question as compared for repeats: words only, lower case."""
    return " ".join(_WORD.findall(question.casefold()))


def average_linkage(vectors: np.ndarray, threshold: float) -> list[list[int]]:
    """Groups of row indices of unit `vectors`, merged by average linkage while two groups' mean cosine
    similarity is at least `threshold`; biggest group first, each group's indices ascending. Each step
    merges the most similar pair (the first row, then column, among equals).

    Each row's best partner is kept, so a step costs O(n), not a scan of the whole n×n matrix: with the
    Readers page's 1,500 questions that scan was most of the grouping's seconds (O(n³) in all)."""
    n = len(vectors)
    if n == 0:
        return []
    sim = (vectors @ vectors.T).astype(np.float64)
    np.fill_diagonal(sim, -np.inf)
    sizes = np.ones(n)
    members: list[list[int]] = [[i] for i in range(n)]
    alive = np.ones(n, dtype=bool)
    best = np.argmax(sim, axis=1)  # each row's most similar group (the first among equals)
    best_sim = sim[np.arange(n), best]
    for _ in range(n - 1):
        i = int(np.argmax(best_sim))
        j = int(best[i])
        if best_sim[i] < threshold:
            break
        # The merged group's mean similarity to every other group: the size-weighted mean of the two.
        merged = (sizes[i] * sim[i] + sizes[j] * sim[j]) / (sizes[i] + sizes[j])
        sim[i], sim[:, i] = merged, merged
        sim[j], sim[:, j] = -np.inf, -np.inf
        sim[i, i] = -np.inf
        sizes[i] += sizes[j]
        members[i] += members[j]
        alive[j] = False
        best_sim[j] = -np.inf
        # Rows whose best partner was i or j (and i itself) are searched again; any other row's best is
        # its old one or the merged group, whichever is higher (the lower column among equals).
        stale = alive & ((best == i) | (best == j))
        stale[i] = True
        merged = sim[:, i]
        gains = alive & ~stale & ((merged > best_sim) | ((merged == best_sim) & (best > i)))
        best[gains], best_sim[gains] = i, merged[gains]
        rows = np.flatnonzero(stale)
        best[rows] = np.argmax(sim[rows], axis=1)
        best_sim[rows] = sim[rows, best[rows]]
    groups = [sorted(members[i]) for i in np.flatnonzero(alive)]
    return sorted(groups, key=lambda g: (-len(g), g[0]))


def _terms(question: str, stop: frozenset[str]) -> list[tuple[str, str]]:
    """The question's telling words as (stem, surface form), each once."""
    stem = stemmer_for(detect_language(question)) or (lambda w: w)
    seen: dict[str, str] = {}
    for word in _WORD.findall(question.casefold()):
        word = word.strip("'’-")
        if not 3 <= len(word) <= MAX_NAME_WORD or word in stop or word in ASKING_WORDS:
            continue
        seen.setdefault(stem(word), word)
    return list(seen.items())


def name_groups(groups: Sequence[Sequence[str]], words: int = NAME_WORDS) -> list[list[str]]:
    """Each group's most telling words (c-TF-IDF over the groups), best first."""
    languages = set(BASE_LANGUAGES) | {detect_language(q) for g in groups for q in g}
    stop = frozenset().union(*(function_words(lang) for lang in languages))
    counts: list[Counter[str]] = []
    forms: dict[str, Counter[str]] = {}
    for group in groups:
        count: Counter[str] = Counter()
        for question in group:
            for stem, form in _terms(question, stop):
                count[stem] += 1
                forms.setdefault(stem, Counter())[form] += 1
        counts.append(count)
    overall: Counter[str] = sum(counts, Counter())
    mean_words = max(1.0, sum(overall.values()) / max(1, len(groups)))
    names = []
    for group, count in zip(groups, counts, strict=True):
        total = max(1, sum(count.values()))
        floor = 2 if len(group) >= 3 else 1  # a word of one question alone does not name a group
        scored = [
            (c / total * math.log(1 + mean_words / overall[stem]), stem)
            for stem, c in count.items()
            if c >= floor
        ] or [(c / total, stem) for stem, c in count.items()]
        scored.sort(key=lambda x: (-x[0], x[1]))
        # Questions stemmed in different languages (or too short to tell) can give one word two stems:
        # each form once ("farine · seigle", not "farine · seigle · seigle").
        shown = dict.fromkeys(forms[stem].most_common(1)[0][0] for _, stem in scored)
        names.append(list(shown)[:words])
    return names


def find_topics(
    questions: Sequence[str],
    embedder: Embedder,
    *,
    store: Store | None = None,
    threshold: float | None = None,
    min_count: int = 1,
    log: QuestionLog | None = None,
) -> list[Topic]:
    """The questions (newest first) grouped into topics, most asked first; topics asked fewer than
    `min_count` times are left out; `threshold` None: the model's (its profile's `topics_merge`). With a
    `store`, each topic gets its closest post (None without posts, when the table's vectors come from
    another model than `embedder`, or when no chunk reaches the model's `supported` relevance: an
    unrelated post). With the question `log`, vectors it kept are read and the new ones kept there, so
    a grouping after a restart embeds only questions not grouped before."""
    distinct: dict[str, str] = {}
    repeats: Counter[str] = Counter()
    for question in questions:
        key = normalised(question)
        if not key:
            continue
        repeats[key] += 1
        if key not in distinct and len(distinct) < MAX_QUESTIONS:
            distinct[key] = question.strip()
    keys = list(distinct)
    if not keys:
        return []
    vectors = _question_vectors([distinct[k] for k in keys], embedder, log)
    low, high = relevance_scale(embedder.model_id)
    if threshold is None:
        threshold = profile_for(embedder.model_id).topics_merge
    groups = average_linkage(vectors, low + threshold * (high - low))  # the threshold is a relevance
    texts = [[distinct[keys[i]] for i in group] for group in groups]
    names = name_groups(texts)
    topics = []
    for group, name in zip(groups, names, strict=True):
        block = vectors[group]
        centre = normalise_rows(block.mean(axis=0, keepdims=True))[0]
        order = np.argsort(-(block @ centre), kind="stable")  # most central first
        count = sum(repeats[keys[i]] for i in group)
        if count < min_count:
            continue
        topics.append(
            Topic(
                name=" · ".join(name) or _shortened(distinct[keys[group[0]]]),
                words=name,
                questions=[distinct[keys[group[k]]] for k in order.tolist()],
                count=count,
                centre=centre,
            )
        )
    topics.sort(key=lambda t: -t.count)
    if store is not None:
        _add_closest(topics, store, embedder)
    return topics


def _question_vectors(texts: list[str], embedder: Embedder, log: QuestionLog | None) -> np.ndarray:
    """Unit vectors of `texts` (the `query` form): from this process's memo, else the log's kept
    vectors, else embedded (and then kept in the log)."""
    if log is None:
        return normalise_rows(question_vectors.embed(embedder, texts))
    # The log's vectors go into the memo, so the memo embeds only the texts neither holds.
    missing = [t for t in texts if not question_vectors.holds(embedder, t)]
    kept = log.vectors(embedder.model_id, missing) if missing else {}
    question_vectors.put(embedder, list(kept), np.array(list(kept.values())))
    new = [t for t in missing if t not in kept]
    vectors = normalise_rows(question_vectors.embed(embedder, texts))
    if new:
        index = {text: i for i, text in enumerate(texts)}
        log.keep_vectors(embedder.model_id, new, vectors[[index[t] for t in new]])
    return vectors


def _shortened(question: str, limit: int = MAX_NAME_WORD) -> str:
    """A question as a topic's name when no word names it: at most `limit` characters, "…" when cut."""
    return question if len(question) <= limit else question[: limit - 1].rstrip() + "…"


def _add_closest(topics: list[Topic], store: Store, embedder: Embedder) -> None:
    """Each topic's closest post: the post of the chunk nearest the topic's centre, if that chunk's
    relevance reaches the bar's `similarity` on this table (core/search/floor.py); below it `closest`
    stays None."""
    try:
        store.check_model(embedder.model_id)
        views = post_vectors(store)
    except StoreError:
        return
    if not views.post_ids or not len(views.chunk_vectors):
        return
    scale = relevance_scale(embedder.model_id)
    # The relevance that answers with no word checked (a topic has no question words to check): a post
    # that close could answer the topic. Below it the nearest post is just the least unrelated
    # (chickens → a trestle table, or → bees on a small blog whose bar sits low), which misleads the author.
    floor = bar_for_table(store, embedder).similarity
    chunks = np.asarray(views.chunk_vectors, dtype=np.float32)
    for topic in topics:
        if topic.centre is None:
            continue
        similarities = chunks @ topic.centre
        best = int(np.argmax(similarities))
        relevance = rescale(float(similarities[best]), scale)
        if relevance < floor:
            continue
        post = int(views.chunk_post[best])
        topic.closest = ClosestPost(views.post_ids[post], views.titles[post], relevance)


def split_unread(
    rows: Sequence[LoggedQuestion], posts_language: str | None, reads_across: bool
) -> tuple[list[LoggedQuestion], Counter[str]]:
    """The unanswered rows that are about something the posts lack, and how many were declined only
    because the table cannot read their language, per language: a question in another language than the
    posts, declined, when the table's model does not read across languages and nothing translates
    (`reads_across` False). Those readers got "I can't read questions in …", not "I haven't written about
    that", so they say nothing about what the posts lack. Rated-down answers always count as unanswered."""
    about: list[LoggedQuestion] = []
    unread: Counter[str] = Counter()
    for row in rows:
        if not row.unanswered:
            continue
        if (
            row.declined
            and not reads_across
            and posts_language
            and languages_differ(row.language or "und", posts_language)
        ):
            unread[row.language] += 1
        else:
            about.append(row)
    return about, unread
