"""Check the eval files against the posts: every evidence quote verbatim in a post the qrels name.

Exits 1 and prints each problem: a quote not found (or found only outside its qrels posts), a
quote outside 8–40 words, a qrels row naming no post, an off-topic id clashing with a question.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
POSTS = HERE.parent / "posts"


def post_texts() -> dict[str, str]:
    """Post id (file stem; no post here sets `id` in its front matter) to the file's text."""
    return {p.stem: p.read_text(encoding="utf-8") for p in POSTS.rglob("*.md")}


def problems() -> list[str]:
    """Every mismatch between questions.jsonl, qrels.tsv, offtopic.jsonl and the posts."""
    posts = post_texts()
    qrels: dict[str, set[str]] = {}
    with (HERE / "qrels.tsv").open(encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            qrels.setdefault(row["query_id"], set()).add(row["doc_id"])
    found: list[str] = []
    ids: set[str] = set()
    for line in (HERE / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        q = json.loads(line)
        ids.add(q["id"])
        relevant = qrels.get(q["id"], set())
        found += [f"{q['id']}: qrels names unknown post {d}" for d in relevant - posts.keys()]
        for quote in q["evidence"]:
            words = len(quote.split())
            if not 8 <= words <= 40:
                found.append(f"{q['id']}: quote of {words} words: {quote!r}")
            holders = {pid for pid, text in posts.items() if quote in text}
            if not holders & relevant:
                found.append(f"{q['id']}: not in its qrels posts (in {sorted(holders)}): {quote!r}")
        if not q.get("answer", "").strip() or not q["text"].strip():
            found.append(f"{q['id']}: empty text or answer")
    found += [f"qrels names unknown query {k}" for k in qrels.keys() - ids]
    for line in (HERE / "offtopic.jsonl").read_text(encoding="utf-8").splitlines():
        o = json.loads(line)
        if o["id"] in ids or not o["text"].strip():
            found.append(f"offtopic {o['id']}: clashes with a question id or is empty")
    return found


def main() -> int:
    found = problems()
    for problem in found:
        print(problem)
    print(f"{len(found)} problems")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
