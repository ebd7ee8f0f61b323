"""Check data/calibration/kjv-john/questions.jsonl against its posts.

Every question names an existing post, and every evidence string occurs verbatim in that post's
body (one verse a paragraph, so a quote never spans two verses). Exits 1 and lists the failures
otherwise. Run: `python data/calibration/kjv-john/check_evidence.py`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
POSTS = HERE / "posts"
QUESTIONS = HERE / "questions.jsonl"


def post_body(path: Path) -> str:
    """The post's text after its front matter."""
    text = path.read_text(encoding="utf-8")
    if text.startswith("---\n"):
        end = text.index("\n---\n", 4)
        text = text[end + len("\n---\n") :]
    return text


def problems() -> list[str]:
    """One line per question whose post is missing or whose evidence is not in it."""
    found: list[str] = []
    ids: set[str] = set()
    for number, line in enumerate(QUESTIONS.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        question = json.loads(line)
        qid = str(question["id"])
        if qid in ids:
            found.append(f"line {number}: duplicate id {qid}")
        ids.add(qid)
        path = POSTS / question["post"]
        if not path.is_file():
            found.append(f"{qid}: no post {question['post']}")
            continue
        evidence: list[str] = question.get("evidence") or []
        if not evidence:
            found.append(f"{qid}: no evidence")
        paragraphs = post_body(path).split("\n\n")
        for quote in evidence:
            if not any(quote in paragraph for paragraph in paragraphs):
                found.append(f"{qid}: not verbatim in {question['post']}: {quote!r}")
    return found


def main() -> None:
    found = problems()
    for problem in found:
        print(problem)
    if found:
        sys.exit(1)
    print("all evidence verbatim")


if __name__ == "__main__":
    main()
