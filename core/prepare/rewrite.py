"""Vague-reference rewriting at sentence level, and the numbered-sentence view the LLM stages share.

A post is shown to the model with every sentence numbered ("[S3] The second one cracked."), headings
as "# …" lines and paragraphs separated by blank lines. The model answers with the sentences it
changed, `{"rewrites": [{"id": 3, "text": "The second walnut board cracked."}]}`, and only those are
replaced, in place, so paragraphs are never added, removed or merged, and the author's spacing
elsewhere is untouched. A proposed sentence is refused when it drops, adds or alters a `[REF: …]` /
`[IMAGE: …]` tag, when it is empty or breaks the paragraph, or when its length is far from the
original's; the others are kept.

The result is a `RewriteProposal`: the sentence-level changes (what the ingestion page shows for review),
the text before and after, and notes on what was refused.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

from core.models import Block, Post
from core.text.counts import plural
from core.text.sentences import TAG_RE, sentence_spans
from core.text.words import words

MAX_GROWTH_CHARS = 160  # a rewrite may name what a sentence means, not add a new one
MIN_SHARE = 0.5  # of the original length, and of its words other than REFERENCE_WORDS


@dataclass(frozen=True)
class Sentence:
    id: int  # 1-based, across the post
    block: int  # index into the post's blocks
    start: int  # span in the block's (stripped) text
    end: int


@dataclass
class Doc:
    """A post's blocks (texts stripped) and their sentences, numbered in reading order."""

    blocks: list[Block]
    sentences: list[Sentence]

    def text(self, sentence: Sentence) -> str:
        return self.blocks[sentence.block].text[sentence.start : sentence.end]

    @property
    def paragraphs(self) -> int:
        return sum(1 for b in self.blocks if not b.heading)


def build_doc(blocks: list[Block]) -> Doc:
    clean = [Block(b.text.strip(), b.heading) for b in blocks if b.text.strip()]
    sentences: list[Sentence] = []
    for i, block in enumerate(clean):
        if block.heading:
            continue
        for a, b in sentence_spans(block.text):
            sentences.append(Sentence(len(sentences) + 1, i, a, b))
    return Doc(clean, sentences)


def render_numbered(doc: Doc) -> str:
    """The post as the model sees it: numbered sentences, headings as '# …', blank lines between."""
    by_block: dict[int, list[Sentence]] = {}
    for s in doc.sentences:
        by_block.setdefault(s.block, []).append(s)
    parts: list[str] = []
    for i, block in enumerate(doc.blocks):
        if block.heading:
            parts.append(f"# {block.text}")
        else:
            parts.append(" ".join(f"[S{s.id}] {' '.join(doc.text(s).split())}" for s in by_block.get(i, [])))
    return "\n\n".join(parts)


@dataclass
class SentenceChange:
    id: int
    paragraph: int  # 1-based among paragraphs (headings not counted)
    before: str
    after: str

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


