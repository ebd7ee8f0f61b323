"""What of the model's streamed text reaches the reader: whole sentences, without prompt markup, and
in strict grounding mode only the sentences the grounding check supports.

    release = Release(titles, judge=StrictJudge(checker))   # judge=None: grounding "check"
    for delta in model_stream:
        for piece in release.feed(delta): show(piece)
    for piece in release.finish(truncated=finish_reason == "length"): show(piece)
    release.text, release.dropped, release.cut, release.leaks

The partial sentence at the end of what has arrived is held back; a sentence is released once the next
one has begun (or the stream has ended). Before splitting, complete prompt markup is cut out
(core/answer/leaks.py), and anything that may be the start of a header the next delta would complete
is held too. When the model stopped for length, the unfinished last sentence is never released: the
text ends at the last complete sentence and `cut` holds what was left out.

In strict mode each sentence is judged as it completes (core/answer/grounding.py GroundingChecker) and
released only when supported. A sentence too short to judge ("They were born to change.") goes with the
judged sentence before it (at the start: the first one after it), and only if it states no number or
name the excerpts lack; an answer with no judged sentence shows nothing. When the check cannot run (an
answer in another language with an English-only embedding model) nothing is released. Dropped
sentences are kept in `dropped` with their judgement.

The "auto" grounding mode (the default) is a lenient StrictJudge: the same judgement, but an answer made
only of sentences too short to judge is released when none of them names a number or name the excerpts
lack ("Swarming starts in May."). An answer the check cannot run on is released by neither; in auto
mode core/answer/reply.py quotes the author instead of generating one it can foresee.
The whitespace between sentences is the model's own, so an answer that loses nothing is unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from core.answer.grounding import GroundingChecker, SentenceSupport
from core.answer.leaks import GONE, strip_leaks, unsettled_from
from core.text.sentences import sentence_spans

# A sentence that ends: terminal punctuation, then closing quotes, brackets or emphasis.
_COMPLETE = re.compile(r"[.!?…。！？][\"'”’)\]*_]*$")


@dataclass
class Verdict:
    keep: bool
    support: SentenceSupport
    skipped: str = ""  # why the sentence could not be checked
    # Too short to judge, with known details, from a lenient judge: shown even when no judged sentence
    # in the answer vouches for it.
    alone: bool = False


# A judge decides on one sentence, given the answer so far (for its language) ending with it.
Judge = Callable[[str, str], Verdict]


class StrictJudge:
    """Strict grounding: keep a sentence only when the check supports it (see the module docstring).

    `lenient` ("auto" grounding): short sentences need no judged sentence to vouch for them, only known
    details.
    """

    def __init__(self, checker: GroundingChecker, *, lenient: bool = False) -> None:
        self.checker = checker
        self.lenient = lenient

    def __call__(self, sentence: str, so_far: str) -> Verdict:
        grounding = self.checker.check_sentences([sentence], language_of=so_far)
        support = grounding.sentences[0]
        if grounding.skipped:
            return Verdict(False, support, grounding.skipped)
        if support.judged:
            return Verdict(support.supported, support)
        # Too short to judge by similarity ("I was born in 1980."): its details must still be known.
        rule = self.checker.language_rule(so_far)
        support.unknown_details = self.checker.unknown_details(
            sentence, names=rule.names, place_numbers=rule.same_language
        )
        return Verdict(not support.unknown_details, support, alone=self.lenient)


def is_complete(sentence: str) -> bool:
    return bool(_COMPLETE.search(sentence.rstrip()))


def _newlines(gap: str) -> int:
    return gap.count("\n")


class Release:
    """Feed it the model's deltas; it returns the pieces the reader may see (see the module docstring)."""

    def __init__(self, titles: Sequence[str] = (), judge: Judge | None = None) -> None:
        self.titles = list(titles)
        self.judge = judge
        self.raw = ""  # everything the model sent
        self.text = ""  # everything released
        self.leaks: list[str] = []  # prompt markup cut out
        self.verdicts: list[Verdict] = []  # with a judge: one per released-or-dropped sentence
        self.cut = ""  # the unfinished sentence left out when the model ran out of tokens
        self._pending = ""  # arrived, complete markup removed, not released yet
        self._seen = ""  # every sentence judged so far, kept or not (the answer's language)
        self._owed = ""  # the gap before a dropped sentence, owed to the next kept one
        self._last = ""  # the end of the last sentence released or dropped: what the pending text follows
        self._anchor: Verdict | None = None  # the last judged sentence's verdict
        self._held: list[tuple[str, str, Verdict]] = []  # short sentences before the first judged one

    @property
    def dropped(self) -> list[Verdict]:
        return [v for v in self.verdicts if not v.keep]

    def feed(self, delta: str) -> list[str]:
        self.raw += delta
        self._pending += delta
        unsettled = unsettled_from(self._pending)
        stable, removed = strip_leaks(self._pending[:unsettled], self.titles, final=False, after=self._last)
        self.leaks += removed
        text = stable + self._pending[unsettled:]
        spans = sentence_spans(text)
        # Whole sentences inside the settled part, each followed by another one.
        settled = min(len(stable), text.find(GONE) % (len(text) + 1))
        ready = 0
        while ready < len(spans) - 1 and spans[ready][1] <= settled:
            ready += 1
        return self._release(text, spans[:ready], rest_from=spans[ready - 1][1] if ready else 0)

    def finish(self, truncated: bool = False) -> list[str]:
        """The rest, once the stream has ended; `truncated`: it ended at the token limit."""
        text, removed = strip_leaks(self._pending, self.titles, after=self._last)
        self.leaks += removed
        spans = sentence_spans(text)
        if truncated:
            complete = len(spans)
            while complete and not is_complete(text[spans[complete - 1][0] : spans[complete - 1][1]]):
                complete -= 1
            if complete < len(spans):
                self.cut = text[spans[complete][0] :].strip()
            spans = spans[:complete]
        pieces = self._release(text, spans, rest_from=len(text))
        held, self._held = self._held, []
        for gap, sentence, verdict in held:
            # Short sentences in an answer with none judged: nothing vouches for them, unless their
            # verdict may stand alone (a lenient judge's, details known).
            if verdict.alone and verdict.keep:
                pieces += self._emit(gap, sentence, keep=True)
            else:
                verdict.keep = False
        self._pending = ""
        return pieces

    def _release(self, text: str, spans: Sequence[tuple[int, int]], rest_from: int) -> list[str]:
        pieces: list[str] = []
        end = 0
        for start, stop in spans:
            gap, sentence = text[end:start], text[start:stop]
            end = stop
            self._last = sentence
            if self.judge is None:
                pieces += self._emit(gap, sentence, keep=True)
                continue
            self._seen = f"{self._seen} {sentence}" if self._seen else sentence
            verdict = self.judge(sentence, self._seen)
            self.verdicts.append(verdict)
            if verdict.support.judged or verdict.skipped:
                self._anchor = verdict
                held, self._held = self._held, []
                for held_gap, held_sentence, held_verdict in held:
                    held_verdict.keep = held_verdict.keep and verdict.keep
                    pieces += self._emit(held_gap, held_sentence, held_verdict.keep)
            elif self._anchor is None:
                self._held.append((gap, sentence, verdict))  # until the first judged sentence decides
                continue
            else:
                verdict.keep = verdict.keep and self._anchor.keep
            pieces += self._emit(gap, sentence, verdict.keep)
        self._pending = text[rest_from:]
        return pieces

    def _emit(self, gap: str, sentence: str, keep: bool) -> list[str]:
        if not keep:
            # Keep a paragraph break that came before the dropped sentence.
            self._owed = gap if _newlines(gap) > _newlines(self._owed) else self._owed
            return []
        if _newlines(self._owed) > _newlines(gap):
            gap = self._owed
        self._owed = ""
        piece = (gap if self.text else "") + sentence
        self.text += piece
        return [piece]
