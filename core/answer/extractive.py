"""Extractive answers: the author's own sentences from the retrieved chunks, unchanged.

    result = extract_answer(question, hits, embedder)
    result.text        # "From *<title>*:\n<the passage>" per post (at most two)
    result.sentences   # Quote(text, post_id, title, chunk_id, start, index, score, …), reading order

No model writes a word: every sentence is a verbatim slice of a hit's text
(`hit.text[q.start:q.start + len(q.text)]`), and the only other words are the fixed "From *<title>*:"
per post (the title escaped: text, not markup) and, where a passage goes on into the post's next
section, that section's heading, as the author wrote it.

Candidates are the sentences of the best MAX_HITS hits (chunks are split into lines first, so spec
lists and list items stand alone). Headings, date lines, "The dimensions:" lead-ins, fragments under
MIN_SENTENCE_WORDS words (core/text/words.py) and [REF: …]/[IMAGE: …] tags are never quoted
(core/answer/quotable.py). Each candidate is scored by a weighted sum, the weights being the model
profile's `scorer` (core/profiles), of

- its cosine with the question (the table's model: `embed` for sentences, the `query` form for the
  question), on the model's relevance scale, so one set of weights serves every model;
- the cosine of its chunk's heading ("<title>: <section>") with the question: a sentence alone rarely
  names its topic ("A dry fit is a test suite." answers "What did software teach her about joinery?"
  under "What code taught me about joinery");
- keyword coverage: the share of the question's words (lemmas) it contains, counted twice, once over
  content words (core/text/words.py STOPWORDS removed) and once keeping common verbs ("use", "start");
- the relevance of its hit, raised to that of the best hit of the same section (the chunker cuts a
  long section by size, so its second part answers as well as its first);
- its length in words (short sentences say one thing) and whether it asks (a question rarely answers).

A sentence right after a signpost, one that announces it ("His teaching method, as far as I can
reconstruct it, has three steps:", "Here is what I use now."), takes the signpost's similarity when
that is higher: the signpost names the topic, the sentence after it is the answer ("He does the thing
once, slowly, without explaining."). Likewise a sentence followed on its line by one too short to quote
alone ("Black cherry, $6.25 a board foot. My favorite indoor wood.") takes that one's similarity.

The answer is then a passage, the author's own words as written: the best-scored sentence with what
belongs to it, in the order written. A sentence that opens by pointing back ("This is why…", "He…",
"But…") brings the one before it; a line of a list brings the list's lead-in (the sentence just before
the list); then the sentences after it follow, across paragraph breaks and into the post's
next chunk when retrieval brought it, until MAX_WORDS. A second post's passage follows only when that
post's best sentence scores within the profile's `passage.second_post_gap` of the first and is no
near-duplicate of it (raw cosine below `passage.near_duplicate`). Nothing is glued across a gap: the
Markdown keeps the author's line and paragraph breaks.

`ExtractiveAnswer.best_similarity` is over every candidate, not only the picked ones: core/answer/abstain.py
uses it to decide whether anything retrieved answers the question at all.

How the weights and rules were chosen, with figures: docs/decisions.md, "The extractive answer is a
passage, not a collage".
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields

import numpy as np

from core.answer.quotable import lends_back, readable, sentence_units, share
from core.embed import Embedder, embed_query, passage_vectors, relevance_scale, rescale
from core.models import Hit
from core.profiles import Passage, profile_for
from core.text import UNDETERMINED, detect_language
from core.text.fragments import fragment_link
from core.text.labels import ENGLISH as ENGLISH_LABELS
from core.text.languages import ENGLISH, Language, language
from core.text.words import content_words, light_words

# Candidates: sentences of the best MAX_HITS hits; past MAX_CANDIDATES the ones with the best cheap
# score (coverage, heading, hit) are embedded, so one batch stays small (MiniLM: ~5 ms a sentence on
# 2 cores; e5 about 3× that).
MAX_HITS = 10
MAX_CANDIDATES = 64
# A passage's words at most; its best sentence is taken even when longer (core/answer/quotable.py:
# which sentences can be quoted at all).
MAX_WORDS = 100

# Warming the memo at start: at most this many texts (half the memo), embedded this many at a time.
WARM_UP_LIMIT = 25_000
WARM_UP_BATCH = 64

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]~$])")

# A passage's joins as Markdown: a list line on a line of its own (a hard break), a paragraph apart.
QUOTE_JOINS = {"space": " ", "line": "  \n", "paragraph": "\n\n"}
# The same joins in plain text (the HTTP API's passages, which a widget shows as text).
PLAIN_JOINS = {"space": " ", "line": "\n", "paragraph": "\n\n"}
FROM_POST = ENGLISH_LABELS["from_post"]  # each post's passage under "From {title}:"

# A sentence that announces the next one: a lead-in ending in a colon, or an opener of the language's
# ("Here is/are …": core/text/languages.py).
MIN_SIGNPOST_WORDS = 3
_WORD = re.compile(r"\w+")
_QUESTION_END = re.compile(r"""\?["'”’)\]]*$""")