@dataclass
class RewriteProposal:
    """A post's proposed rewrite: what the author reviews before anything is stored."""

    post_id: str
    title: str
    original: str
    rewritten: str
    changes: list[SentenceChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str = ""  # the LLM call failed: nothing to review, the post keeps its text
    stats: object = field(
        default=None, repr=False, compare=False
    )  # core.llm.structured.LLMStats of the request

    @property
    def changed(self) -> int:
        return len(self.changes)

    def diff_lines(self) -> list[str]:
        """A plain-text sentence diff: '- before' / '+ after' per changed sentence."""
        lines: list[str] = []
        for c in self.changes:
            lines += [f"¶{c.paragraph} [S{c.id}]", f"- {c.before}", f"+ {c.after}"]
        return lines


def parse_rewrites(value: object) -> tuple[dict[int, str], list[str]]:
    """{sentence id: new text} from the model's JSON, and notes on entries that were not understood."""
    items = value.get("rewrites") if isinstance(value, dict) else value
    if items is None:
        return {}, []
    if not isinstance(items, list):
        return {}, ["the rewrites were not a list"]
    found: dict[int, str] = {}
    bad = 0
    for item in items:
        if not isinstance(item, dict):
            bad += 1
            continue
        raw_id, text = item.get("id"), item.get("text")
        if isinstance(raw_id, str):
            raw_id = raw_id.strip().lstrip("Ss")
        try:
            sid = int(raw_id)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            bad += 1
            continue
        if isinstance(text, str) and sid not in found:
            found[sid] = text
        else:
            bad += 1
    return found, ([f"{bad} rewrite entries were not understood"] if bad else [])


def check_rewrite(before: str, after: str) -> str | None:
    """Why a proposed sentence cannot replace `before`, or None when it can."""
    if not after.strip():
        return "empty"
    if re.search(r"\n\s*\n", after):
        return "it would split the paragraph"
    if TAG_RE.findall(before) != TAG_RE.findall(after):
        return "it changes a [REF]/[IMAGE] tag"
    if "[REF:" in after.replace(" ", "") and not TAG_RE.search(after):
        return "it breaks a tag"
    if len(after) > len(before) + MAX_GROWTH_CHARS or len(after) > 3 * len(before) + 40:
        return "it adds too much"
    if len(after.strip()) < MIN_SHARE * len(before.strip()):
        return "it drops too much"
    kept = [w for w in words(before) if w not in REFERENCE_WORDS]
    if kept and sum(1 for w in kept if w in set(words(after))) < MIN_SHARE * len(kept):
        return "it is a different sentence"
    return None


# Words a rewrite is expected to replace; the rest of the sentence should mostly stay.
# Not languages.ENGLISH.referring: a rewrite also replaces personal pronouns and stand-ins ("the thing").
_REFERENCES = """this that these those it its he she they them him her his hers their theirs there here one
    ones former latter same such people person thing things second first third last other others"""
REFERENCE_WORDS = frozenset(_REFERENCES.split())


def apply_rewrites(doc: Doc, proposed: dict[int, str]) -> tuple[Doc, list[SentenceChange], list[str]]:
    """The doc with the acceptable sentence rewrites made (sentence ids unchanged, spans moved), the
    changes, and why other proposals were refused."""
    by_id = {s.id: s for s in doc.sentences}
    paragraph_no: dict[int, int] = {}
    for i, block in enumerate(doc.blocks):
        if not block.heading:
            paragraph_no[i] = len(paragraph_no) + 1
    changes: list[SentenceChange] = []
    refused: dict[str, int] = {}
    edits: dict[int, str] = {}
    for sid in sorted(proposed):
        sentence = by_id.get(sid)
        if sentence is None:
            refused["no such sentence"] = refused.get("no such sentence", 0) + 1
            continue
        before = doc.text(sentence)
        raw = proposed[sid].strip()
        after = " ".join(raw.split()) if "\n" not in before else raw
        if " ".join(after.split()) == " ".join(before.split()):
            continue
        reason = check_rewrite(before, raw)
        if reason:
            refused[reason] = refused.get(reason, 0) + 1
            continue
        edits[sid] = after
        changes.append(SentenceChange(sid, paragraph_no[sentence.block], before, after))
    blocks = list(doc.blocks)
    sentences: list[Sentence] = []
    shift = {i: 0 for i in range(len(blocks))}
    pieces: dict[int, list[str]] = {}
    cursor: dict[int, int] = {}
    for s in doc.sentences:  # left to right within each block: spans move by the growth so far
        text = doc.blocks[s.block].text
        out = pieces.setdefault(s.block, [])
        out.append(text[cursor.get(s.block, 0) : s.start])
        new = edits.get(s.id, text[s.start : s.end])
        start = s.start + shift[s.block]
        out.append(new)
        shift[s.block] += len(new) - (s.end - s.start)
        cursor[s.block] = s.end
        sentences.append(Sentence(s.id, s.block, start, start + len(new)))
    for index in {by_id[sid].block for sid in edits}:
        blocks[index] = Block("".join(pieces[index]) + doc.blocks[index].text[cursor[index] :], False)
    notes = [f"{plural(n, 'proposed sentence')} refused: {why}" for why, n in refused.items()]
    return Doc(blocks, sentences), changes, notes


def rewritten_post(post: Post, blocks: list[Block]) -> Post:
    """The post with rewritten blocks; `raw` (the author's original) is kept."""
    return dataclasses.replace(post, blocks=blocks)


def make_proposal(
    post: Post, before: Doc, after: Doc, changes: list[SentenceChange], notes: list[str]
) -> RewriteProposal:
    return RewriteProposal(
        post_id=post.post_id,
        title=post.title,
        original="\n\n".join(b.text for b in before.blocks),
        rewritten="\n\n".join(b.text for b in after.blocks),
        changes=changes,
        notes=notes,
    )
