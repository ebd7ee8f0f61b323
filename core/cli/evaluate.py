"""`inkwell eval`: retrieval quality of configurations side by side."""

from __future__ import annotations

import sys
from typing import Any

import click

from core.cli.main import (
    CHUNK_TOKENS,
    HITS,
    command,
    listed,
    main,
    settings_for,
    shorten,
)
from core.cli.output import MULTILINE, echo, print_json, safe
from core.config import RERANKERS, RETRIEVAL_MODES


def _modes(values: tuple[str, ...], default: str) -> list[str]:
    """--mode values, repeatable and/or comma-separated, in order, without repeats."""
    return listed(values, RETRIEVAL_MODES, default, "'--mode'")


@command(main, "eval")
@click.option(
    "--queries", required=True, type=click.Path(exists=True, dir_okay=False), help="JSONL of {id, text}."
)
@click.option(
    "--qrels",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="TSV query_id, doc_id, score.",
)
@click.option("--k", type=HITS, default=10, show_default=True, help="Cut-off for recall@k.")
@click.option(
    "--mode",
    "modes",
    multiple=True,
    help="dense, fts and/or hybrid (repeatable or comma-separated, e.g. dense,fts,hybrid): one row "
    "per mode. Default: the retrieval_mode setting.",
)
@click.option(
    "--rerank",
    "rerankers",
    multiple=True,
    help="none, llm and/or cross-encoder (repeatable or comma-separated, e.g. none,llm): one row per "
    "mode and reranker, named like hybrid+llm. Default: the reranker setting (none).",
)
@click.option(
    "--fusion",
    "fusions",
    multiple=True,
    help="score and/or rrf (repeatable or comma-separated): hybrid rows per fusion. "
    "Default: the fusion setting.",
)
@click.option(
    "--chunk-tokens",
    "chunk_tokens",
    type=CHUNK_TOKENS,
    multiple=True,
    help="Chunk sizes to compare (repeatable), each searched in a scratch table under "
    "<data-dir>/eval-tables (the stored table is never changed). Default: the stored table as it is.",
)
@click.option(
    "--posts",
    "posts_path",
    type=click.Path(exists=True),
    help="Evaluate on these posts (file or folder, ingested into scratch tables), not the stored table.",
)
@click.option("--per-query", is_flag=True, help="Also print each query's nDCG@10 and evidence found per row.")
@click.option(
    "--answers",
    is_flag=True,
    help='Also score the answers a reader would get (token F1 against each query\'s "answer", evidence '
    "in the answer, invented words, grounding, no-answer rate, seconds), one row per --answer-mode.",
)
@click.option(
    "--answer-mode",
    "answer_modes",
    multiple=True,
    help="With --answers: extractive, generative and/or naive (the best two sentences by cosine and word "
    "overlap, a baseline; repeatable or comma-separated). Default: extractive and generative. "
    "Generative answers with the built-in model take ~10 s each on 2 cores.",
)
@click.option(
    "--off-topic",
    "off_topic",
    type=click.Path(exists=True, dir_okay=False),
    help="With --answers: JSONL of questions the posts do not answer ({id, text, kind}), for the "
    "no-answer rate.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (one line per row).")
def eval_cmd(
    queries: str,
    qrels: str,
    k: int,
    modes: tuple[str, ...],
    rerankers: tuple[str, ...],
    fusions: tuple[str, ...],
    chunk_tokens: tuple[int, ...],
    posts_path: str | None,
    per_query: bool,
    answers: bool,
    answer_modes: tuple[str, ...],
    off_topic: str | None,
    as_json: bool,
    data_dir: str | None,
) -> None:
    """Measure retrieval against judged queries: recall@k, MRR@10, nDCG@10, evidence hit@k, latency.

    One row per configuration (every combination of --mode, --fusion, --rerank and --chunk-tokens), side
    by side; with a dense row, the last column is each row's nDCG@10 over dense's.
    """
    from core.config import FUSIONS
    from core.evaluate import compare, config_grid, format_table, load_qrels, load_queries, report_to_json

    settings = settings_for(data_dir)
    configs = config_grid(
        settings,
        _modes(modes, settings.retrieval_mode),
        listed(fusions, FUSIONS, settings.fusion, "'--fusion'"),
        listed(rerankers, RERANKERS, settings.reranker, "'--rerank'"),
        list(chunk_tokens),
    )
    loaded, judgements = load_queries(queries), load_qrels(qrels)
    posts = _eval_posts(posts_path) if posts_path else None
    with click.progressbar(length=1, label="Evaluating", file=sys.stderr) as bar:

        def progress(done: int, total: int, message: str) -> None:
            bar.length = total
            bar.update(done - bar.pos)

        comparison = compare(loaded, judgements, configs, settings, k=k, posts=posts, progress=progress)
    for note in comparison.notes:
        echo(note, fg="yellow", err=True)
    for result in comparison.results:
        for note in result.notes:
            echo(f"{result.config.name}: {note}", fg="yellow", err=True)
    if as_json:
        for result in comparison.results:
            extra = {"overrides": result.config.overrides, "chunks": result.chunks, "notes": result.notes}
            print_json({**report_to_json(result.report), **extra})
    baseline = comparison.baseline if len(configs) > 1 else None
    if not as_json:
        echo(format_table(comparison.reports, baseline), keep=MULTILINE)
    if per_query and not as_json:
        echo()
        echo(_per_query_table(comparison), keep=MULTILINE)
    if answers:
        modes = listed(answer_modes, ("extractive", "generative", "naive"), "extractive", "'--answer-mode'")
        if not answer_modes:
            modes = ["extractive", "generative"]
        reports = _answer_reports(loaded, off_topic, settings, modes, posts)
        if as_json:
            for report in reports:
                print_json(
                    {
                        "answer_mode": report.mode,
                        **report.summary(),
                        "rows": [r.to_json() for r in report.rows],
                    }
                )
            return
        from core.evaluate import answer_table

        echo()
        echo(answer_table(reports), keep=MULTILINE)
        if per_query:
            echo()
            echo(_answer_rows(reports), keep=MULTILINE)