@dataclass
class Quote:
    """One of the author's sentences, verbatim: `text == hit.text[start:start + len(text)]`."""

    text: str
    post_id: str
    title: str
    chunk_id: str
    start: int  # character offset in the chunk's text
    index: int  # position among the chunk's sentences (consecutive indexes: adjacent in the post)
    score: float
    similarity: float = 0.0  # to the question, on the model's relevance scale
    # How it follows the quote before it in the passage: "space" (the same line), "line" (the next line
    # of a list), "paragraph" (the next paragraph), "" (first of its passage).
    joined: str = ""
    url: str = ""  # the post's address on the blog ("" when unknown)
    # The heading of the post's section it opens, when the passage goes on into a new section ("" when
    # not): shown before it, the author's words, as the post shows it.
    section: str = ""

    @property
    def link(self) -> str:
        """The post's page opened at this sentence (a text-fragment link); "" without an address."""
        return fragment_link(self.url, self.text)

    @classmethod
    def from_json(cls, data: dict) -> Quote:
        """The quote `to_json` wrote; its derived "link" is left out, and where it sat in the chunk (not
        needed to show it, and missing from replies saved by older versions) defaults to nothing."""
        names = {f.name for f in fields(cls)}
        where = {"chunk_id": "", "start": 0, "index": 0, "score": 0.0}
        return cls(**where | {key: value for key, value in data.items() if key in names})

    def to_json(self) -> dict:
        return {
            "text": self.text,
            "post_id": self.post_id,
            "title": self.title,
            "chunk_id": self.chunk_id,
            "start": self.start,
            "index": self.index,
            "score": round(self.score, 4),
            "similarity": round(self.similarity, 4),
            "joined": self.joined,
            "url": self.url,
            "section": self.section,
            "link": self.link,
        }


