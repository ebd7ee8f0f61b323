"""`inkwell export --static`: what it refuses, and that the page's ports compute what the server does.

The ports run in Node (installed with the page's runtime by `make static`): the page's keyword side scores
exactly as LanceDB's full-text index, its word tables give the relevance bar's words and languages as
core/answer/quotable.py and core/text/language.py do, and its WordPiece gives the bundled tokenizer's ids.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from core.answer import extractive
from core.answer.abstain import Signals, decide, thresholds_for
from core.config import Settings
from core.embed.multilingual import MODEL_ID as E5
from core.ingest import ingest_paths
from core.models import Hit
from core.publish.bundle import (
    FTS_STOP_WORDS,
    _rules,
    bm25_index,
    fts_tokens,
    lexicon,
    quantize,
    read_corpus,
    unit_flags,
)
from core.publish.model import MAX_TOKENS, weights_dir
from core.publish.site import ASSETS, runtime_dir
from core.store import Store
from core.text import detect_language, stemmer_for
from core.text.words import content_words, light_words
from tests.cli_support import run
from tests.conftest import DEMO

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
QUESTION_FILES = ("queries.jsonl", "heldout.jsonl", "offtopic.jsonl", "queries_de.jsonl", "queries_tr.jsonl")


def questions() -> list[str]:
    out = []
    for name in QUESTION_FILES:
        lines = (DEMO / "eval" / name).read_text(encoding="utf-8").splitlines()
        out += [json.loads(line)["text"] for line in lines if line.strip()]
    return out


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory, embedder) -> Path:
    """The demo's five project posts, ingested."""
    db = tmp_path_factory.mktemp("static-export") / "db"
    report = ingest_paths(
        [DEMO / "posts" / "projects"], Settings.load({"data_dir": db}, environ={}), embedder=embedder
    )
    assert report.ok, report.summary()
    return db


