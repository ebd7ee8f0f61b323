"""One question, one reply: the author's own sentences, a generated answer, or an honest "I haven't
written about that".

    r = reply(question, hits, settings, embedder, history=turns)   # hits: retrieval's, best first
    for delta in r: ...        # the reader-facing text as it comes (at once unless generated)
    r.mode                     # "extractive" | "generative" | "none" (nothing retrieved answers it)
    r.text, r.quotes, r.sources, r.suggestions, r.stream (generative), r.to_json()

Modes (`settings.answer_mode`, or `mode=` per call): "extractive" quotes the author's sentences that
best answer the question (core/answer/extractive.py; no model writes a word), "generative" lets the
chat model answer from the excerpts (core/answer/generate.py), "auto" (default) is extractive with the
built-in model, whose answers invent details, and generative with an OpenAI key or server.

With the default "auto" grounding, a generated answer the grounding check could not read (the question
in another language than the posts, with an English-only embedding model) is not generated: the reply
quotes the author instead.

When the model cannot answer before it has written a sentence (its server is down or unreachable,
refuses the request, fails), the reply quotes the author instead (`fallback` holds the error, and
`fallback_note` a sentence for the reader saying why the author's own words are quoted); an answer
stopped on purpose (LLMError kind "cancelled") or cut off mid-way still raises.

In every mode the question must first clear the relevance bar (core/answer/abstain.py): when nothing
retrieved answers it, the reader gets a fixed reply in the author's voice, in the question's language,
and the closest posts as suggestions; no model is called. A question the bar turns away that the
embedding model could not read (another language than the English posts, an English-only model, no
translation) gets "I can't read questions in <language> yet" instead, and the owner a note on how to
enable it (`owner_note`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from core.answer.abstain import Suggestion, Verdict, judge
from core.answer.extractive import ExtractiveAnswer, Quote, extract_answer
from core.answer.generate import AnswerStream, Source, answer, sources_of
from core.answer.grounding import Grounding, SentenceSupport, excerpts_language, unreadable
from core.answer.question import FollowUp, answers_since_question
from core.config import ANSWER_MODES, Settings
from core.embed import Embedder, cross_lingual
from core.llm import LLMError
from core.models import Hit
from core.profiles import Bar
from core.text import UNDETERMINED, detect_language, language_name, languages_differ
from core.text.fragments import fragment_link
from core.text.languages import REPLY_LANGUAGES
from core.text.languages import language as record_of

# The fixed replies, per question language (English when the language is not listed or not known).
# A fixed sentence is the author's frame, not a claim about the world, so translating it invents nothing.
# The strings live in the language records (core/text/languages.py).
NO_ANSWER = {code: record_of(code).no_answer for code in REPLY_LANGUAGES}
# When the question is in a language the table's embedding model cannot compare with the posts' (an
# English-only model) and nothing translated it: saying "I haven't written about that" would be false.
CANNOT_READ = {code: record_of(code).cannot_read for code in REPLY_LANGUAGES}
# The same on a blog not written in English ("please ask in the language my posts are written in").
CANNOT_READ_OTHER = {code: record_of(code).cannot_read_other for code in REPLY_LANGUAGES}
# For the owner (never shown to readers): how to let the blog read such questions.
CANNOT_READ_HELP = (
    "questions in {language} cannot be compared with {posts} posts by {model}: re-embed with "
    "`inkwell reembed --embed-model multilingual-e5-small`, or configure an answer model "
    "(OPENAI_API_KEY or OPENAI_BASE_URL) so questions are translated first"
)
CLOSEST = {code: record_of(code).closest for code in REPLY_LANGUAGES}

# The note under a reply that quotes the author because the model could not answer. It names no
# server and quotes no error: public readers see it.
UNREACHABLE_NOTE = "The answer model could not be reached, so these are the author's own words, quoted."
FAILED_NOTE = "The answer model could not answer just now, so these are the author's own words, quoted."
UNREACHABLE_KINDS = frozenset({"connection", "timeout", "builtin"})


def resolve_mode(settings: Settings, mode: str | None = None) -> str:
    """ "extractive" or "generative" for `mode` (or settings.answer_mode); "auto" picks by the model."""
    chosen = (mode or settings.answer_mode).strip().lower()
    if chosen not in ANSWER_MODES:
        raise ValueError(f"answer mode must be one of {', '.join(ANSWER_MODES)}, not {chosen!r}")
    if chosen == "auto":
        return "extractive" if settings.uses_builtin_llm else "generative"
    return chosen


def phrase(table: dict[str, str], question: str) -> str:
    return table.get(detect_language(question), table["en"])


def decline_replies(settings: Settings) -> dict[str, str]:
    """The fixed "haven't written about that" replies by question language: the owner's own text
    (`settings.decline_text`) takes the place of the built-in one in the language it is written in
    (English when that cannot be told), so readers asking in that language get the author's words."""
    own = settings.decline_text.strip()
    if not own:
        return NO_ANSWER
    language = detect_language(own)
    return {**NO_ANSWER, ("en" if language == UNDETERMINED else language): own}


