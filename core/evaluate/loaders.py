"""Query sets on disk: BEIR-style queries.jsonl ({"id", "text"}, optional "evidence", "answer", "kind")
and qrels.tsv (query_id, doc_id, score; a header row is optional), with a one-line reason per bad line."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from core.evaluate.metrics import Query, normalise_quote


def load_queries(path: str | Path) -> list[Query]:
    """Read a jsonl file of {"id", "text", optional "evidence"} objects (BEIR's "_id" is accepted too)."""
    path = Path(path)
    return read_queries(_file_lines(path), str(path))


def read_queries(lines: Iterable[str], source: str) -> list[Query]:
    """Queries from jsonl lines; errors name `source` and the line number."""
    queries: list[Query] = []
    seen: set[str] = set()
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            query = _parse_query(line)
        except ValueError as exc:
            raise ValueError(f"{source}:{lineno}: {exc}") from None
        # A repeated id would silently be scored twice and skew every mean.
        if query.id in seen:
            raise ValueError(f"{source}:{lineno}: duplicate query id {query.id!r}")
        seen.add(query.id)
        queries.append(query)
    return queries


def decode_upload(name: str, data: bytes) -> list[str]:
    """An uploaded file's lines; a file that is not UTF-8 text is a ValueError naming it."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{name}: not UTF-8 text (byte {exc.start})") from None
    return text.splitlines()


def _parse_query(line: str) -> Query:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON ({exc.msg})") from None
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    raw_id = obj.get("id", obj.get("_id"))
    # bool is an int subclass; an id of `true` is a mistake, not a number.
    if raw_id is None or isinstance(raw_id, bool) or not isinstance(raw_id, str | int):
        raise ValueError('missing or invalid "id" (string or integer)')
    text = obj.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ValueError('missing or empty "text"')
    answer, kind, post = obj.get("answer") or "", obj.get("kind") or "", obj.get("post") or ""
    if not all(isinstance(value, str) for value in (answer, kind, post)):
        raise ValueError('"answer", "kind" and "post" must be strings')
    return Query(
        id=str(raw_id).strip(),
        text=text,
        evidence=_parse_evidence(obj.get("evidence")),
        answer=answer,
        kind=kind,
        post=post,
    )


def _parse_evidence(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise ValueError('"evidence" must be a string or a list of strings')
    # An empty quote would "match" every chunk, so blank entries are dropped rather than kept.
    return tuple(item for item in items if normalise_quote(item))


def load_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """Read relevance judgements: {query_id: {doc_id: grade}}, keeping only grades > 0.

    Accepts BEIR's tsv (`query-id  corpus-id  score`, header optional) and TREC's four-column
    `qid iter docid rel`. Rows with grade <= 0 are judged-not-relevant, so they are dropped here; positive
    grades are kept as they are because nDCG uses them as gains. A later row for the same pair wins.
    """
    path = Path(path)
    return read_qrels(_file_lines(path), str(path))


def _file_lines(path: Path) -> list[str]:
    """The file's lines (split on line feeds only, as reading it line by line does); a file that is not
    UTF-8 text is a ValueError naming it and the line, not Python's bare "'utf-8' codec can't decode"."""
    data = path.read_bytes()
    try:
        # utf-8-sig: files saved by Windows editors start with a BOM that would otherwise break line 1.
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ValueError(f"{path}:{line}: not UTF-8 text (re-save it as UTF-8)") from None
    return text.split("\n")


def read_qrels(lines: Iterable[str], source: str) -> dict[str, dict[str, int]]:
    """Relevance judgements from tsv lines (see load_qrels); errors name `source` and the line number."""
    grades: dict[str, dict[str, int]] = {}
    first_row = True
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        fields = _split_qrels_line(line)
        # Only the first non-blank row may be a header; a non-numeric score later on is an error.
        is_header, first_row = first_row and _is_header(fields), False
        if is_header:
            continue
        try:
            query_id, doc_id, grade = _parse_qrels_fields(fields)
        except ValueError as exc:
            raise ValueError(f"{source}:{lineno}: {exc}") from None
        grades.setdefault(query_id, {})[doc_id] = grade
    relevant = {qid: {d: g for d, g in docs.items() if g > 0} for qid, docs in grades.items()}
    return {qid: docs for qid, docs in relevant.items() if docs}


def _split_qrels_line(line: str) -> list[str]:
    # Tab-separated when tabs are present, so ids may contain spaces; otherwise TREC-style whitespace.
    line = line.rstrip("\r\n")
    parts = line.split("\t") if "\t" in line else line.split()
    return [part.strip() for part in parts]


def _is_header(fields: list[str]) -> bool:
    return len(fields) >= 3 and not _looks_like_int(fields[-1])


def _looks_like_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


def _parse_qrels_fields(fields: list[str]) -> tuple[str, str, int]:
    if len(fields) == 3:
        query_id, doc_id, score = fields
    elif len(fields) == 4:
        query_id, _iteration, doc_id, score = fields
    else:
        raise ValueError(f"expected 3 columns (query_id, doc_id, score), got {len(fields)}")
    if not query_id or not doc_id:
        raise ValueError("empty query_id or doc_id")
    try:
        grade = int(score)
    except ValueError:
        raise ValueError(f"score {score!r} is not an integer") from None
    return query_id, doc_id, grade