@dataclass
class ExtractiveAnswer:
    """The picked sentences and what the no-answer gate needs to know about all candidates."""

    question: str
    sentences: list[Quote]  # reading order: post by post, then position in the post
    model_id: str = ""  # the embedder's, whose scale `best_similarity` is on
    best_similarity: float = 0.0  # the best candidate's similarity to the question (relevance scale)
    candidates: int = 0  # sentences scored
    seconds: float = 0.0

    @property
    def empty(self) -> bool:
        return not self.sentences

    @property
    def words(self) -> int:
        return sum(len(q.text.split()) for q in self.sentences)

    def groups(self) -> list[tuple[str, str, list[Quote]]]:
        """(post_id, title, quotes) per post, in reading order."""
        out: list[tuple[str, str, list[Quote]]] = []
        for quote in self.sentences:
            if out and out[-1][0] == quote.post_id:
                out[-1][2].append(quote)
            else:
                out.append((quote.post_id, quote.title, [quote]))
        return out

    def passages(self) -> list[tuple[str, str, str]]:
        """(post_id, title, passage) per post in reading order, the passage in plain text: the author's
        sentences joined as in `text`, a line break for a list line and a blank line between paragraphs."""
        return [
            (post_id, title, passage_text(quotes, PLAIN_JOINS)) for post_id, title, quotes in self.groups()
        ]

    @property
    def plain_text(self) -> str:
        """`plain` with the English frame."""
        return self.plain(FROM_POST)

    def plain(self, from_post: str = FROM_POST) -> str:
        """The answer as plain text, for clients that show text and not Markdown (the HTTP API's widget):
        each post's `from_post` frame ("From {title}:", the title exactly as the author wrote it) and its
        passage (`passages`)."""
        return "\n\n".join(f"{_framed(from_post, title)}\n{body}" for _, title, body in self.passages())

    @property
    def text(self) -> str:
        """`markdown` with the English frame."""
        return self.markdown(FROM_POST)

    def markdown(self, from_post: str = FROM_POST) -> str:
        """The answer as Markdown: each post's `from_post` frame ("From *<title>*:", the title in italics
        and shown literally by `markdown_literal`: a title is the post's data, not markup) and its passage.

        A passage keeps the author's layout: sentences of one line joined by a space, list lines by a
        line break, paragraphs by a blank line, and the heading of a section it goes on into, in bold.
        No other word is added.
        """
        blocks = []
        for _, title, quotes in self.groups():
            body = passage_text(quotes, QUOTE_JOINS, lambda heading: f"**{markdown_literal(heading)}**")
            blocks.append(f"{_framed(from_post, f'*{markdown_literal(title)}*')}\n{body}")
        return "\n\n".join(blocks)

    def to_json(self) -> dict:
        return {
            "question": self.question,
            "text": self.text,
            "sentences": [q.to_json() for q in self.sentences],
            "model_id": self.model_id,
            "best_similarity": round(self.best_similarity, 4),
            "candidates": self.candidates,
        }


def _framed(frame: str, title: str) -> str:
    """`frame` ("From {title}:", in the reader's language) with the title in its place."""
    head, _, tail = frame.partition("{title}")
    return head + title + tail


def passage_text(
    quotes: Sequence[Quote],
    joins: dict[str, str],
    heading: Callable[[str], str] = str,
    escape: Callable[[str], str] = str,
) -> str:
    """One post's quotes as the post lays them out, with `joins` ("space", "line", "paragraph" → the
    text between) and, a paragraph apart, the heading of each section the passage goes on into
    (`heading` formats it: bold in Markdown); `escape` is applied to each sentence and heading."""
    body = escape(quotes[0].text) if quotes else ""
    for quote in quotes[1:]:
        if quote.section:
            body += joins["paragraph"] + heading(escape(quote.section)) + joins["paragraph"]
        else:
            body += joins.get(quote.joined, " ")
        body += escape(quote.text)
    return body