@dataclass
class Reply:
    """What the reader gets for one question. Iterate for the text; `text` holds it afterwards."""

    question: str
    mode: str  # extractive | generative | none
    verdict: Verdict
    hits: list[Hit]  # what retrieval passed, best first
    extracted: ExtractiveAnswer | None = None
    stream: AnswerStream | None = None
    text: str = ""
    suggestions: list[Suggestion] = field(default_factory=list)  # closest posts, with no answer
    seconds: float = 0.0  # from the call to the whole text, retrieval not included
    fallback: LLMError | None = None  # why a generative reply quotes the author instead
    owner_note: str = ""  # for the owner only: what would let the blog answer (e.g. read the language)
    _started: float = field(default=0.0, repr=False)

    @property
    def fallback_note(self) -> str:
        """For the reader, when the reply fell back to quoting: that the model could not answer. "" else."""
        if self.fallback is None:
            return ""
        return UNREACHABLE_NOTE if self.fallback.kind in UNREACHABLE_KINDS else FAILED_NOTE

    @property
    def quotes(self) -> list[Quote]:
        return self.extracted.sentences if self.extracted and self.mode == "extractive" else []

    @property
    def used_hits(self) -> list[Hit]:
        """The excerpts the answer was made from (none for a "haven't written about that")."""
        if self.mode == "generative" and self.stream is not None:
            return self.stream.used_hits
        if self.mode == "extractive":
            used = {q.chunk_id for q in self.quotes}
            return [h for h in self.hits if h.chunk_id in used]
        return []

    @property
    def sources(self) -> list[Source]:
        """The cited posts, best first; a quoted reply's each with a link opening its quoted sentences."""
        if self.mode == "generative" and self.stream is not None:
            return self.stream.sources
        sources = sources_of(self.used_hits)
        for source in sources:
            quoted = [q.text for q in self.quotes if q.post_id == source.post_id]
            source.link = fragment_link(source.url, quoted)
        return sources

    @property
    def plain_text(self) -> str:
        """`text` for clients that show plain text: a quoted answer without its Markdown (titles as
        written, no escapes or emphasis); any other reply is plain already (the fixed replies, or the
        model's words, which are shown as they are)."""
        if self.mode == "extractive" and self.extracted is not None:
            return self.extracted.plain_text
        return self.text

    @property
    def called_model(self) -> bool:
        return bool(self.stream is not None and self.stream.called_model)

    @property
    def truncated(self) -> bool:
        return bool(self.stream is not None and self.stream.truncated)

    @property
    def grounding(self) -> Grounding | None:
        """The generated answer's grounding check (None for quotes and for no answer)."""
        return self.stream.grounding if self.stream is not None else None

    @property
    def declined(self) -> bool:
        """A generated answer of which nothing could be shown (the reader got a fixed message instead)."""
        return bool(self.stream is not None and self.stream.declined)

    @property
    def dropped(self) -> list[SentenceSupport]:
        """Generated sentences strict grounding left out."""
        return list(self.stream.dropped) if self.stream is not None else []

    def __iter__(self) -> Iterator[str]:
        if self.mode == "generative" and self.stream is not None:
            failed: LLMError | None = None
            try:
                yield from self.stream
            except LLMError as err:
                if not self._may_fall_back(err):
                    raise
                failed = err
            finally:
                self.text = self.stream.text
                self.seconds = time.perf_counter() - self._started
            if failed is None:
                return
            self._fall_back(failed)
        self.seconds = time.perf_counter() - self._started
        if self.text:
            yield self.text

    def _may_fall_back(self, err: LLMError) -> bool:
        """Whether the author can be quoted instead: nothing generated was shown yet, the answer was not
        stopped on purpose, and there are sentences to quote."""
        assert self.stream is not None
        quotable = self.extracted is not None and not self.extracted.empty
        return quotable and err.kind != "cancelled" and not self.stream.text.strip()

    def _fall_back(self, err: LLMError) -> None:
        assert self.extracted is not None
        self.mode, self.fallback, self.text = "extractive", err, self.extracted.text

    def to_json(self) -> dict:
        return {
            "answer_mode": self.mode,
            "answer": self.text,
            "sentences": [q.to_json() for q in self.quotes],
            "sources": [s.to_json() for s in self.sources],
            "suggestions": [s.to_json() for s in self.suggestions],
            "relevance_bar": self.verdict.to_json(),
            "seconds": round(self.seconds, 3),
            "fallback": self.fallback_json(),
            **({"owner_note": self.owner_note} if self.owner_note else {}),
        }

    def fallback_json(self) -> dict | None:
        """Why the reply quotes instead of generating (the error names the server: not for the public)."""
        if self.fallback is None:
            return None
        return {
            "from": "generative",
            "kind": self.fallback.kind,
            "error": self.fallback.message,
            "note": self.fallback_note,
        }