def node() -> str:
    path = shutil.which("node")
    if path is None or not (runtime_dir() / "wink-porter2-stemmer").is_dir():
        message = "Node or the static runtime is missing: run `make static`"
        if os.environ.get("CI", "").lower() in ("true", "1"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return path


def run_node(script: str, payload: dict, tmp_path: Path) -> dict:
    """`script` (an ES module reading `input`, printing JSON) with the page's core module and stemmer."""
    data = tmp_path / "input.json"
    data.write_text(json.dumps(payload), encoding="utf-8")
    stemmer = runtime_dir() / "wink-porter2-stemmer" / "src" / "wink-porter2-stemmer.js"
    program = (
        "import { createRequire } from 'node:module'; import { readFileSync } from 'node:fs';\n"
        f"import * as core from {json.dumps((ASSETS / 'inkwell-core.mjs').as_uri())};\n"
        f"const stem = createRequire(import.meta.url)({json.dumps(str(stemmer))});\n"
        f"const input = JSON.parse(readFileSync({json.dumps(str(data))}, 'utf8'));\n{script}"
    )
    done = subprocess.run(
        [node(), "--input-type=module", "-e", program], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# Refusals ---------------------------------------------------------------------------------------------


def test_a_multilingual_table_is_refused_naming_the_supported_model(tmp_path):
    db = tmp_path / "db"
    Store(db).ensure_chunks_table(E5, 384)
    result = run("export", "--static", str(tmp_path / "site"), data_dir=db)
    assert result.exit_code == 1
    assert "sentence-transformers/all-MiniLM-L6-v2 only" in result.output and E5 in result.output
    assert "Traceback" not in result.output and not (tmp_path / "site").exists()


def test_an_empty_data_dir_is_refused(tmp_path):
    result = run("export", "--static", str(tmp_path / "site"), data_dir=tmp_path / "db")
    assert result.exit_code == 1 and "ingest posts first" in result.output


def test_a_missing_browser_runtime_names_make_static(projects, tmp_path, monkeypatch):
    monkeypatch.setenv("INKWELL_STATIC_RUNTIME", str(tmp_path / "empty"))
    result = run("export", "--static", str(tmp_path / "site"), data_dir=projects)
    assert result.exit_code == 1 and "make static" in result.output
    assert "Traceback" not in result.output


def test_a_file_is_no_static_site_folder(projects, tmp_path):
    target = tmp_path / "chunks.json"
    target.write_text("keep me", encoding="utf-8")
    result = run("export", "--static", str(target), data_dir=projects)
    assert result.exit_code == 1 and "is a file" in result.output
    assert target.read_text(encoding="utf-8") == "keep me"


def test_the_summary_is_two_lines_not_an_escaped_line_break(projects, tmp_path):
    if not (runtime_dir() / "onnxruntime-web").is_dir():
        node()  # skips (or fails under CI) naming `make static`, as the ports' tests do
    result = run("export", "--static", str(tmp_path / "site"), data_dir=projects)
    assert result.exit_code == 0, result.output
    wrote, tag = result.stdout.splitlines()
    assert wrote.startswith("wrote a static site of ") and "\\n" not in wrote
    assert tag.startswith("On your blog, with this folder served at ") and "data-static" in tag


def test_a_place_it_cannot_write_is_named_without_a_traceback(projects, tmp_path):
    if not (runtime_dir() / "onnxruntime-web").is_dir():
        node()  # skips (or fails under CI) naming `make static`, as the ports' tests do
    (tmp_path / "a-file").write_text("keep me", encoding="utf-8")
    result = run("export", "--static", str(tmp_path / "a-file" / "site"), data_dir=projects)
    assert result.exit_code == 1, result.output
    assert "could not write the static site to" in result.output and "Not a directory" in result.output


def test_the_owners_decline_text_is_the_pages_as_the_servers(projects, tmp_path):
    # The decline text saved on the Settings page replaced the built-in one on the server only: the page
    # still said "Darüber habe ich nicht geschrieben, …" where the server gave the author's words.
    from core.answer.owner import save_owner
    from core.answer.reply import NO_ANSWER

    if not (runtime_dir() / "onnxruntime-web").is_dir():
        node()  # skips (or fails under CI) naming `make static`, as the ports' tests do
    db = tmp_path / "db"
    shutil.copytree(projects, db)
    own = "Dazu habe ich leider noch nichts geschrieben – frag mich etwas über meine Werkstatt."
    save_owner(Store(db), {"decline_text": own})
    result = run("export", "--static", str(tmp_path / "site"), data_dir=db)
    assert result.exit_code == 0, result.output
    declines = json.loads((tmp_path / "site" / "data" / "index.json").read_text(encoding="utf-8"))["rules"]
    assert declines["no_answer"]["de"] == own
    assert declines["no_answer"]["en"] == NO_ANSWER["en"]  # other languages keep the built-in ones


# The data -------------------------------------------------------------------------------------------


def test_int8_vectors_keep_their_cosines():
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(200, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ints, scales = quantize(vectors)
    restored = ints.astype(np.float32) * scales[:, None]
    assert ints.dtype == np.int8 and np.abs(ints).max() == 127
    cosines = np.sum(restored * vectors, axis=1) / np.linalg.norm(restored, axis=1)
    assert np.min(cosines) > 0.998
    query = vectors[0]
    assert np.max(np.abs(restored @ query - vectors @ query)) < 0.01


def test_the_keyword_side_scores_exactly_as_lancedb(projects):
    """BM25 over the exported statistics equals LanceDB's `_score` for every hit of every demo question."""
    store = Store(projects)
    corpus = read_corpus(store)
    index = bm25_index(corpus.chunks)
    stem = stemmer_for("en")
    row = {c["chunk_id"]: n for n, c in enumerate(corpus.chunks)}
    lengths = index["lengths"]
    avgdl, total = sum(lengths) / len(lengths), len(lengths)
    checked = 0
    for question in questions()[:35]:
        terms = list(dict.fromkeys(fts_tokens(question, stem)))
        for hit in store.keyword_search(question, 50):
            doc = row[hit["chunk_id"]]
            score = 0.0
            for term in terms:
                tf = dict((d, f) for d, f in index["postings"].get(term, [])).get(doc, 0)
                if tf:
                    df = len(index["postings"][term])
                    idf = np.log(1 + (total - df + 0.5) / (df + 0.5))
                    score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * lengths[doc] / avgdl))
            assert score == pytest.approx(hit["_score"], abs=1e-4), (question, hit["chunk_id"])
            checked += 1
    assert checked > 200


def test_the_page_reads_words_and_languages_as_the_server_does(projects, tmp_path):
    corpus = read_corpus(Store(projects))
    asked = questions()
    passages = [c["text"] for c in corpus.chunks[:20]]
    out = run_node(
        """
        const L = core.makeLexicon(input.lexicon);
        const sorted = (s) => [...s].sort();
        console.log(JSON.stringify({
          languages: input.texts.map((t) => core.detectLanguage(t, L)),
          content: input.texts.map((t) => sorted(core.contentWords(t, L))),
          light: input.texts.map((t) => sorted(core.lightWords(t, L))),
          tokens: input.texts.map((t) => core.ftsTokens(t, stem, new Set(input.stop))),
        }));
        """,
        {"lexicon": lexicon(corpus.chunks), "texts": asked + passages, "stop": sorted(FTS_STOP_WORDS)},
        tmp_path,
    )
    texts = asked + passages
    assert out["languages"] == [detect_language(t) for t in texts]
    # Lemmas of words the corpus never uses may differ (simplemma's rules are not ported): compare the
    # passages exactly, and the questions where they meet the corpus's words.
    stem = stemmer_for("en")
    for n, text in enumerate(texts):
        if n >= len(asked):
            assert out["content"][n] == sorted(content_words(text)), text
            assert out["light"][n] == sorted(light_words(text)), text
    corpus_words = set().union(*(content_words(p) for p in (c["text"] for c in corpus.chunks)))
    for n, question in enumerate(asked):  # what coverage and the missing-word rule compare
        assert set(out["content"][n]) & corpus_words == content_words(question) & corpus_words, question
    same_count = sum(len(out["content"][n]) == len(content_words(t)) for n, t in enumerate(asked))
    assert same_count >= 0.9 * len(asked)
    same_tokens = sum(out["tokens"][n] == fts_tokens(t, stem) for n, t in enumerate(texts))
    # The npm Porter2 stemmer is an older Snowball English than snowballstemmer 3 ("added": "ad", not
    # "add"; 393 of 170,785 dictionary words differ): 121 of these 125 texts stem identically.
    assert same_tokens >= 0.95 * len(texts)


def test_the_page_leaves_out_the_third_person_as_the_server_does(projects, tmp_path):
    # The sentences are compared with what a question asks about, without "she" or "the author": the
    # page must leave out the same words, or it quotes other sentences than the server.
    from core.text.languages import language

    asked = [
        *questions(),
        "Why did the author quit Instagram?",
        "What is the writer's favourite wood?",
        "Who taught HER woodworking, and is he alive?",
        "she?",
        "What did Shepherd say about heathers?",  # words that only contain "she", "he" or "her"
        "Warum hat sie aufgehört?",
    ]
    out = run_node(
        "const L = core.makeLexicon(input.lexicon);"
        "console.log(JSON.stringify(input.texts.map((t) => core.withoutThirdPerson(t, L))));",
        {"lexicon": lexicon(read_corpus(Store(projects)).chunks), "texts": asked},
        tmp_path,
    )
    expected = [language(detect_language(q)).without_third_person(q) for q in asked]
    assert out == expected
    assert sum(a != e for a, e in zip(asked, expected, strict=True)) >= 8  # the rule was exercised
    assert expected[-6:-1] == [
        "Why did quit Instagram?",
        "What is favourite wood?",
        "Who taught woodworking, and is alive?",
        "she?",
        "What did Shepherd say about heathers?",
    ]


def test_the_page_checks_a_questions_own_words_as_the_server_does(projects, tmp_path):
    # The bar's words of a question in another language than English: without its function and question
    # words and elided articles (abstain.py `asked_words`). The page counted "quelle", "est", "la" as
    # asked and found, and answered "Quelle est la capitale de l'Australie ?" on a French blog.
    from core.answer.abstain import asked_words

    asked = [
        "Quelle est la capitale de l'Australie ?",
        "Qu'est-ce que le levain ?",
        "Comment se passe ta journée de boulange ?",
        "Was ist die Hauptstadt von Australien?",
        "Welche Pflanzen empfiehlst du für Bienen?",
        "¿Cuál es la capital de Australia?",
        "Why did the author quit Instagram?",
        "What is the capital of Australia?",
    ]
    out = run_node(
        "const L = core.makeLexicon(input.lexicon);"
        "const engine = { L, about: (q) => core.withoutThirdPerson(q, L) };"
        "const words = (q) => [...core.Engine.prototype.askedWords.call(engine, q, core.detectLanguage(q, L))];"
        "console.log(JSON.stringify(input.texts.map((q) => words(q).sort())));",
        {"lexicon": lexicon(read_corpus(Store(projects)).chunks), "texts": asked},
        tmp_path,
    )
    assert out == [sorted(asked_words(q, detect_language(q))) for q in asked]
    assert out[:2] == [["australie", "capitale"], ["levain"]]


def followup_pairs() -> list[tuple[str, str]]:
    """(previous question, follow-up) pairs of the tuning follow-up sets."""
    pairs = []
    for name in ("followups.jsonl", "followups_more.jsonl", "followups_unanswerable.jsonl"):
        for line in (DEMO / "eval" / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                pairs.append((row["previous"], row["followup"]))
    return pairs


def test_the_page_searches_a_follow_up_as_the_server_does_without_a_model(projects, tmp_path):
    # The page has no model: a follow-up must be joined, searched again for "tell me more", or searched
    # as asked exactly as core/answer/question.py decides with the built-in model.
    from core.answer.question import followup_query

    said = "I keep a jar on the bench. Every mistake costs a dollar."
    conversations = [
        [{"role": "user", "content": previous}, {"role": "assistant", "content": said}]
        for previous, _ in followup_pairs()
    ]
    asked = [followup for _, followup in followup_pairs()]
    more = ["Tell me more.", "go on", "Weiter!", "dis-m'en plus", "cuéntame más", "devam et", "more?",
            "Dimmi di più", "もっと教えて", "Расскажи подробнее", "继续"]  # fmt: skip
    for question in [*more, *questions()[:40]]:  # standalone questions, and requests for more
        conversations.append(conversations[len(asked) % 7])
        asked.append(question)
    # "tell me more" twice: the last real question again, with both answers said since.
    conversations.append([*conversations[0], {"role": "user", "content": "tell me more"}, {"role": "assistant", "content": "More."}])  # fmt: skip
    asked.append("go on")
    conversations += [[], [{"role": "assistant", "content": said}]]  # nothing asked before
    asked += ["And the cost?", "tell me more"]

    # "tell me more" a fifth time still finds the question, and after a joined follow-up it searches the
    # join: the last real question referred back.
    def turn(question: str, answer: str) -> list[dict]:
        return [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]

    first = turn("What is the mistake jar?", said)
    conversations.append([*first, *turn("tell me more", "x") * 4])
    conversations.append([*first, *turn("How much money is in it now?", "y")])
    asked += ["tell me more", "tell me more"]
    out = run_node(
        "const L = core.makeLexicon(input.lexicon);"
        "console.log(JSON.stringify(input.asked.map((q, i) => core.followupQuery(q, input.conversations[i], L))));",
        {
            "lexicon": lexicon(read_corpus(Store(projects)).chunks),
            "asked": asked,
            "conversations": conversations,
        },
        tmp_path,
    )
    settings = Settings.load({"data_dir": projects}, environ={})
    expected = [
        followup_query(q, c, settings, use_model=False) for q, c in zip(asked, conversations, strict=True)
    ]
    assert [(o["query"], o["followUp"]) for o in out] == expected
    kinds = [e[1] for e in expected]  # every kind exercised, so a port that never joins would fail
    assert kinds.count("joined") >= 20 and kinds.count("more") >= 12 and kinds.count("") >= 40
    assert out[-5]["said"] == f"{said}\nMore."
    assert out[-5]["query"] == followup_pairs()[0][0]
    assert out[-2]["query"] == "What is the mistake jar?" and out[-2]["said"].count("x") == 4
    assert out[-1]["query"] == "What is the mistake jar? How much money is in it now?"


def test_the_pages_bar_decides_as_the_servers(tmp_path):
    """The page's copy of `decide`, on a grid of signals under bars that differ in each field it reads
    (the shipped bar, one whose close sentence may miss any word, one that allows none missing)."""
    shipped = thresholds_for(MINILM)
    bars = [
        shipped,
        dataclasses.replace(shipped, max_missing_close=1.0, max_missing=0.34),
        dataclasses.replace(shipped, max_missing_close=0.0, similarity=0.5, supported=0.3),
    ]
    cases = [
        Signals(
            MINILM, similarity, quotable, asked, [f"w{i}" for i in range(missing)], [], names, False, near
        )
        for similarity in (0.2, 0.3, 0.36, 0.5, 0.6, 0.7)
        for asked in (0, 1, 2, 3, 4, 6)
        for missing in sorted({0, 1, asked // 2, asked})
        if missing <= asked
        for quotable in (True, False)
        for names in ([], ["Stephen King"])
        for near in ({}, {"w0": 0.9, "w1": 0.3}, {"w0": 0.2, "w1": 0.6, "w2": 0.65})  # found by meaning
    ]
    out = run_node(
        "const decide = core.Engine.prototype.decide;"
        "console.log(JSON.stringify(input.bars.map((b) => input.cases.map((s) => decide(s, b)[0]))));",
        {
            "bars": [_rules(MINILM, bar)["thresholds"] for bar in bars],
            "cases": [
                {
                    "similarity": s.similarity,
                    "quotable": s.quotable,
                    "asked": s.asked,
                    "missing": s.missing,
                    "shared": s.shared,
                    "unknownNames": s.unknown_names,
                    "otherLanguage": s.other_language,
                    "near": s.near,
                }
                for s in cases
            ],
        },
        tmp_path,
    )
    expected = [[decide(s, bar)[0] for s in cases] for bar in bars]
    assert out == expected
    # The bars decide differently, so the grid tells them apart (a port ignoring a field would fail).
    assert len({tuple(row) for row in expected}) == len(bars)


PASSAGE_TEXTS = (
    # German: "Das hat …" leans back, "Der Lehm …" takes up the sentence before.
    "Ich habe im Winter einen Lehmofen im Garten hinter dem Haus gebaut. Das hat drei Wochenenden gedauert, "
    "weil der Lehm so langsam trocknet. Der Lehm kam aus einer Grube am Fluss hinter dem alten Dorf.\n\n"
    "Im Frühling backe ich darin jeden Samstag Brot für alle Nachbarn in unserer Straße.",
    # French: "Cela …" leans back, "Voici …" announces the list.
    "J'ai construit un four à pain dans le jardin l'hiver dernier avec mon voisin. Cela m'a pris trois "
    "week-ends, parce que l'argile sèche très lentement. Voici ce que j'ai appris en le construisant\n\n"
    "- L'argile doit venir de la rivière derrière le village.\n- Le sable doit être fin et bien sec.",
    # English, ending on a lead-in whose list is in another chunk: no passage ends on it.
    "I wrap my two beehives in black roofing felt every November. The felt soaks up the winter sun and "
    "keeps the cluster warm. For the record, prices at the hardware store this autumn for a roll of felt:",
)


def test_the_pages_passages_read_each_chunks_language_as_the_server(tmp_path):
    """The page's `passage` on the export's unit flags picks the sentences the server's `_passage` picks,
    for every anchor of German, French and English chunks (the page read English openers only)."""
    expected, cases = [], []
    for text in PASSAGE_TEXTS:
        hits = [Hit("p", "A Post", "writings", "p#0000", "", text, [], 1.0, 1)]
        units = extractive._units(hits)
        langs = extractive.chunk_languages(hits)
        flags = unit_flags(text, "en")
        assert [(u.start, u.text) for u in units] == [(start, unit) for start, unit, _ in flags]
        page_units = [
            {
                "hit": 0,
                "index": i,
                "start": start,
                "text": unit,
                "words": len(unit.split()),
                "readable": bool(f & 1),
                "signpost": bool(f & 2),
                "lends": bool(f & 4),
                "leansBack": bool(f & 8),
                "takesUp": bool(f & 16),
            }
            for i, (start, unit, f) in enumerate(flags)
        ]
        for anchor in range(len(units)):
            expected.append(extractive._passage(units, hits, langs, anchor, extractive.MAX_WORDS))
            cases.append({"text": text, "units": page_units, "anchor": anchor})
    out = run_node(
        "const passage = core.Engine.prototype.passage;"
        "console.log(JSON.stringify(input.cases.map((c) => passage.call("
        "{ chunks: [{ text: c.text }], rules: { max_words: input.maxWords }, nextChunks: () => [] },"
        " c.units, [{ chunk: 0 }], c.anchor))));",
        {"cases": cases, "maxWords": extractive.MAX_WORDS},
        tmp_path,
    )
    assert out == expected
    # The cases hold what tells the languages apart: German "Das hat …" and "Der Lehm …" and French
    # "Cela …" start their passage a sentence earlier; the English lead-in ends no passage.
    german, french, english = expected[:4], expected[4:9], expected[9:]
    assert german[1][0] == 0 and german[2][0] == 1 and french[1][0] == 0, expected
    assert english and all(p[-1] != 2 for p in english if p) and english[2] == [], expected


def test_the_pages_wordpiece_gives_the_bundled_tokenizers_ids(tmp_path):
    from tokenizers import Tokenizer

    texts = [
        *questions(),
        "Café déjà-vu — naïve coöperation, 東京 and emoji 🦆 in one line\tand\u200btabs",
        "x" * 120,
        "word " * 400,
    ]
    tokenizer = Tokenizer.from_file(str(weights_dir() / "tokenizer.json"))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.no_padding()
    out = run_node(
        "const wp = new core.WordPiece(input.tokenizer, input.max);"
        "console.log(JSON.stringify(input.texts.map((t) => wp.encode(t))));",
        {
            "tokenizer": json.loads((weights_dir() / "tokenizer.json").read_text(encoding="utf-8")),
            "max": MAX_TOKENS,
            "texts": texts,
        },
        tmp_path,
    )
    assert out == [tokenizer.encode(t).ids for t in texts]