def markdown_literal(text: str) -> str:
    """`text` as Markdown that renders as exactly that text: HTML's `& < >` as entities (inert even
    where a renderer passes HTML through) and a backslash before what would start emphasis, code, a
    link or an image, strikethrough or (Streamlit) math."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


# Selection ------------------------------------------------------------------------------------------


@dataclass
class _Unit:
    hit: int  # index into the hits
    index: int  # position among the hit's sentence units
    start: int
    text: str
    words: int
    readable: bool


def extract_answer(
    question: str,
    hits: Sequence[Hit],
    embedder: Embedder,
    *,
    max_words: int = MAX_WORDS,
    max_candidates: int = MAX_CANDIDATES,
    said: str = "",
) -> ExtractiveAnswer:
    """The author's sentences that best answer `question`, from `hits` (best first).

    Three embedding calls (the question, the chunks' headings, the candidates); no language model.
    No hits, or no readable sentence in them, gives an answer without sentences (`empty`). `said` is
    what the reader was already answered ("tell me more"): a sentence it holds starts no passage, unless
    no other sentence can (it may still come along as context).
    """
    started = time.perf_counter()
    units = _units(hits[:MAX_HITS])
    candidates = [i for i, u in enumerate(units) if u.readable]
    told = _word_string(said) if said else ""
    if told:
        candidates = [i for i in candidates if _word_string(units[i].text) not in told] or candidates
    if not candidates:
        return ExtractiveAnswer(question, [], embedder.model_id, seconds=time.perf_counter() - started)

    scale = relevance_scale(embedder.model_id)
    profile = profile_for(embedder.model_id)
    w = profile.scorer  # the score weights (docs/decisions.md says how they were chosen)
    # A question about the author in the third person ("Why did she quit?") is compared without those
    # words: the posts say "I", and "she" drew it away from the sentences that answer it.
    about = language(detect_language(question)).without_third_person(question)
    q_vector = embed_query(embedder, about)
    used = sorted({u.hit for u in units})
    # Sentences and headings of popular posts come back question after question: memoised.
    headings = passage_vectors.embed(embedder, [_heading(hits[h]) for h in used]) @ q_vector
    heading = {h: rescale(float(c), scale) for h, c in zip(used, headings, strict=True)}

    asked, asked_light = content_words(about), light_words(about)
    relevance = _section_relevance(hits[:MAX_HITS])
    cheap = np.array(
        [
            w.coverage * share(asked, content_words(units[i].text))
            + w.coverage_light * share(asked_light, light_words(units[i].text))
            + w.hit * relevance[units[i].hit]
            + w.heading * heading[units[i].hit]
            + w.length * min(units[i].words / 30, 2)
            + w.question * bool(_QUESTION_END.search(units[i].text))
            for i in candidates
        ]
    )
    if len(candidates) > max_candidates:
        # Too many to embed in time: keep the best by everything but similarity, in document order.
        keep = np.sort(np.argsort(-cheap, kind="stable")[:max_candidates])
        candidates, cheap = [candidates[k] for k in keep], cheap[keep]
    vectors = passage_vectors.embed(embedder, [units[i].text for i in candidates])
    position_of = {i: k for k, i in enumerate(candidates)}
    similarity = np.array([rescale(float(c), scale) for c in vectors @ q_vector])
    # A sentence announcing what follows ("His teaching method has three steps:") lends the next its
    # closeness to the question: the answer is what it announces.
    langs = chunk_languages(hits[:MAX_HITS])
    # A sentence lends its closeness to the question to the one it belongs with, when that is higher: a
    # signpost ("His teaching method has three steps:") to the sentence it announces, a sentence too short
    # to quote alone ("My favorite indoor wood.") to the one before it on its line, quoted with it.
    lenders = _lenders(units, hits[:MAX_HITS], langs)
    if lenders:
        lent = passage_vectors.embed(embedder, [units[i].text for i, _ in lenders]) @ q_vector
        for (_, receiver), cosine in zip(lenders, lent, strict=True):
            k = position_of.get(receiver)
            if k is not None:
                similarity[k] = max(similarity[k], rescale(float(cosine), scale))
    scores = cheap + w.similarity * similarity

    picked = _passages(
        units, hits[:MAX_HITS], langs, candidates, scores, vectors, max_words, profile.passage, told
    )
    quotes = []
    for n, i in enumerate(picked):
        unit, hit = units[i], hits[units[i].hit]
        k = position_of.get(i)
        before = picked[n - 1] if n and units[picked[n - 1]].hit == unit.hit else None
        joined = _join(hit.text, units[before], unit) if before is not None else ""
        section = ""
        previous = hits[units[picked[n - 1]].hit] if n else None
        if previous is not None and before is None and previous.post_id == hit.post_id:
            joined = "paragraph"  # the passage goes on into the post's next chunk
            if hit.section and hit.section != previous.section:
                section = hit.section  # … and into its next section, whose heading the reader sees
        quotes.append(
            Quote(
                unit.text,
                hit.post_id,
                hit.title,
                hit.chunk_id,
                unit.start,
                unit.index,
                float(scores[k]) if k is not None else 0.0,
                float(similarity[k]) if k is not None else 0.0,
                joined,
                hit.url,
                section,
            )
        )
    return ExtractiveAnswer(
        question,
        _reading_order(quotes),
        embedder.model_id,
        best_similarity=float(similarity.max()),
        candidates=len(candidates),
        seconds=time.perf_counter() - started,
    )


def chunk_languages(hits: Sequence[Hit]) -> list[Language]:
    """Each hit's language record, its sentence openers are read by ("Das ist…" leans back, "Voici…"
    announces): the chunk's own language, or, for a chunk too short to tell, that of all the hits."""
    found = [detect_language(hit.text) for hit in hits]
    if UNDETERMINED in found:
        together = detect_language(" ".join(hit.text for hit in hits))
        found = [together if code == UNDETERMINED else code for code in found]
    return [language(code) for code in found]


