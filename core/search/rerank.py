"""Reranking: a slower second judge of the best fused candidates, between fusion and the threshold rules.

`settings.reranker` picks it ("none" by default: see below), `settings.rerank_top_n` how many of the
fused candidates it judges (the head); the rest (the tail) keep their fused order below the head.

- "llm": the chat model (OpenAI, any compatible server, or the built-in SmolLM2) answers, for each
  candidate on its own, "does this passage help answer the question? yes or no". The score is
  P(yes) / (P(yes) + P(no)) read from the first answer token's `top_logprobs` (OpenAI and llama.cpp's
  server both return them for chat completions); a server without logprobs gets its written answer
  parsed instead (yes = 1, no = 0), and an answer that is neither scores 0.5. The passage is cut to
  `MAX_PASSAGE_CHARS` so a judgement stays cheap; at most `llm_concurrency` requests run at once.
- "cross-encoder": a sentence-transformers `CrossEncoder` loaded from `rerank_model` (a local folder,
  or a Hugging Face hub name for machines with a network), with one output: its sigmoid score.

Relevance after reranking: each head candidate's relevance becomes its rerank score (0..1, the
reranker's probability that the chunk is relevant), the head is sorted by it (ties keep the fused
order), and each tail candidate's relevance is capped at the lowest head score, so the list stays one
ranking, the tail never overtakes the judged head, and the threshold rules cut it as before (with
rerank scores, `threshold` means "the judge's probability of relevant"). The fused relevance is still
in `Hit.fused_score` (hybrid), the dense and keyword contributions are untouched, and `Hit.rerank_score`
holds the judgement.

A reranker failure never breaks a search: the fused order stays and `Retrieval.notes` says why.

Off by default, because the one reranker available offline makes retrieval worse and slow. Measured
on 2 shared cores with the built-in SmolLM2-135M (its P(yes) stays near 0.4-0.5 whatever the passage):
- demo set (15 queries, `inkwell eval --mode hybrid --rerank none,llm`): nDCG@10 0.875 → 0.677 with
  rerank_top_n 10 (MRR@10 0.889 → 0.594, p50 33 ms → 20 s per question) and → 0.561 with 20
  (MRR@10 0.508, p50 87 s);
- SciFact, first 20 queries (bench/bench.py with BENCH_RERANK=1, --rerank-queries 20
  --rerank-top-n 10): nDCG@10 0.781 → 0.419, p50 46 ms → 21 s.
No cross-encoder with bundled weights is on PyPI, so the cross-encoder reranker needs a model folder
(or a network). A capable chat model (OpenAI or a bigger local server) is where "llm" may pay off.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from core.config import Settings
from core.models import Hit

log = logging.getLogger(__name__)

MAX_PASSAGE_CHARS = 1000  # ≈ 250 tokens: enough to judge, cheap for a small local model
MAX_QUESTION_CHARS = 500
JUDGE_MAX_TOKENS = 3  # "Yes" / "No" and a full stop; more only costs time
TOP_LOGPROBS = 10
UNCLEAR_SCORE = 0.5  # an answer that is neither yes nor no says nothing either way

JUDGE_SYSTEM = (
    "You judge search results. Given a question and a passage, answer only 'yes' if the passage "
    "helps answer the question, or 'no' if it does not."
)
JUDGE_USER = (
    "Question: {question}\n\nPassage:\n{passage}\n\nDoes the passage help answer the question? yes or no"
)


class RerankError(RuntimeError):
    """A reranker could not be built or did not answer; the message says why."""


@dataclass
class Scored:
    """One 0..1 score per judged hit (same order), and what the user should know about them."""

    scores: list[float]
    notes: list[str] = field(default_factory=list)


class Reranker(Protocol):
    name: str

    def score(self, question: str, hits: Sequence[Hit]) -> Scored: ...


# Applying scores ------------------------------------------------------------------------------------------


def rerank(
    question: str, candidates: list[Hit], settings: Settings, reranker: Reranker | None = None
) -> tuple[list[Hit], list[str]]:
    """The candidates (sorted best first) with their head reranked, and notes for `Retrieval.notes`.

    Returns the candidates unchanged when reranking is off, and with a note when the reranker fails.
    """
    if (reranker is None and settings.reranker == "none") or not candidates:
        return candidates, []
    head = candidates[: settings.rerank_top_n]
    try:
        reranker = reranker or get_reranker(settings)
        scored = reranker.score(question, head)
        if len(scored.scores) != len(head):
            raise RerankError(f"it returned {len(scored.scores)} scores for {len(head)} candidates")
    except Exception as exc:  # a search must survive any reranker trouble, even a bug in a plug-in
        log.warning("reranking failed: %s", exc)
        name = getattr(reranker, "name", settings.reranker)
        return candidates, [f"reranking ({name}) failed, kept the fused order: {exc}"]
    return apply_scores(candidates, scored.scores), scored.notes


def apply_scores(candidates: list[Hit], scores: Sequence[float]) -> list[Hit]:
    """Head = the first len(scores) candidates, reordered by score; the tail capped below the head."""
    head = candidates[: len(scores)]
    for hit, score in zip(head, scores, strict=True):
        hit.rerank_score = _clamp(float(score))
        hit.relevance = hit.rerank_score
    head = sorted(head, key=lambda h: -(h.rerank_score or 0.0))  # stable: ties keep the fused order
    floor = min((h.relevance for h in head), default=1.0)
    tail = candidates[len(scores) :]
    for hit in tail:
        hit.relevance = min(hit.relevance, floor)
    ranked = head + tail
    for rank, hit in enumerate(ranked, start=1):
        hit.rank = rank
    return ranked


def _clamp(value: float) -> float:
    return 0.0 if math.isnan(value) else max(0.0, min(1.0, value))


def passage(hit: Hit, limit: int = MAX_PASSAGE_CHARS) -> str:
    """What a reranker reads: where the chunk comes from, then its text cut at a word near `limit`."""
    where = " — ".join(part for part in (hit.title, hit.section) if part)
    text = " ".join(hit.text.split())
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0] + " …"
    return f"{where}\n{text}" if where else text


# Building -------------------------------------------------------------------------------------------------

_cross_encoders: dict[str, CrossEncoderReranker] = {}
_lock = threading.Lock()


def get_reranker(settings: Settings) -> Reranker | None:
    """The reranker the settings ask for (None for "none"); cross-encoders are loaded once per process."""
    if settings.reranker == "none":
        return None
    if settings.reranker == "llm":
        return LLMReranker(settings)
    if settings.reranker == "cross-encoder":
        name = settings.rerank_model.strip()
        if not name:
            raise RerankError(
                "the cross-encoder reranker needs rerank_model (INKWELL_RERANK_MODEL): the folder of a "
                "sentence-transformers CrossEncoder, or a Hugging Face name (needs a network on first use)"
            )
        with _lock:
            if name not in _cross_encoders:
                _cross_encoders[name] = CrossEncoderReranker(name)
            return _cross_encoders[name]
    raise RerankError(f"unknown reranker {settings.reranker!r}")


# LLM ------------------------------------------------------------------------------------------------------


class LLMReranker:
    """Pointwise yes/no judgements by the chat model, scored from token logprobs."""

    name = "llm"

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.use_logprobs = True  # switched off for a server that rejects them

    def score(self, question: str, hits: Sequence[Hit]) -> Scored:
        from core.llm import make_client

        if not hits:
            return Scored([])
        client, model = make_client(self.settings)
        question = question.strip()[:MAX_QUESTION_CHARS]
        workers = max(1, min(self.settings.llm_concurrency, len(hits)))
        with client, ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rerank") as pool:
            futures = [pool.submit(self._judge, client, model, question, hit) for hit in hits]
            try:
                results = [f.result() for f in futures]
            except BaseException:
                pool.shutdown(cancel_futures=True)  # one failure fails the rerank: stop the others
                raise
        unclear = sum(1 for r in results if r is None)
        notes = (
            [f"reranking (llm): {unclear} of {len(hits)} judgements were neither yes nor no"]
            if unclear
            else []
        )
        return Scored([UNCLEAR_SCORE if r is None else r for r in results], notes)

    def _judge(self, client: Any, model: str, question: str, hit: Hit) -> float | None:
        import openai

        from core.llm import LLMError, to_llm_error

        messages = [
            {"role": "system", "content": JUDGE_SYSTEM},
            {"role": "user", "content": JUDGE_USER.format(question=question, passage=passage(hit))},
        ]
        args: dict[str, Any] = {"model": model, "messages": messages, "temperature": 0.0}
        args["max_tokens"] = JUDGE_MAX_TOKENS
        try:
            if self.use_logprobs:
                try:
                    response = client.chat.completions.create(
                        **args, logprobs=True, top_logprobs=TOP_LOGPROBS
                    )
                except openai.BadRequestError:
                    self.use_logprobs = False  # some compatible servers refuse logprobs: ask plainly
                    response = client.chat.completions.create(**args)
            else:
                response = client.chat.completions.create(**args)
        except openai.OpenAIError as err:
            raise to_llm_error(err, self.settings, model, str(client.base_url)) from None
        if not response.choices:
            raise LLMError("the reranking model returned no answer", kind="error")
        return judgement_score(response.choices[0])


def judgement_score(choice: Any) -> float | None:
    """P(yes) / (P(yes) + P(no)) from the first answer token that weighs either; else the parsed text."""
    content = getattr(getattr(choice, "logprobs", None), "content", None) or []
    for token in content:
        yes = no = 0.0
        for alt in token.top_logprobs or [token]:
            word = _word(alt.token)
            if word == "yes":
                yes += math.exp(alt.logprob)
            elif word == "no":
                no += math.exp(alt.logprob)
        if yes + no > 0:
            return yes / (yes + no)
        if _word(token.token):
            break  # a real word that is neither: the text decides
    return parse_judgement(getattr(choice.message, "content", None) or "")


def parse_judgement(text: str) -> float | None:
    """1.0 for an answer that starts with yes, 0.0 for no, None for anything else."""
    words = text.strip().split()
    first = _word(words[0]) if words else ""
    return {"yes": 1.0, "no": 0.0}.get(first)


def _word(token: str) -> str:
    return token.strip().strip(".,!?:;'\"*()[]").lower()


# Cross-encoder --------------------------------------------------------------------------------------------


class CrossEncoderReranker:
    """A sentence-transformers CrossEncoder with one output (a relevance logit, sigmoid → 0..1)."""

    name = "cross-encoder"

    def __init__(self, model: str, batch_size: int = 16) -> None:
        self.model_name = model
        self.batch_size = batch_size
        self._model = _load_cross_encoder(model)
        self._lock = threading.Lock()  # one model shared by Streamlit sessions; torch isn't re-entrant

    def score(self, question: str, hits: Sequence[Hit]) -> Scored:
        if not hits:
            return Scored([])
        pairs = [(question, passage(hit)) for hit in hits]
        with self._lock:
            raw = self._model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False)
        values = [float(v) for v in np.asarray(raw, dtype=np.float64).ravel()]
        # Models saved with an identity activation give logits: squash them to 0..1 like the default.
        if any(not 0.0 <= v <= 1.0 for v in values):
            values = [1.0 / (1.0 + math.exp(-v)) for v in values]
        return Scored(values)


def _load_cross_encoder(model: str) -> Any:
    import os

    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        from sentence_transformers import CrossEncoder
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        encoder = CrossEncoder(model, device="cpu")
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise RerankError(
            f"could not load the cross-encoder {model!r} ({first}); rerank_model must be a local folder of "
            "a sentence-transformers CrossEncoder, or a Hugging Face name on a machine that can download it"
        ) from None
    labels = int(getattr(encoder, "num_labels", 1) or 1)
    if labels != 1:
        raise RerankError(
            f"the cross-encoder {model!r} has {labels} outputs; a reranker needs one relevance score"
        )
    return encoder


def prepare_reranker(settings: Settings) -> Reranker | None:
    """Build the configured reranker now (loading a cross-encoder, starting the built-in model), so a
    batch run fails at once with a clear error, and its first question does not pay the start-up."""
    reranker = get_reranker(settings)
    if isinstance(reranker, LLMReranker):
        from core.llm import make_client

        client, _ = make_client(settings)
        client.close()
    return reranker
