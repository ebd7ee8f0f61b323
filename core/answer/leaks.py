"""Prompt markup the answer model copied into its answer, found and cut out before the reader sees it.

Small models copy what they see: the built-in 135M model has begun answers with an excerpt's header
("[Build Log: A White Oak Trestle Table for Eight — Finish | relevance=0.7692]") or with a whole block
("Excerpt 6" / "Post: …" lines, then the excerpt). The excerpt's own words are the author's and stay;
the markup around them goes. Recognised, in the current format (core/answer/generate.py format_hit)
and the ones tried before it:

- `<excerpt …>`, `</excerpt>` and `<excerpts>` tags, also cut off (`</excerpt`, `excerpt>`);
- `Excerpt 3` / `Excerpt 3:` labels at the start of a line or after a sentence, `(Excerpt 3)` anywhere;
- lines labelling a used post: `Post: <title>` (also `Title:`, `Section:`, `From:`, bold or as a
  heading), a line that is just `<title> — <section>`, and the prompt's own "Excerpts from my writings:";
- bracket headers `[<title> | relevance=0.7692]` (also unclosed at the end of a line) and stray
  scores (`relevance=0.77`, `(score: 0.8)`).

`strip_leaks` cleans a whole text; `unsettled_from` tells a streaming caller where a header may be
starting that the next delta could complete, so it holds that part back (a header split across deltas
is removed whole, never shown in halves). With `final=False`, the whitespace around markup removed at
the very end stays unresolved (marked with GONE) until the next delta says what follows; a streaming
caller releases nothing from the first GONE on.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.text.words import LIST_BULLET

GONE = "\x00"  # marks removed text until the whitespace around it is tidied
_LABEL = r"excerpts?\s*(?:no\.?\s*|#\s*)?\d+(?:\s*(?:of|/)\s*\d+)?"
_BOLD = r"(?:\*\*|__)?"
_PATTERNS = [
    # Tags, whole or cut off at the end of a line, and a closing bracket left alone.
    re.compile(r"<\s*/?\s*excerpts?\b[^<>\n]{0,400}(?:>|$)", re.IGNORECASE | re.MULTILINE),
    re.compile(r"(?<![\w<])/?excerpts?\s*>", re.IGNORECASE),
    # Bracket headers with a score, closed or running to the end of the line; then stray scores.
    re.compile(
        r"\[[^\[\]\n]{0,400}?\|\s*(?:relevance|score)\b[^\]\n]{0,30}(?:\]|$)", re.IGNORECASE | re.MULTILINE
    ),
    re.compile(
        r"\[[^\[\]\n]{0,400}\|[^\[\]\n]{0,40}$", re.MULTILINE
    ),  # "[title | rel" cut off at a line's end
    re.compile(
        r"[(\[|]?[ \t]*\b(?:relevance|score)\s*[=:]\s*\d*\.?\d+[ \t]*[)\]]?", re.IGNORECASE | re.MULTILINE
    ),
    # "(Excerpt 3)", "[see excerpt 3]" anywhere.
    re.compile(rf"[(\[]\s*(?:see\s+|from\s+|in\s+)?{_LABEL}\s*[)\]]", re.IGNORECASE),
    # "Excerpt 3", "**Excerpt 3:**", "## Excerpt 3 —" as a label: at a line's start, ending the line or
    # followed by a colon or dash.
    re.compile(
        rf"^[ \t]*(?:[#>]+[ \t]*)?{_BOLD}{_LABEL}{_BOLD}[ \t]*(?:[:.\-—–][ \t]*{_BOLD}[ \t]*|$)",
        re.IGNORECASE | re.MULTILINE,
    ),
    # "… of my bench. Excerpt 4: I bought …": a label after a sentence, before a colon or dash.
    re.compile(rf"(?<=[.!?\"”)])[ \t]+{_BOLD}{_LABEL}{_BOLD}[ \t]*[:\-—–]", re.IGNORECASE),
    # The prompt's own line introducing the excerpts.
    re.compile(
        r"^[ \t]*(?:here are )?excerpts from my writings\b[^\n]{0,40}:[ \t]*$", re.IGNORECASE | re.MULTILINE
    ),
]
# A line that labels a post: "Post: On Bread", "**Title:** On Bread", "## Section: Starters".
_LABEL_LINE = re.compile(
    rf"^[ \t]*(?:[#>]+[ \t]*)?{_BOLD}(?:post(?:\s+title)?|title|section|from(?:\s+(?:the\s+)?post)?)"
    rf"{_BOLD}[ \t]*:[ \t]*{_BOLD}(?P<value>[^\n]*?){_BOLD}[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
_ANY_LINE = re.compile(r"^[^\n]*$", re.MULTILINE)
# What may dress a copied "title — section" line: a heading mark, list number or bullet, emphasis, a colon.
_HEADER_DRESS = re.compile(rf"^\s*(?:[#>]+|{LIST_BULLET})?\s*|[\s:.]*$")
# What a line may begin with while it can still become a removable label line.
_LINE_FORMS = (
    "post title:",
    "post:",
    "title:",
    "section:",
    "from:",
    "from the post:",
    "from post:",
    "excerpts from my writings:",
    "here are excerpts from my writings:",
)
_PARTIAL_LABEL = re.compile(
    r"[*_]*excerpts?\s*(?:no\.?\s*|#\s*)?\d*(?:\s*(?:of|/)\s*\d*)?\s*(?:[:.\-—–][\s*_]*)?"
)
_LEAD = re.compile(r"^[ \t]*(?:[#>]+[ \t]*)?")
_SCORE_TAIL = re.compile(
    r"(?:[(\[|][ \t]*)?\b(?:r(?:e(?:l(?:e(?:v(?:a(?:n(?:c(?:e)?)?)?)?)?)?)?)?|s(?:c(?:o(?:r(?:e)?)?)?)?)"
    r"(?:\s*[=:]\s*\d*\.?\d*)?$",
    re.IGNORECASE,
)
# A line of removed markup only goes with its newline and the blank lines after it.
_TIDY_LINE = re.compile(rf"^[ \t]*{GONE}[{GONE} \t]*(?:\n[ \t]*(?=\n))*(?:\n|$)", re.MULTILINE)
_TIDY_INLINE = re.compile(rf"(?P<lead>[ \t]*){GONE}[{GONE} \t]*")


def _key(text: str) -> str:
    """A title or label as compared: quotes, brackets and emphasis dropped, spaces collapsed, case folded."""
    text = re.sub(r"[\"“”'‘’*_\[\]()]", "", text)
    return re.sub(r"\s+", " ", text.replace("–", "—")).strip().casefold()


def labels_of(titles: Sequence[str]) -> list[str]:
    """Keys of the titles (and "title — section" labels) a label line may name."""
    return [k for k in {_key(t) for t in titles} if k]


def _names_a_post(value: str, labels: Sequence[str]) -> bool:
    value = _key(value)
    if not value:
        return False
    return any(value.startswith(label) or (len(value) >= 12 and label.startswith(value)) for label in labels)


def strip_leaks(
    text: str, titles: Sequence[str] = (), *, final: bool = True, after: str = ""
) -> tuple[str, list[str]]:
    """`text` without prompt markup, and the pieces removed (in order found, per pattern).

    `titles`: the used excerpts' post titles and "title — section" labels; label lines and bare
    header lines are removed only when they name one of them. `final=False` for a stream's text so
    far: its last line, which may go on, is not judged as a whole line yet. `after`: the text released
    before `text` (its last character tells whether `text` starts a line or follows a sentence).
    """
    context = after[-1:]
    text = context + text
    removed: list[str] = []
    labels = labels_of(titles)

    def cut(match: re.Match[str]) -> str:
        removed.append(match.group().strip())
        return GONE

    for pattern in _PATTERNS:
        text = pattern.sub(cut, text)
    headers = {label for label in labels if "—" in label}  # "title — section" alone on a line

    def label_line(match: re.Match[str]) -> str:
        if not final and match.end() == len(match.string):
            return match.group()  # the line may go on
        return cut(match) if _names_a_post(match.group("value"), labels) else match.group()

    def header_line(match: re.Match[str]) -> str:
        if not final and match.end() == len(match.string):
            return match.group()
        line = _HEADER_DRESS.sub("", match.group())
        return cut(match) if line.strip() and _key(line) in headers else match.group()

    text = _LABEL_LINE.sub(label_line, text)
    text = _ANY_LINE.sub(header_line, text)
    if GONE in text:
        text = _tidy(text, final)
    return text[len(context) :], removed


def _tidy(text: str, final: bool) -> str:
    """Removed markup's marks resolved: a line left with nothing but marks goes with its newline (and
    the blank lines after it when a blank line came before); inside a line, one space stays between
    two words (none before punctuation or at a line's ends). Unless `final`, marks followed by nothing
    but whitespace stay (as GONE) until the text after them is known."""

    def waits(match: re.Match[str]) -> bool:
        return not final and not match.string[match.end() :].strip()

    def line(match: re.Match[str]) -> str:
        if waits(match):
            return match.group()
        head = match.string[: match.start()]
        if not head.strip() or head.endswith("\n\n"):
            return ""
        return match.group()[match.group().index("\n") + 1 :] if "\n" in match.group() else ""

    def inline(match: re.Match[str]) -> str:
        if waits(match):
            return match.group()
        before = match.string[match.start() - 1] if match.start() else ""
        after = match.string[match.end()] if match.end() < len(match.string) else ""
        if after and after in ".,;:!?)":
            return ""
        if not before:
            return match.group("lead")  # the text starts here: the gap before it is someone else's
        return "" if before.isspace() or not after or after.isspace() else " "

    text = _TIDY_INLINE.sub(inline, _TIDY_LINE.sub(line, text))
    return text.replace(GONE, "") if final else text


def unsettled_from(text: str) -> int:
    """Where in `text` (a stream's unreleased part) a header may be starting that more text would
    complete: the last line when it could still become a label line or begins with `[` or `<`, an
    unclosed `[`, `<` or `(` on the last line, or a trailing score. len(text) when there is none."""
    line_start = text.rfind("\n") + 1
    line = text[line_start:]
    cut = len(text)
    lead = _LEAD.match(line)
    head = line[lead.end() if lead else 0 :].lower()
    words = head.strip("*_")
    if (
        any(form.startswith(words) or words.startswith(form) for form in _LINE_FORMS)
        or "excerpt".startswith(words)
        or head.startswith(("[", "<"))  # a header line: held until it ends, so its newline goes with it
        or _PARTIAL_LABEL.fullmatch(head)
    ):
        cut = line_start
    for opener, closer in (("[", "]"), ("<", ">"), ("(", ")")):
        at = line.rfind(opener)
        if at >= 0 and closer not in line[at:]:
            cut = min(cut, line_start + at)
    tail = _SCORE_TAIL.search(line)
    if tail and tail.group():
        cut = min(cut, line_start + tail.start())
    return cut