def _section_relevance(hits: Sequence[Hit]) -> list[float]:
    """Each hit's relevance, raised to the best of its section's hits: the chunker cuts a long section
    where its token budget runs out, not where the topic changes, so the part after the cut belongs to
    the question as much as the part the search ranked first."""
    best: dict[tuple[str, str], float] = {}
    for hit in hits:
        key = (hit.post_id, hit.section)
        best[key] = max(best.get(key, 0.0), float(hit.relevance))
    return [best[(hit.post_id, hit.section)] for hit in hits]


def is_signpost(sentence: str, lang: Language = ENGLISH) -> bool:
    """Whether the sentence announces the one after it: a lead-in ending in a colon ("His teaching
    method, as far as I can reconstruct it, has three steps:") or "Here is/are …" ("Here is what I use
    now."), in the language of `lang` (core/text/languages.py). Fewer than MIN_SIGNPOST_WORDS words
    ("Height:", "My rule:") announce nothing to match."""
    sentence = sentence.strip()
    if len(sentence.split()) < MIN_SIGNPOST_WORDS:
        return False
    return sentence.endswith(":") or lang.announces(sentence)


def _lenders(units: list[_Unit], hits: Sequence[Hit], langs: Sequence[Language]) -> list[tuple[int, int]]:
    """(lender, receiver) unit indexes: each signpost and the next unit of its chunk, and each sentence
    that `lends_back` and the readable unit before it on its line (`_lent_to`)."""
    pairs = [
        (i, i + 1)
        for i, unit in enumerate(units[:-1])
        if units[i + 1].hit == unit.hit and is_signpost(unit.text, langs[unit.hit])
    ]
    return pairs + [(i, host) for i, host in enumerate(_lent_to(units, hits)) if host is not None]


def _lent_to(units: Sequence[_Unit], hits: Sequence[Hit]) -> list[int | None]:
    """For each unit that `lends_back`, the readable unit before it on the same line of its chunk (the
    one it is read with); None for the others and for one with no readable unit before it there."""
    out: list[int | None] = [None] * len(units)
    for i, unit in enumerate(units):
        if unit.readable or not lends_back(unit.text):
            continue
        text = hits[unit.hit].text
        j = i - 1
        while j >= 0 and units[j].hit == unit.hit and "\n" not in text[units[j].start : unit.start]:
            if units[j].readable:
                out[i] = j
                break
            j -= 1
    return out


def _heading(hit: Hit) -> str:
    return heading_text(hit.title, hit.section)


def heading_text(title: str, section: str) -> str:
    return f"{title}: {section}" if section and section != title else title