def reply(
    question: str,
    hits: Sequence[Hit],
    settings: Settings,
    embedder: Embedder,
    *,
    history: list[dict] | None = None,
    mode: str | None = None,
    query: str | None = None,
    bar: Bar | None = None,
    follow_up: FollowUp = "",
) -> Reply:
    """Decide how to answer `question` from `hits` and prepare the reply (a generated one streams when
    iterated). The extractive candidates are scored in every mode: they are what the relevance bar is
    judged on.

    `query` is what was searched for when it differs from the question (a follow-up made standalone, a
    translation): sentences are scored and the bar judged against it; the model still sees the question
    (and `history`), and a fixed reply is in the question's language. `bar` is the relevance bar on the
    table's floor (`bar_for_table`; None: the model profile's as it is).
    """
    started = time.perf_counter()
    hits = list(hits)
    chosen = resolve_mode(settings, mode)
    searched = query if query and query.strip() else question
    extracted = extract_answer(searched, hits, embedder)
    verdict = judge(searched, hits, extracted, bar, embedder=embedder)
    if not verdict.answer and (language := cannot_read(searched, hits, embedder)):
        # An English-only model compares a question with posts in its own language only: a reply in the
        # language of what was searched says so, since "I haven't written about that" would be a guess.
        # What was searched, not the question: "tell me more" searches the question before it again, which
        # may be the unreadable one; a translated question is searched in the posts' language, which the
        # model reads.
        posts = excerpts_language(hits)
        table = CANNOT_READ if posts == "en" else CANNOT_READ_OTHER
        return Reply(
            question, "none", verdict, hits, extracted, text=table.get(language, table["en"]),
            owner_note=CANNOT_READ_HELP.format(
                language=language_name(language), posts=language_name(posts), model=embedder.model_id
            ),
            _started=started,
        )  # fmt: skip
    if not verdict.answer:
        return Reply(
            question, "none", verdict, hits, extracted, text=phrase(decline_replies(settings), question),
            suggestions=verdict.suggestions, _started=started,
        )  # fmt: skip
    if chosen == "generative" and settings.grounding == "auto" and _unchecked(question, hits, embedder):
        # The grounding check could not read an answer in the question's language (an English-only
        # embedding model): the author's own sentences rather than a generated answer nobody checked.
        chosen = "extractive"
    if follow_up == "joined":
        # The join found the posts; scored against it, the sentences that answered the question before win
        # again and the reader reads the last answer twice. What they ask now picks among them (the quote,
        # or the one a generated answer falls back to).
        extracted = extract_answer(question, hits, embedder)
    elif follow_up == "more":
        extracted = extract_answer(searched, hits, embedder, said="\n".join(answers_since_question(history)))
    if chosen == "extractive":
        return Reply(question, "extractive", verdict, hits, extracted, text=extracted.text, _started=started)
    stream = answer(question, hits, settings, history, embedder=embedder)
    return Reply(question, "generative", verdict, hits, extracted, stream=stream, _started=started)


def cannot_read(question: str, hits: Sequence[Hit], embedder: Embedder) -> str:
    """The question's language when the embedding model cannot compare it with the posts' (an
    English-only model, a question in another language than the posts', both known); "" when it can.
    An English question on a German blog is one: MiniLM reads German only word by word."""
    asked, posts = detect_language(question), excerpts_language(hits)
    if not languages_differ(asked, posts) or cross_lingual(embedder.model_id):
        return ""
    return asked


def _unchecked(question: str, hits: Sequence[Hit], embedder: Embedder) -> bool:
    """Whether the grounding check could not judge an answer written in the question's language."""
    return bool(unreadable(detect_language(question), excerpts_language(hits), embedder.model_id))
