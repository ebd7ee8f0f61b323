"""Follow-up questions on the demo blog: when to join a follow-up with the previous question.

Run: `.venv/bin/python bench/followups.py` (ingests data/demo/posts into a temporary dir).

With the built-in setup (no LLM rewrite), a follow-up is searched either as asked, joined with the
previous question, or joined only when `core.answer.question.needs_context` says it refers back (the
shipped rule). Printed, per strategy, over data/demo/eval/followups.jsonl (15 follow-ups that refer
back, 15 that stand alone; each with the posts that answer it, best first, graded 2 for the first and
1 for the others): nDCG@10 and recall@10 of the posts found (the default hybrid retrieval), and how
often the rule's decision matches the label. The rule was written looking at these pairs, so a second
check is printed: each of the 15 demo questions (all standalone) asked right after the one before it,
judged by data/demo/eval/qrels.tsv.

Then the answers a reader gets to a follow-up that refers back (the built-in setup: extractive, no
model rewrite; the previous question asked and answered first, as in the chat): how often the answer
holds one of the follow-up's evidence quotes, is declined, or only repeats sentences of the previous
answer. On the 15 referring pairs of followups.jsonl and the 40 of followups_more.jsonl (tuning: the
rule and the quote were chosen on these) and on followups_heldout.jsonl (20 referring, written without
seeing the answer code; only reported, never tuned on). Last, follow-ups that refer back and that the
posts do not answer, which should be declined: followups_unanswerable.jsonl (30, tuning) and
followups_unanswerable_heldout.jsonl (15, held out). Figures, not asserts.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.answer import take_turn
from core.answer.question import needs_context
from core.config import Settings
from core.embed import get_embedder
from core.evaluate import load_qrels, load_queries
from core.evaluate.metrics import doc_ranking, evidence_found, ndcg_at_k, recall_at_k
from core.ingest import ingest_paths
from core.search import search
from core.store import Store

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"
STRATEGIES = ("as asked", "always joined", "joined when it refers back (shipped)")


def query_for(strategy: str, previous: str, followup: str) -> str:
    joined = f"{previous.strip()} {followup.strip()}"
    if strategy == "as asked":
        return followup
    if strategy == "always joined":
        return joined
    return joined if needs_context(followup) else followup


def _words(text: str) -> str:
    return " ".join("".join(c if c.isalnum() else " " for c in text.casefold()).split())


def answer_row(name: str, pairs: list[dict], settings: Settings, store: Store, embedder) -> dict:
    """How the follow-ups of `pairs` that refer back and have evidence (or are marked unanswerable) are
    answered."""
    counts = {"set": name, "follow-ups": 0, "evidence in answer": 0, "declined": 0, "repeats": 0}
    for pair in pairs:
        if not pair.get("refers") or not (pair.get("evidence") or pair.get("answerable") is False):
            continue
        first = take_turn(pair["previous"], settings, store=store, embedder=embedder).reply
        said = "".join(first)
        history = [{"role": "user", "content": pair["previous"]}, {"role": "assistant", "content": said}]
        reply = take_turn(pair["followup"], settings, store=store, embedder=embedder, history=history).reply
        text = "".join(reply)
        counts["follow-ups"] += 1
        if reply.mode != "extractive":
            counts["declined"] += 1
            continue
        counts["evidence in answer"] += bool(evidence_found([text], pair.get("evidence", []), 1))
        counts["repeats"] += all(_words(q.text) in _words(said) for q in reply.quotes)
    return counts


def markdown(rows: list[dict]) -> str:
    keys = list(dict.fromkeys(k for row in rows for k in row))
    cell = lambda v: f"{v:.3f}" if isinstance(v, float) else str(v)  # noqa: E731
    lines = ["| " + " | ".join(keys) + " |", "|" + " --- |" * len(keys)]
    lines += ["| " + " | ".join(cell(row.get(k, "")) for k in keys) + " |" for row in rows]
    return "\n".join(lines)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="inkwell-followups-") as tmp:
        settings = Settings.load({"data_dir": Path(tmp) / "db"}, environ={})
        store = Store(settings.data_dir)
        embedder = get_embedder(settings)
        print(ingest_paths([DEMO / "posts"], settings, store=store, embedder=embedder).summary())

        def ranked(text: str) -> list[str]:
            hits = search(text, settings, store=store, embedder=embedder).candidates
            return doc_ranking([h.post_id for h in hits])

        pairs = [json.loads(line) for line in (DEMO / "eval" / "followups.jsonl").read_text().splitlines()]
        queries = load_queries(DEMO / "eval" / "queries.jsonl")
        qrels = load_qrels(DEMO / "eval" / "qrels.tsv")
        held_out = [
            {"previous": queries[i - 1].text, "followup": q.text, "refers": False, "judged": qrels[q.id]}
            for i, q in enumerate(queries)
        ]
        for pair in pairs:
            pair["judged"] = {post: 2 if i == 0 else 1 for i, post in enumerate(pair["posts"])}

        for name, items in (
            ("follow-up pairs (30; the rule was written on these)", pairs),
            ("demo questions asked one after another (15, all standalone)", held_out),
        ):
            rows = []
            for strategy in STRATEGIES:
                groups = {"refers": [], "standalone": []}
                for item in items:
                    ranking = ranked(query_for(strategy, item["previous"], item["followup"]))
                    scores = (
                        ndcg_at_k(ranking, item["judged"], 10),
                        recall_at_k(ranking, item["judged"], 10),
                    )
                    groups["refers" if item["refers"] else "standalone"].append(scores)
                row = {"strategy": strategy}
                for group, scores in groups.items():
                    if scores:
                        row[f"{group} nDCG@10"] = sum(s[0] for s in scores) / len(scores)
                        row[f"{group} recall@10"] = sum(s[1] for s in scores) / len(scores)
                rows.append(row)
            right = sum(needs_context(item["followup"]) == item["refers"] for item in items)
            print(f"\n{name}: the rule's decision matches the label for {right} of {len(items)}")
            for item in items:
                if needs_context(item["followup"]) != item["refers"]:
                    print(
                        f"  judged {'referring' if needs_context(item['followup']) else 'standalone'}: "
                        f"{item['followup']!r}"
                    )
            print(markdown(rows))

        extractive = Settings.load({"data_dir": settings.data_dir, "answer_mode": "extractive"}, environ={})
        more, heldout, unanswerable, unanswerable_heldout = (
            [json.loads(line) for line in (DEMO / "eval" / name).read_text().splitlines()]
            for name in (
                "followups_more.jsonl",
                "followups_heldout.jsonl",
                "followups_unanswerable.jsonl",
                "followups_unanswerable_heldout.jsonl",
            )
        )
        right = sum(needs_context(pair["followup"]) == pair["refers"] for pair in heldout)
        print(
            f"\nheld-out follow-up pairs ({len(heldout)}): the rule's decision matches the label for {right}"
        )
        print("\nanswers to follow-ups that refer back (built-in setup, extractive):")
        print(
            markdown(
                [
                    answer_row("followups.jsonl (tuning)", pairs, extractive, store, embedder),
                    answer_row("followups_more.jsonl (tuning)", more, extractive, store, embedder),
                    answer_row("followups_heldout.jsonl (held out)", heldout, extractive, store, embedder),
                ]
            )
        )
        print("\nfollow-ups that refer back and that the posts do not answer (to be declined):")
        print(
            markdown(
                [
                    answer_row(
                        "followups_unanswerable.jsonl (tuning)", unanswerable, extractive, store, embedder
                    ),
                    answer_row(
                        "followups_unanswerable_heldout.jsonl (held out)",
                        unanswerable_heldout,
                        extractive,
                        store,
                        embedder,
                    ),
                ]
            )
        )


if __name__ == "__main__":
    main()