def warm_up(
    chunks: Iterable[dict],
    embedder: Embedder,
    *,
    limit: int = WARM_UP_LIMIT,
    stop: Callable[[], bool] | None = None,
) -> int:
    """Embed (into the process's memo) the sentences and headings answers would quote from `chunks`
    (rows with text, title, section), so the first readers' answers need only their question's
    vector. At most `limit` texts, in the order given; `stop()` is asked between batches (a process
    shutting down must not leave a thread inside the model). Returns how many were embedded or found."""
    texts: dict[str, None] = {}
    for chunk in chunks:
        lang = language(detect_language(chunk.get("text") or ""))
        texts[heading_text(chunk.get("title") or "", chunk.get("section") or "")] = None
        texts.update(
            dict.fromkeys(
                s for _, s in sentence_units(chunk.get("text") or "") if readable(s) or is_signpost(s, lang)
            )
        )
        if len(texts) >= limit:
            break
    batch = list(texts)[:limit]
    for start in range(0, len(batch), WARM_UP_BATCH):  # small batches: readers may be waiting too
        if stop is not None and stop():
            return start
        passage_vectors.embed(embedder, batch[start : start + WARM_UP_BATCH])
    return len(batch)


def _word_string(text: str) -> str:
    """The text's words, lower case, one space apart, with spaces at both ends: a sentence was said
    when its word string is inside the answer's, whatever Markdown escapes or line breaks it had."""
    return f" {' '.join(_WORD.findall(text.casefold()))} "


def _units(hits: Sequence[Hit]) -> list[_Unit]:
    """Every sentence unit of the hits; a readable sentence already seen in a better hit (overlapping
    fixed-size chunks) is kept as context but not quoted twice."""
    out: list[_Unit] = []
    seen: set[str] = set()
    for h, hit in enumerate(hits):
        for i, (start, text) in enumerate(sentence_units(hit.text)):
            key = " ".join(text.split()).casefold()
            ok = readable(text) and key not in seen
            seen.add(key)
            out.append(_Unit(h, i, start, text, len(text.split()), ok))
    return out


def _passages(
    units: list[_Unit],
    hits: Sequence[Hit],
    langs: Sequence[Language],
    candidates: list[int],
    scores: np.ndarray,
    vectors: np.ndarray,
    max_words: int,
    rule: Passage,
    told: str = "",
) -> list[int]:
    """Unit indexes of the answer: the passage around the best-scored sentence that has one (`_passage`
    may be empty), then, when another post's best sentence scores within `rule.second_post_gap` of it
    and says something else (cosine below `rule.near_duplicate`), that post's passage too, each at most
    `max_words` words (the best sentence alone may pass it). `told`: what the reader was already given
    (`_word_string`)."""
    order = [int(k) for k in np.argsort(-scores, kind="stable")]
    picked: list[int] = []
    first = -1  # the first passage's best sentence (a signpost with nothing after it starts none)
    for k in order:
        i = candidates[k]
        if first < 0:
            picked = _passage(units, hits, langs, i, max_words, told)
            first = k if picked else -1
            continue
        if scores[k] < scores[first] - rule.second_post_gap:
            break
        if (
            hits[units[i].hit].post_id == hits[units[candidates[first]].hit].post_id
            or float(vectors[k] @ vectors[first]) >= rule.near_duplicate
        ):
            continue
        more = _passage(units, hits, langs, i, max_words, told)
        if more:
            picked += more
            break
    return picked