def _answer_reports(
    queries: list[Any], off_topic: str | None, settings: Any, modes: list[str], posts: list[Any] | None
) -> list[Any]:
    """Answers per mode over the stored table, or a scratch table of --posts."""
    from core.embed import embedder_for_store
    from core.evaluate import load_queries, posts_table, run_answer_eval
    from core.store import Store

    if not any(q.answer or q.evidence for q in queries):
        echo('no query has an "answer" or "evidence": only the no-answer rate and time count', err=True)
    stored = Store(settings.data_dir)
    embedder = embedder_for_store(settings, stored.model_id())
    store = posts_table(posts, settings, embedder=embedder) if posts else stored
    if store.chunks is None:
        raise click.ClickException("nothing is stored yet: ingest posts first (or give --posts)")
    extra = load_queries(off_topic) if off_topic else []
    with click.progressbar(length=1, label="Answering", file=sys.stderr) as bar:

        def progress(done: int, total: int, message: str) -> None:
            bar.length = total
            bar.update(done - bar.pos)

        return run_answer_eval(
            queries, extra, settings, modes, store=store, embedder=embedder, progress=progress
        )


def _answer_rows(reports: list[Any]) -> str:
    """Each question's reply per mode: answered or not, F1, evidence, invented share, and the answer."""
    lines = []
    for report in reports:
        for row in report.rows:
            scores = " ".join(
                f"{name} {value:.2f}" if isinstance(value, float) else f"{name} {value}"
                for name, value in (("f1", row.f1), ("evidence", row.evidence), ("invented", row.invented))
                if value is not None
            )
            status = "no answer" if row.no_answer else row.replied
            topic = "on" if row.on_topic else f"off ({row.kind})" if row.kind else "off"
            lines.append(f"{report.mode:<10} {safe(row.query_id):<5} {topic:<16} {status:<10} {scores}")
            lines.append(f"{'':<16}{safe(shorten(row.answer, 140))}")
    return "\n".join(lines)


def _eval_posts(path: str) -> list[Any]:
    from core.parse import parse_paths

    parsed = parse_paths([path])
    for error in parsed.errors:
        echo(f"skipped {error}", fg="yellow", err=True)
    if not parsed.posts:
        raise click.ClickException(f"no posts could be read from {path}")
    return parsed.posts


def _per_query_table(comparison: Any) -> str:
    """Each query's nDCG@10 per configuration, with the evidence quotes found (n/m) when it has some."""
    ndcg = "ndcg@10"
    names = [r.config.name for r in comparison.results]
    rows = [["query", *names, "text"]]
    for i, query in enumerate(comparison.queries):
        cells = [safe(query.id)]
        for result in comparison.results:
            scored = result.report.per_query[i]
            value = scored.metrics.get(ndcg)
            cell = "-" if value is None else f"{value:.3f}"
            if query.evidence:
                cell += f" ev {len(scored.evidence_found)}/{len(query.evidence)}"
            cells.append(cell)
        rows.append([*cells, safe(shorten(query.text, 60))])
    widths = [max(len(row[col]) for row in rows) for col in range(len(rows[0]) - 1)]
    lines = ["  ".join([*(c.ljust(w) for c, w in zip(row, widths, strict=False)), row[-1]]) for row in rows]
    return "\n".join(line.rstrip() for line in lines)
