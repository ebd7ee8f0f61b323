"""Check questions.jsonl and offtopic.jsonl: fields, unique ids, posts exist, evidence copied verbatim.

Run from anywhere: ``python check_evidence.py``; exits 1 and lists the problems if any.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
KINDS = {"general", "near_miss", "other_author", "nonsense"}


def read_jsonl(path: Path) -> list[dict[str, object]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            row = json.loads(line)
            row["_line"] = number
            rows.append(row)
    return rows


def check_questions(rows: list[dict[str, object]], posts: Path) -> list[str]:
    problems = []
    for row in rows:
        where = f"questions.jsonl:{row['_line']} ({row.get('id')})"
        if set(row) - {"_line"} != {"id", "text", "post", "evidence"}:
            problems.append(f"{where}: fields are {sorted(set(row) - {'_line'})}")
            continue
        post = posts / str(row["post"])
        if not post.is_file():
            problems.append(f"{where}: no post {row['post']}")
            continue
        text = post.read_text(encoding="utf-8")
        evidence = row["evidence"]
        if not isinstance(evidence, list) or not evidence:
            problems.append(f"{where}: evidence must be a non-empty list")
            continue
        for piece in evidence:
            if not isinstance(piece, str) or piece not in text:
                problems.append(f"{where}: evidence not found verbatim in {row['post']}: {piece!r}")
    return problems


def check_offtopic(rows: list[dict[str, object]]) -> list[str]:
    problems = []
    for row in rows:
        where = f"offtopic.jsonl:{row['_line']} ({row.get('id')})"
        if set(row) - {"_line"} != {"id", "text", "kind"}:
            problems.append(f"{where}: fields are {sorted(set(row) - {'_line'})}")
        elif row["kind"] not in KINDS:
            problems.append(f"{where}: unknown kind {row['kind']!r}")
    return problems


def main() -> int:
    questions = read_jsonl(HERE / "questions.jsonl")
    offtopic = read_jsonl(HERE / "offtopic.jsonl")
    problems = check_questions(questions, HERE / "posts") + check_offtopic(offtopic)
    ids = Counter(str(row["id"]) for row in questions + offtopic)
    problems += [f"duplicate id {name}" for name, count in ids.items() if count > 1]
    texts = Counter(str(row["text"]).strip().lower() for row in questions + offtopic)
    problems += [f"duplicate text {text!r}" for text, count in texts.items() if count > 1]
    for problem in problems:
        print(problem)
    per_post = Counter(str(row["post"]) for row in questions)
    kinds = Counter(str(row["kind"]) for row in offtopic)
    print(f"{len(questions)} questions over {len(per_post)} posts; {len(offtopic)} off-topic {dict(kinds)}")
    print(f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