def _passage(
    units: list[_Unit],
    hits: Sequence[Hit],
    langs: Sequence[Language],
    anchor: int,
    max_words: int,
    told: str = "",
) -> list[int]:
    """The sentences that belong with `anchor`, in the order written: the sentence it continues (an
    opener that points back: "This is why…"); in a list (a paragraph of several lines), the start of
    its line and the list's lead-in (the sentence just before the list); then the sentences
    after it, in its chunk and the post's next chunks among `hits`, while they fit in `max_words`, up
    to the first the reader was already given (in `told`: "tell me more" does not run into the last
    answer). It never ends on a signpost (a list's lead-in cut off from its list): one that would
    is cut before it, and may be left empty."""
    hit = units[anchor].hit
    text = hits[hit].text
    own = [j for j, u in enumerate(units) if u.hit == hit]  # the chunk's units, in order

    def paragraph(j: int) -> int:
        return text.count("\n\n", 0, units[j].start)

    def line(j: int) -> int:
        return text.count("\n", 0, units[j].start)

    at = own.index(anchor)
    first = at
    if (
        at
        and paragraph(own[at - 1]) == paragraph(anchor)
        and (
            langs[hit].leans_back(units[anchor].text)
            or langs[hit].takes_up(units[anchor].text, units[own[at - 1]].text)
        )
    ):
        first = at - 1
    in_paragraph = [j for j in own if paragraph(j) == paragraph(anchor)]
    is_list = len({line(j) for j in in_paragraph}) > 1
    if is_list:  # a list line is read from its start: "A pin-type moisture meter. The single most…"
        while first and line(own[first - 1]) == line(anchor):
            first -= 1
    take = own[first : at + 1]
    lead = own.index(in_paragraph[0]) - 1
    announced = (
        lead >= 0 and (is_list or first == lead + 1) and is_signpost(units[own[lead]].text, langs[hit])
    )
    if announced or (lead >= 0 and is_list and units[own[lead]].readable):
        # A list's lead-in ("My sawmill kit fits in a canvas bag:", "I buy from three mills.") says what
        # the list is about, so a line never stands alone; a paragraph announced by a signpost keeps it.
        take.insert(0, own[lead])
    words = sum(units[j].words for j in take)
    following = own[at + 1 :]
    # The chunker cuts a post by size, not by sense: past the chunk's end the passage goes on into the
    # post's next chunk when retrieval brought it too.
    for later in _next_chunks(hits, hit):
        following += [j for j, u in enumerate(units) if u.hit == later]
    seen = {" ".join(units[j].text.split()) for j in take}
    for j in following:
        key = " ".join(units[j].text.split())
        if key in seen:  # overlapping chunks (the fixed-size chunker) repeat a few sentences
            continue
        if words + units[j].words > max_words or (told and _word_string(units[j].text) in told):
            break
        take.append(j)
        seen.add(key)
        words += units[j].words
    # A passage never ends on what announces the rest ("… prices for air-dried stock:"): cut off by the
    # budget, by the chunk's end or by what was already said, the lead-in alone says nothing.
    while take and is_signpost(units[take[-1]].text, langs[units[take[-1]].hit]):
        take.pop()
    return take


def _next_chunks(hits: Sequence[Hit], h: int) -> list[int]:
    """The hits that continue hit `h` in its post, in order: chunk ids end in a zero-padded index
    (core/chunk/chunker.py), and the run stops at the first chunk retrieval did not bring."""
    by_id = {hit.chunk_id: n for n, hit in enumerate(hits)}
    out: list[int] = []
    stem, _, index = hits[h].chunk_id.rpartition("#")
    while index.isdigit():
        index = f"{int(index) + 1:0{len(index)}d}"
        n = by_id.get(f"{stem}#{index}")
        if n is None:
            break
        out.append(n)
    return out


def _join(text: str, before: _Unit, unit: _Unit) -> str:
    """How `unit` follows `before` in the chunk's text: on the same line, the next line, or a later
    paragraph."""
    gap = text[before.start + len(before.text) : unit.start]
    if "\n\n" in gap:
        return "paragraph"
    return "line" if "\n" in gap else "space"


def _reading_order(quotes: list[Quote]) -> list[Quote]:
    """Posts in order of their best quote's score; in a post, by chunk, then position in the chunk.

    core/chunk/chunker.py's chunk ids end in a zero-padded index ("post#0003"), so they sort in post order.
    """
    best: dict[str, float] = {}
    for q in quotes:
        best[q.post_id] = max(best.get(q.post_id, q.score), q.score)
    return sorted(quotes, key=lambda q: (-best[q.post_id], q.post_id, q.chunk_id, q.index))
