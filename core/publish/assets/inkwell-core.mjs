// Inkwell's answer rules for the browser: hybrid retrieval (core/search/retrieve.py, route.py), the
// extractive answer (core/answer/extractive.py) and the relevance bar (core/answer/abstain.py), ported
// one function at a time over the index `inkwell export --static` writes (core/publish/bundle.py).
// Pure: no DOM and no model here, so Node can check it too. Text is data, never markup.

const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)?/gu;
const LETTERS = /[\p{L}]+(?:['’][\p{L}]+)?/gu;
const LETTER = /\p{L}/gu;
const TOKEN = /[\p{L}\p{N}]+/gu;
const NON_LATIN =
  /[\u0370-\u03ff\u0400-\u04ff\u0590-\u05ff\u0600-\u06ff\u0900-\u097f\u0e00-\u0e7f\u1100-\u11ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]/gu;
const SCRIPTS = [
  ["ja", [[0x3040, 0x30ff]]],
  ["ko", [[0xac00, 0xd7af], [0x1100, 0x11ff]]],
  ["zh", [[0x4e00, 0x9fff], [0x3400, 0x4dbf]]],
  ["ru", [[0x0400, 0x04ff]]],
  ["el", [[0x0370, 0x03ff]]],
  ["ar", [[0x0600, 0x06ff]]],
  ["he", [[0x0590, 0x05ff]]],
  ["hi", [[0x0900, 0x097f]]],
  ["th", [[0x0e00, 0x0e7f]]],
];
const UND = "und";
const SAMPLE_CHARS = 2000;
const HINT_WEIGHT = 0.5;
const HINT_CAP = 3.0;
const QUESTION_END = /\?["'”’)\]]*$/;
const NAME = /(?<=[^\s.!?:;"“(¿¡])\s+([A-Z][\p{L}\p{N}_’'-]*[\p{L}\p{N}_])/gu;

const clamp = (x) => Math.max(0, Math.min(1, x));
const splitWords = (text) => text.split(/\s+/).filter(Boolean);
const normalised = (text) => splitWords(text).join(" ");

/** The engine's word tables, made once from the index's lexicon. */
export function makeLexicon(lex) {
  const wordLangs = new Map();
  for (const [lang, words] of Object.entries(lex.language_words)) {
    for (const w of words) wordLangs.set(w, [...(wordLangs.get(w) || []), lang]);
  }
  return {
    lemmas: new Map(Object.entries(lex.lemmas)),
    stop: new Set(lex.stopwords),
    light: new Set(lex.light_stopwords),
    filler: new Set(lex.filler),
    heads: new Map(Object.entries(lex.heads)),
    wordLangs,
    hints: Object.entries(lex.letter_hints),
    functionWords: Object.fromEntries(Object.entries(lex.function_words).map(([k, v]) => [k, new Set(v)])),
    // words.py ELIDED: "l'australie" is "australie" to the relevance bar (older exports: none)
    elided: new RegExp(`^(?:${(lex.elided || []).join("|") || "(?!)"})['’](?=\\p{L})`, "u"),
    thirdPerson: Object.fromEntries(
      Object.entries(lex.third_person || {}).map(([lang, words]) => {
        const alts = [...words].sort((a, b) => b.length - a.length).map(escapeRegExp).join("|");
        return [lang, new RegExp(`(?<![\\p{L}\\p{N}_])(?:${alts})(?:['’]s)?(?![\\p{L}\\p{N}_])`, "giu")];
      }),
    ),
    followup: makeFollowup(lex.followup),
  };
}

function makeFollowup(f) {
  const cues = Object.fromEntries(
    Object.entries(f.cues).map(([lang, c]) => [
      lang,
      {
        referring: new Set(c.referring),
        continuations: c.continuations,
        more: new Set(c.more_requests),
        questionWords: new Set(c.question_words),
      },
    ]),
  );
  return { cues, contentWords: f.content_words };
}

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** `question` without its words for a person spoken of ("she", "the author"), as the server compares it
 * with the posts (core/text/languages.py Language.without_third_person); unchanged when nothing is left. */
export function withoutThirdPerson(question, L) {
  const pattern = L.thirdPerson[detectLanguage(question, L)];
  if (!pattern) return question;
  const left = normalised(question.replace(pattern, " ")).replace(/ ([,.;:!?])/g, "$1");
  return left.replace(/^[ ?!.]+|[ ?!.]+$/g, "") ? left : question;
}

// Languages (core/text/language.py) -------------------------------------------------------------------

function scriptOf(ch) {
  const code = ch.codePointAt(0);
  for (const [lang, ranges] of SCRIPTS) if (ranges.some(([lo, hi]) => lo <= code && code <= hi)) return lang;
  return null;
}

function count(haystack, needle) {
  return haystack.split(needle).length - 1;
}

/** Counter.most_common(): by count, ties in insertion order. */
function mostCommon(map) {
  return [...map.entries()].map((e, i) => [...e, i]).sort((a, b) => b[1] - a[1] || a[2] - b[2]);
}

export function detectLanguage(text, L) {
  const sample = Array.from(text).slice(0, SAMPLE_CHARS).join("");
  const letters = (sample.match(LETTER) || []).length;
  if (!letters) return UND;
  const foreign = sample.match(NON_LATIN) || [];
  if (foreign.length >= 0.3 * letters) {
    const scripts = new Map();
    for (const ch of foreign) {
      const s = scriptOf(ch);
      if (s) scripts.set(s, (scripts.get(s) || 0) + 1);
    }
    if (scripts.get("ja")) return "ja";
    const top = mostCommon(scripts)[0][0];
    if (top === "ru" && /[іїєґІЇЄҐ]/.test(sample)) return "uk";
    return top;
  }
  const lower = sample.toLowerCase();
  const words = lower.match(LETTERS) || [];
  const scores = new Map();
  for (const w of words) for (const lang of L.wordLangs.get(w) || []) scores.set(lang, (scores.get(lang) || 0) + 1);
  const hints = new Map();
  for (const [mark, langs] of L.hints) {
    const n = count(lower, mark);
    if (n) for (const lang of langs) hints.set(lang, (hints.get(lang) || 0) + n * HINT_WEIGHT);
  }
  for (const [lang, bonus] of hints) scores.set(lang, (scores.get(lang) || 0) + Math.min(bonus, HINT_CAP));
  if (!scores.size) return UND;
  const ranked = mostCommon(scores);
  const [best, top] = ranked[0];
  const runnerUp = ranked.length > 1 ? ranked[1][1] : 0;
  if (top < 1 || top <= runnerUp || (words.length > 40 && top < 1.15 * runnerUp)) return UND;
  return best;
}

const differ = (a, b) => a !== UND && b !== UND && a !== b;

// Follow-ups (core/answer/question.py, without a model: a follow-up is joined to the question before) --------

const NO_CUES = { referring: new Set(), continuations: [], more: new Set(), questionWords: new Set() };
const NOT_WORD = /[^\p{L}\p{M}\p{N}_'\- ]+/gu;

/** The follow-up cues of the question's language: every language's when too short to tell, none for a
 * language without a record (as core/text/languages.py `language`). */
function cuesOf(code, L) {
  return L.followup.cues[code] || NO_CUES;
}

/** Whether `question` cannot be understood without the previous turn (question.py `needs_context`). */
export function needsContext(question, L) {
  const text = normalised(question.toLowerCase().replaceAll("’", "'"));
  if (!text) return false;
  const code = detectLanguage(question, L);
  const cues = cuesOf(code, L);
  if (cues.continuations.some((c) => text.startsWith(c))) return true;
  const words = text.match(LETTERS) || [];
  const english = code === "en" || code === UND;
  const stop = english ? L.stop : L.functionWords[code] || new Set();
  const content = words.filter((w) => !stop.has(w) && !cues.questionWords.has(w) && !cues.referring.has(w));
  if (content.length <= 1) return true;
  const limit = english ? L.followup.contentWords + 1 : L.followup.contentWords;
  return content.length <= limit && words.some((w) => cues.referring.has(w));
}

/** Whether the whole question asks for more of the last answer ("tell me more", question.py `asks_for_more`). */
export function asksForMore(question, L) {
  const text = normalised(question.toLowerCase().replaceAll("’", "'").replace(NOT_WORD, " "));
  return Boolean(text) && cuesOf(detectLanguage(question, L), L).more.has(text);
}

/** The conversation's user and assistant messages with text ({role, content}), every one of them: "tell
 * me more" four times must still find the question it goes on with (question.py `_turns`). */
export function cleanHistory(history) {
  return (history || [])
    .filter((m) => m && (m.role === "user" || m.role === "assistant") && m.content)
    .map((m) => ({ role: m.role, content: String(m.content) }));
}

function lastQuestionAt(turns, L) {
  for (let i = turns.length - 1; i >= 0; i--) {
    if (turns[i].role === "user" && !asksForMore(turns[i].content, L)) return i;
  }
  return -1;
}

/** What to search for to answer `question` after `history`, without a model (question.py
 * `followup_query` with the built-in model): {query, followUp, said}. A request for more searches the
 * last real question again as it was searched (joined to the one before when it referred back), `said`
 * holding the answers given since; a follow-up that refers back is joined to the last real question;
 * any other question is searched as asked. */
export function followupQuery(question, history, L) {
  const turns = cleanHistory(history);
  const at = lastQuestionAt(turns, L);
  const previous = at >= 0 ? turns[at].content : "";
  if (asksForMore(question, L) && previous) {
    const before = needsContext(previous, L) ? lastQuestionAt(turns.slice(0, at), L) : -1;
    const query = before >= 0 ? `${turns[before].content.trim()} ${previous.trim()}` : previous;
    const said = turns.slice(at + 1).filter((m) => m.role === "assistant").map((m) => m.content);
    return { query, followUp: "more", said: said.join("\n") };
  }
  if (!turns.length || !question.trim() || !needsContext(question, L) || !previous) {
    return { query: question, followUp: "", said: "" };
  }
  return { query: `${previous.trim()} ${question.trim()}`, followUp: "joined", said: "" };
}

/** The text's words, lower case, one space apart, spaces at both ends (extractive.py `_word_string`). */
const wordString = (text) => ` ${(text.toLowerCase().match(/[\p{L}\p{M}\p{N}_]+/gu) || []).join(" ")} `;

// Words (core/answer/quotable.py) -------------------------------------------------------------------

function wordsOf(text, stop, L) {
  const out = new Set();
  for (const raw of text.match(WORD) || []) {
    let w = raw.toLowerCase();
    if (w.endsWith("'s")) w = w.slice(0, -2);
    if (w.endsWith("’s")) w = w.slice(0, -2);
    if (Array.from(w).length <= 1 || stop.has(w) || L.filler.has(w)) continue;
    const lemma = L.lemmas.get(w) || w;
    if (!stop.has(lemma)) out.add(lemma);
  }
  return out;
}
export const contentWords = (text, L) => wordsOf(text, L.stop, L);
export const lightWords = (text, L) => wordsOf(text, L.light, L);

function share(asked, words) {
  if (!asked.size) return 0;
  let n = 0;
  for (const w of asked) if (words.has(w)) n++;
  return n / asked.size;
}

// Keyword side: LanceDB's tokens (core/publish/bundle.py fts_tokens) ------------------------------------

export function ftsTokens(text, stem, stopWords) {
  const out = [];
  for (const raw of text.match(TOKEN) || []) {
    const folded = raw.toLowerCase().normalize("NFKD").replace(/\p{M}/gu, "") || raw.toLowerCase();
    if (folded.length > 40 || stopWords.has(folded)) continue;
    out.push(stem(folded));
  }
  return out;
}

// The engine --------------------------------------------------------------------------------------

export class Engine {
  /** `index`: data/index.json; `vectors`: Int8Array (rows × dim); `scales`: Float32Array (rows);
   * `stem`: a Porter2 stemmer; `ftsStopWords`: LanceDB's stop words (in the index). */
  constructor(index, vectors, scales, stem) {
    this.index = index;
    this.chunks = index.chunks;
    this.dim = index.dim;
    this.vectors = vectors;
    this.scales = scales;
    this.stem = stem;
    this.rules = index.rules;
    this.settings = index.settings;
    this.L = makeLexicon(index.lexicon);
    this.ftsStop = new Set(index.fts_stop_words);
    this.sentenceBase = index.counts.chunks;
    this.headingBase = index.counts.chunks + index.counts.sentences;
    // For missing words found by meaning, the page sets both (async): a word's vector from its model, and
    // the exported words' table {words, vectors, scales}, fetched once. Without them: words as written.
    this.embedWord = null;
    this.loadWords = null;
    this.wordTable = null;
    const bm = index.bm25;
    this.postings = new Map(Object.entries(bm.postings));
    this.avgdl = bm.lengths.reduce((a, b) => a + b, 0) / Math.max(1, bm.lengths.length);
    this.collections = [...new Set(this.chunks.map((c) => c.collection).filter(Boolean))].sort();
  }

  /** Cosine of row `row` of the vector blob (or of `blob`, {vectors, scales}: the words' table) with a
   * float vector (both unit length). */
  dot(row, q, blob = this) {
    const off = row * this.dim;
    const v = blob.vectors;
    let s = 0;
    for (let k = 0; k < this.dim; k++) s += v[off + k] * q[k];
    return s * blob.scales[row];
  }

  rowVector(row) {
    const out = new Float32Array(this.dim);
    const off = row * this.dim;
    const scale = this.scales[row];
    for (let k = 0; k < this.dim; k++) out[k] = this.vectors[off + k] * scale;
    return out;
  }

  rescale(cos) {
    const [low, high] = this.rules.scale;
    return (cos - low) / (high - low);
  }

  // Routing (core/search/route.py, similarity only) --------------------------------------------------

  route(cosines) {
    if (this.settings.routing === "off" || this.collections.length < 2) return null;
    const similarity = new Map(this.collections.map((c) => [c, -1]));
    this.chunks.forEach((c, i) => {
      if (c.collection && cosines[i] > similarity.get(c.collection)) similarity.set(c.collection, cosines[i]);
    });
    for (const [c, s] of similarity) similarity.set(c, this.rescale(s));
    const ranked = [...similarity.entries()].map((e, i) => [...e, i]).sort((a, b) => b[1] - a[1] || a[2] - b[2]);
    const lead = ranked[0][1] - ranked[1][1];
    return lead >= this.rules.route_margin ? ranked[0][0] : null;
  }

  // Retrieval (core/search/retrieve.py) ----------------------------------------------------------------

  bm25(question, allowed) {
    const terms = [...new Set(ftsTokens(question, this.stem, this.ftsStop))];
    const { k1, b, lengths } = this.index.bm25;
    const n = lengths.length;
    const scores = new Map();
    for (const term of terms) {
      const list = this.postings.get(term);
      if (!list) continue;
      const idf = Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5));
      for (const [doc, tf] of list) {
        if (!allowed(doc)) continue;
        const part = (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * lengths[doc]) / this.avgdl));
        scores.set(doc, (scores.get(doc) || 0) + part);
      }
    }
    return [...scores.entries()].sort((x, y) => y[1] - x[1] || x[0] - y[0]).slice(0, this.settings.top_k);
  }

  search(question, q) {
    const s = this.settings;
    const cosines = this.chunks.map((_, i) => this.dot(i, q));
    const routed = this.route(cosines);
    const allowed = (i) => !routed || this.chunks[i].collection === routed;
    const mode = s.mode;
    const byId = new Map();
    const hits = [];
    const hitOf = (i) => {
      let h = byId.get(i);
      if (!h) {
        h = { chunk: i, relevance: 0, dense: null, keyword: null };
        byId.set(i, h);
        hits.push(h);
      }
      return h;
    };
    if (mode === "dense" || mode === "hybrid") {
      const order = cosines
        .map((c, i) => [c, i])
        .filter(([, i]) => allowed(i))
        .sort((x, y) => y[0] - x[0] || x[1] - y[1])
        .slice(0, s.top_k);
      order.forEach(([c, i], r) => {
        const h = hitOf(i);
        h.relevance = h.dense = clamp(this.rescale(c));
        h.denseRank = r + 1;
      });
    }
    let keyword = [];
    if (mode === "fts" || mode === "hybrid") keyword = this.bm25(question, allowed);
    keyword.forEach(([i, score], r) => {
      const h = hitOf(i);
      if (h.dense === null) h.dense = clamp(this.rescale(cosines[i]));
      h.keyword = score;
      h.keywordRank = r + 1;
    });
    if (mode === "fts") {
      const best = Math.max(0, ...hits.map((h) => h.keyword || 0));
      for (const h of hits) h.relevance = best > 0 ? clamp((h.keyword || 0) / best) : 0;
    } else if (mode === "hybrid" && s.fusion === "rrf") {
      const lists = [hits.filter((h) => h.denseRank), keyword.length ? hits.filter((h) => h.keywordRank) : []];
      const n = lists.filter((l) => l.length).length;
      for (const h of hits) {
        const f = (h.denseRank ? 1 / (s.rrf_k + h.denseRank) : 0) + (h.keywordRank ? 1 / (s.rrf_k + h.keywordRank) : 0);
        h.relevance = clamp(f / (n / (s.rrf_k + 1)));
      }
    } else if (mode === "hybrid") {
      const bestDense = Math.max(0, ...hits.map((h) => h.dense || 0));
      const bestKeyword = Math.max(0, ...hits.filter((h) => h.keyword !== null).map((h) => h.keyword));
      const w = this.rules.dense_weight;
      for (const h of hits) {
        const d = bestDense > 0 ? (h.dense || 0) / bestDense : 0;
        const k = bestKeyword > 0 ? (h.keyword || 0) / bestKeyword : 0;
        h.relevance = clamp(w * Math.max(d, 0) + (1 - w) * Math.max(k, 0));
      }
    }
    hits.sort((x, y) => y.relevance - x.relevance || (y.dense || 0) - (x.dense || 0) || (y.keyword || 0) - (x.keyword || 0));
    const passing = hits.filter((h) => h.relevance >= s.threshold).length;
    const keep = Math.min(Math.max(passing, s.min_chunks), s.max_chunks, hits.length);
    return { hits: hits.slice(0, keep), routed };
  }

  // The extractive answer (core/answer/extractive.py) ----------------------------------------------------

  units(hits) {
    const out = [];
    const seen = new Set();
    hits.forEach((hit, h) => {
      const chunk = this.chunks[hit.chunk];
      chunk.units.forEach(([start, length, flags, vector], i) => {
        const text = chunk.text.slice(start, start + length);
        const key = normalised(text).toLowerCase();
        const ok = Boolean(flags & 1) && !seen.has(key);
        seen.add(key);
        out.push({ hit: h, index: i, start, text, words: splitWords(text).length, readable: ok, signpost: Boolean(flags & 2), lends: Boolean(flags & 4), leansBack: Boolean(flags & 8), takesUp: Boolean(flags & 16), vector });
      });
    });
    return out;
  }

  /** What the question asks about, compared with the posts' sentences (`withoutThirdPerson`). */
  about(question) {
    return withoutThirdPerson(question, this.L);
  }

  /** The author's sentences that best answer `question` (its `about` vector `q`) from `allHits`;
   * `said` is what the reader was already answered ("tell me more"): a sentence it holds starts no
   * passage unless no other can (extractive.py `extract_answer`). */
  extract(question, allHits, q, said = "") {
    const R = this.rules;
    const W = R.weights;
    const hits = allHits.slice(0, R.max_hits);
    const units = this.units(hits);
    let candidates = units.map((u, i) => (u.readable ? i : -1)).filter((i) => i >= 0);
    const told = said ? wordString(said) : "";
    if (told) {
      const fresh = candidates.filter((i) => !told.includes(wordString(units[i].text)));
      if (fresh.length) candidates = fresh;
    }
    if (!candidates.length) return { sentences: [], bestSimilarity: 0 };
    const heading = new Map();
    for (const h of new Set(units.map((u) => u.hit))) {
      heading.set(h, this.rescale(this.dot(this.headingBase + this.chunks[hits[h].chunk].heading, q)));
    }
    const about = this.about(question);
    const asked = contentWords(about, this.L);
    const askedLight = lightWords(about, this.L);
    const relevance = this.sectionRelevance(hits);
    let cheap = candidates.map((i) => {
      const u = units[i];
      return (
        W.coverage * share(asked, contentWords(u.text, this.L)) +
        W.coverage_light * share(askedLight, lightWords(u.text, this.L)) +
        W.hit * relevance[u.hit] +
        W.heading * heading.get(u.hit) +
        W.length * Math.min(u.words / 30, 2) +
        W.question * (QUESTION_END.test(u.text) ? 1 : 0)
      );
    });
    if (candidates.length > R.max_candidates) {
      const keep = cheap
        .map((c, k) => [c, k])
        .sort((x, y) => y[0] - x[0] || x[1] - y[1])
        .slice(0, R.max_candidates)
        .map(([, k]) => k)
        .sort((x, y) => x - y);
      candidates = keep.map((k) => candidates[k]);
      cheap = keep.map((k) => cheap[k]);
    }
    const positionOf = new Map(candidates.map((i, k) => [i, k]));
    const similarity = candidates.map((i) => this.rescale(this.dot(this.sentenceBase + units[i].vector, q)));
    units.forEach((u, i) => {
      if (!u.signpost) return;
      const k = positionOf.get(i + 1);
      if (k !== undefined && units[i + 1].hit === u.hit) {
        similarity[k] = Math.max(similarity[k], this.rescale(this.dot(this.sentenceBase + u.vector, q)));
      }
    });
    // A sentence too short to quote alone lends its closeness to the readable one before it on its line.
    units.forEach((u, i) => {
      if (u.readable || !u.lends) return;
      const text = this.chunks[hits[u.hit].chunk].text;
      for (let j = i - 1; j >= 0 && units[j].hit === u.hit && !text.slice(units[j].start, u.start).includes("\n"); j--) {
        if (!units[j].readable) continue;
        const k = positionOf.get(j);
        if (k !== undefined) similarity[k] = Math.max(similarity[k], this.rescale(this.dot(this.sentenceBase + u.vector, q)));
        break;
      }
    });
    const scores = cheap.map((c, k) => c + W.similarity * similarity[k]);
    const picked = this.passages(units, hits, candidates, scores, told);
    const quotes = picked.map((i, n) => {
      const unit = units[i];
      const chunk = this.chunks[hits[unit.hit].chunk];
      const k = positionOf.get(i);
      const prev = n ? picked[n - 1] : null;
      const before = prev !== null && units[prev].hit === unit.hit ? prev : null;
      let joined = before !== null ? this.join(chunk.text, units[before], unit) : "";
      let section = "";
      const previous = n ? this.chunks[hits[units[prev].hit].chunk] : null;
      if (previous && before === null && previous.post === chunk.post) {
        joined = "paragraph"; // the passage goes on into the post's next chunk
        if (chunk.section && chunk.section !== previous.section) section = chunk.section; // … and its next section
      }
      return {
        text: unit.text,
        post: chunk.post,
        title: chunk.title,
        url: chunk.url,
        chunk: chunk.id,
        start: unit.start,
        index: unit.index,
        score: k !== undefined ? scores[k] : 0,
        similarity: k !== undefined ? similarity[k] : 0,
        joined,
        section,
      };
    });
    return { sentences: readingOrder(quotes), bestSimilarity: Math.max(...similarity) };
  }

  sectionRelevance(hits) {
    const best = new Map();
    const key = (h) => JSON.stringify([this.chunks[h.chunk].post, this.chunks[h.chunk].section]);
    for (const h of hits) best.set(key(h), Math.max(best.get(key(h)) || 0, h.relevance));
    return hits.map((h) => best.get(key(h)));
  }

  passages(units, hits, candidates, scores, told = "") {
    const R = this.rules;
    const order = scores.map((s, k) => [s, k]).sort((x, y) => y[0] - x[0] || x[1] - y[1]).map(([, k]) => k);
    const postOf = (i) => this.chunks[hits[units[i].hit].chunk].post;
    let picked = [];
    let first = -1; // the first passage's best sentence (a signpost with nothing after it starts none)
    let firstVector = null;
    for (const k of order) {
      const i = candidates[k];
      if (first < 0) {
        picked = this.passage(units, hits, i, told);
        if (picked.length) {
          first = k;
          firstVector = this.rowVector(this.sentenceBase + units[i].vector);
        }
        continue;
      }
      if (scores[k] < scores[first] - R.second_post_gap) break;
      if (postOf(i) === postOf(candidates[first]) || this.dot(this.sentenceBase + units[i].vector, firstVector) >= R.near_duplicate) continue;
      const more = this.passage(units, hits, i, told);
      if (more.length) {
        picked.push(...more);
        break;
      }
    }
    return picked;
  }

  /** The sentences that belong with `anchor` (extractive.py `_passage`), up to the first in `told`. */
  passage(units, hits, anchor, told = "") {
    const hit = units[anchor].hit;
    const text = this.chunks[hits[hit].chunk].text;
    const own = units.map((u, j) => (u.hit === hit ? j : -1)).filter((j) => j >= 0);
    const paragraph = (j) => count(text.slice(0, units[j].start), "\n\n");
    const line = (j) => count(text.slice(0, units[j].start), "\n");
    const at = own.indexOf(anchor);
    let first = at;
    if (
      at &&
      paragraph(own[at - 1]) === paragraph(anchor) &&
      (units[anchor].leansBack || units[anchor].takesUp)
    ) {
      first = at - 1;
    }
    const inParagraph = own.filter((j) => paragraph(j) === paragraph(anchor));
    const isList = new Set(inParagraph.map(line)).size > 1;
    if (isList) while (first && line(own[first - 1]) === line(anchor)) first -= 1;
    const take = own.slice(first, at + 1);
    const lead = own.indexOf(inParagraph[0]) - 1;
    // A list's lead-in (the sentence just before it), or a signpost announcing the paragraph: as the server.
    if (lead >= 0 && (((isList || first === lead + 1) && units[own[lead]].signpost) || (isList && units[own[lead]].readable))) {
      take.unshift(own[lead]);
    }
    let words = take.reduce((n, j) => n + units[j].words, 0);
    const following = own.slice(at + 1);
    for (const later of this.nextChunks(hits, hit)) {
      units.forEach((u, j) => {
        if (u.hit === later) following.push(j);
      });
    }
    const seen = new Set(take.map((j) => normalised(units[j].text)));
    for (const j of following) {
      const key = normalised(units[j].text);
      if (seen.has(key)) continue;
      if (words + units[j].words > this.rules.max_words || (told && told.includes(wordString(units[j].text)))) break;
      take.push(j);
      seen.add(key);
      words += units[j].words;
    }
    // Never ends on what announces the rest (a lead-in cut off from its list): as the server.
    while (take.length && units[take[take.length - 1]].signpost) take.pop();
    return take;
  }

  nextChunks(hits, h) {
    const byId = new Map(hits.map((hit, n) => [this.chunks[hit.chunk].id, n]));
    const out = [];
    const id = this.chunks[hits[h].chunk].id;
    const cut = id.lastIndexOf("#");
    const stem = cut >= 0 ? id.slice(0, cut) : "";
    let index = cut >= 0 ? id.slice(cut + 1) : id;
    while (/^\d+$/.test(index)) {
      index = String(Number(index) + 1).padStart(index.length, "0");
      const n = byId.get(`${stem}#${index}`);
      if (n === undefined) break;
      out.push(n);
    }
    return out;
  }

  join(text, before, unit) {
    const gap = text.slice(before.start + before.text.length, unit.start);
    if (gap.includes("\n\n")) return "paragraph";
    return gap.includes("\n") ? "line" : "space";
  }

  // The relevance bar (core/answer/abstain.py) ---------------------------------------------------------

  /** The relevance bar's verdict on `answer` (abstain.py `judge`); a missing word counts as found when
   * a word of the checked passages is near it by meaning (`embedWord`, near_words.py). */
  async judge(question, hits, answer) {
    const R = this.rules;
    const L = this.L;
    const checked = hits.slice(0, R.checked_hits);
    const questionLang = detectLanguage(question, L);
    const asked = this.askedWords(question, questionLang);
    const texts = checked.map((h) => this.chunks[h.chunk]);
    const postsLang = texts.length ? detectLanguage(texts.map((c) => c.text).join(" "), L) : UND;
    const passages = texts.map((c) => [c.title, c.section, c.text, c.keywords.join(" ")].join(" "));
    const known = new Set();
    for (const p of passages) {
      for (const w of contentWords(p, L)) known.add(w).add(w.replace(L.elided, "")); // "l'hydratation"
    }
    const otherLanguage = differ(questionLang, postsLang);
    let missing = new Set([...asked].filter((w) => !known.has(w)));
    if (missing.size && !otherLanguage) missing = this.unmatched(missing, passages, postsLang);
    let shared = [];
    if (otherLanguage) {
      const noise = L.functionWords[questionLang] || new Set();
      shared = [...asked].filter((w) => !missing.has(w) && !/^\p{Nd}+$/u.test(w) && !noise.has(w));
    }
    const names = new Set();
    if (questionLang === "en") {
      for (const m of question.matchAll(NAME)) {
        const words = contentWords(m[1], L);
        if (words.size && ![...words].every((w) => known.has(w))) names.add(m[1]);
      }
    }
    const signals = {
      similarity: answer.bestSimilarity,
      quotable: checked.length > 0 && answer.sentences.length > 0,
      asked: asked.size,
      missing: [...missing].sort(),
      shared,
      unknownNames: [...names].sort(),
      otherLanguage,
      near: {},
    };
    if (this.embedWord && this.loadWords && this.nearMatters(signals, R.thresholds)) {
      signals.near = await this.nearest(signals.missing, texts);
    }
    const [ok, reason] = this.decide(signals, R.thresholds);
    return { answer: ok, reason, ...signals };
  }

  /** The question's content words the bar checks (abstain.py `asked_words`): in a language other than
   * English, without elided articles and that language's function and question words. */
  askedWords(question, questionLang) {
    const L = this.L;
    const asked = contentWords(this.about(question), L);
    if (questionLang === "en" || questionLang === UND) return asked;
    const noise = L.functionWords[questionLang] || new Set();
    const questionWords = cuesOf(questionLang, L).questionWords;
    const out = new Set();
    for (const word of asked) {
      const w = word.replace(L.elided, "");
      if (!noise.has(w) && !questionWords.has(w) && Array.from(w).length > 1) out.add(w); // as wordsOf
    }
    return out;
  }

  /** Whether words found by meaning could change the decision (abstain.py `_near_matters`). */
  nearMatters(s, limits) {
    return (
      s.missing.length > 0 &&
      !s.otherLanguage &&
      !s.unknownNames.length &&
      limits.word_match < 1 &&
      limits.supported <= s.similarity &&
      (s.similarity < limits.similarity || (limits.max_missing_close ?? 1) < 1)
    );
  }

  /** Each missing word's best cosine with a word of the chunks' titles, sections and texts
   * (near_words.py `nearest_words`, the passage words' vectors exported, the missing words' embedded). */
  async nearest(missing, chunks) {
    this.wordTable ||= this.loadWords().then((t) => ({ ...t, rows: new Map(t.words.map((w, i) => [w, i])) }));
    let table;
    try {
      table = await this.wordTable;
    } catch {
      this.wordTable = null; // fetched again for the next question; this one reads words as written
      return {};
    }
    const rows = new Set();
    for (const c of chunks) {
      for (const w of [c.title, c.section, c.text].join(" ").match(WORD) || []) {
        const row = Array.from(w).length >= this.rules.min_word_chars ? table.rows.get(w.toLowerCase()) : undefined;
        if (row !== undefined) rows.add(row);
      }
    }
    const near = {};
    if (!rows.size) return near;
    for (const word of missing) {
      const v = await this.embedWord(word);
      let best = -Infinity;
      for (const row of rows) best = Math.max(best, this.dot(row, v, table));
      near[word] = Math.round(best * 1e4) / 1e4;
    }
    return near;
  }

  unmatched(words, passages, language) {
    const L = this.L;
    const stem = language === "en" ? this.stem : null;
    const forms = new Set();
    for (const p of passages) for (const w of p.match(WORD) || []) forms.add(w.toLowerCase());
    const stems = stem ? new Set([...forms].map(stem)) : new Set();
    const minHead = this.rules.min_head_chars;
    const found = (word) => {
      if (stem && stems.has(stem(word))) return true;
      if (Array.from(word).length < minHead) return false;
      for (const form of forms) {
        for (const [head, prefix, isKnown] of L.heads.get(form) || []) {
          if (head === word && (isKnown || forms.has(prefix))) return true;
        }
      }
      return false;
    };
    return new Set([...words].filter((w) => !found(w)));
  }

  decide(s, limits) {
    if (!s.quotable) return [false, "nothing retrieved that can be quoted"];
    if (!s.asked) return [false, "the question has no content word"];
    if (s.otherLanguage) {
      if (s.similarity < limits.cross_language) return [false, "question in another language than the posts, and not close enough"];
      if (!s.shared.length) return [false, "question in another language than the posts, sharing no word with them"];
      return [true, "question in another language than the posts, close enough"];
    }
    if (s.unknownNames.length) return [false, "the question names what no retrieved passage mentions"];
    const closeMissing = limits.max_missing_close ?? 1;
    const near = s.near || {};
    const missing = s.missing.filter((w) => (near[w] ?? -1) < limits.word_match).length;
    if (s.similarity >= limits.similarity && missing <= closeMissing * s.asked) {
      return [true, "a sentence is close to the question"];
    }
    if (s.similarity >= limits.supported && missing <= limits.max_missing * s.asked) {
      return [true, "close enough, and the question's words are in the passages"];
    }
    return [false, "no passage is close enough to the question"];
  }

  suggest(hits) {
    const best = new Map();
    for (const h of hits) {
      const c = this.chunks[h.chunk];
      const cur = best.get(c.post);
      if (!cur) best.set(c.post, { post: c.post, title: c.title, url: c.url, relevance: h.relevance });
      else if (h.relevance > cur.relevance) cur.relevance = h.relevance;
    }
    return [...best.values()].sort((a, b) => b.relevance - a.relevance).slice(0, this.rules.suggestions);
  }

  /** The reader's fixed words for a reply to `question` ({language, labels}), chosen as
   * core/text/labels.py label_language chooses: the question's language when it has a set, else the blog's
   * (index.language), else English. */
  labelsFor(question) {
    const sets = this.index.labels || {};
    const asked = question ? detectLanguage(question, this.L) : UND;
    const language = [asked, this.index.language].find((code) => code && sets[code]) || "en";
    return { language, labels: sets[language] || sets.en || {} };
  }

  /** The reply to `question` given its vector `q` and that of `about(question)`, `qAbout` (the same
   * when `about` changes nothing), as core/answer/reply.py in extractive mode. A follow-up passes
   * `searched`: `followupQuery`'s {query, followUp, said} with the query's vectors `q` and `qAbout`; the
   * query is searched and judged, and a joined follow-up's quote is picked for the question as asked. */
  async answer(question, q, qAbout = q, searched = null) {
    const s = searched || { query: question, q, qAbout, followUp: "", said: "" };
    const { hits, routed } = this.search(s.query, s.q);
    let extracted = this.extract(s.query, hits, s.qAbout);
    const verdict = await this.judge(s.query, hits, extracted);
    const top = hits.length ? this.chunks[hits[0].chunk].post : null;
    const base = {
      question,
      query: s.query,
      followUp: s.followUp,
      routed,
      verdict,
      topHitPost: top,
      hits: hits.map((h) => this.chunks[h.chunk].id),
    };
    if (verdict.answer) {
      if (s.followUp === "joined") extracted = this.extract(question, hits, qAbout);
      else if (s.followUp === "more") extracted = this.extract(s.query, hits, s.qAbout, s.said);
      return { ...base, mode: "extractive", sentences: extracted.sentences, groups: groups(extracted.sentences) };
    }
    const lang = detectLanguage(question, this.L);
    const postsLang = hits.length ? detectLanguage(hits.map((h) => this.chunks[h.chunk].text).join(" "), this.L) : UND;
    const asked = s.query === question ? lang : detectLanguage(s.query, this.L); // "tell me more": the last
    if ((s.query === question || s.followUp) && differ(asked, postsLang)) {
      // reply.py `cannot_read`: MiniLM compares a question with posts in its own language only.
      const table = postsLang === "en" ? this.rules.cannot_read : this.rules.cannot_read_other;
      return { ...base, mode: "none", text: table[asked] || table.en, suggestions: [] };
    }
    // The line over the closest posts, in the question's language as the server's chat (reply.py CLOSEST).
    const closest = (this.rules.closest || {})[lang] || (this.rules.closest || {}).en || "The closest posts:";
    return {
      ...base,
      mode: "none",
      text: this.rules.no_answer[lang] || this.rules.no_answer.en,
      closest,
      suggestions: this.suggest(hits),
    };
  }
}

function readingOrder(quotes) {
  const best = new Map();
  for (const q of quotes) best.set(q.post, Math.max(best.has(q.post) ? best.get(q.post) : q.score, q.score));
  const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
  return [...quotes].sort(
    (a, b) => best.get(b.post) - best.get(a.post) || cmp(a.post, b.post) || cmp(a.chunk, b.chunk) || a.index - b.index,
  );
}

/** [{post, title, url, quotes}] per post, in reading order. */
export function groups(sentences) {
  const out = [];
  for (const q of sentences) {
    const last = out[out.length - 1];
    if (last && last.post === q.post) last.quotes.push(q);
    else out.push({ post: q.post, title: q.title, url: q.url, quotes: [q] });
  }
  return out;
}

// The question's tokens for MiniLM (BERT uncased WordPiece, as the bundled tokenizer.json says) ---------

export class WordPiece {
  constructor(tokenizerJson, maxTokens) {
    this.vocab = new Map(Object.entries(tokenizerJson.model.vocab));
    this.unk = this.vocab.get(tokenizerJson.model.unk_token);
    this.prefix = tokenizerJson.model.continuing_subword_prefix;
    this.maxChars = tokenizerJson.model.max_input_chars_per_word;
    this.cls = this.vocab.get("[CLS]");
    this.sep = this.vocab.get("[SEP]");
    this.maxTokens = maxTokens;
  }

  static isPunctuation(ch) {
    const c = ch.codePointAt(0);
    if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)) return true;
    return /\p{P}/u.test(ch);
  }

  static isChinese(c) {
    return (
      (c >= 0x4e00 && c <= 0x9fff) || (c >= 0x3400 && c <= 0x4dbf) || (c >= 0x20000 && c <= 0x2a6df) ||
      (c >= 0x2a700 && c <= 0x2b73f) || (c >= 0x2b740 && c <= 0x2b81f) || (c >= 0x2b820 && c <= 0x2ceaf) ||
      (c >= 0xf900 && c <= 0xfaff) || (c >= 0x2f800 && c <= 0x2fa1f)
    );
  }

  /** BertNormalizer (clean text, Chinese characters apart, accents stripped, lower case) and
   * BertPreTokenizer (whitespace, then each punctuation mark alone). */
  words(text) {
    let clean = "";
    for (const ch of text) {
      const c = ch.codePointAt(0);
      if (c === 0 || c === 0xfffd) continue;
      if (ch === "\t" || ch === "\n" || ch === "\r" || /\s/u.test(ch)) {
        clean += " ";
        continue;
      }
      if (/\p{C}/u.test(ch)) continue;
      clean += WordPiece.isChinese(c) ? ` ${ch} ` : ch;
    }
    clean = clean.normalize("NFD").replace(/\p{Mn}/gu, "").toLowerCase();
    const out = [];
    for (const piece of clean.split(" ")) {
      let current = "";
      for (const ch of piece) {
        if (WordPiece.isPunctuation(ch)) {
          if (current) out.push(current);
          out.push(ch);
          current = "";
        } else current += ch;
      }
      if (current) out.push(current);
    }
    return out;
  }

  pieces(word) {
    const chars = Array.from(word);
    if (chars.length > this.maxChars) return [this.unk];
    const ids = [];
    let start = 0;
    while (start < chars.length) {
      let end = chars.length;
      let found = null;
      while (start < end) {
        const sub = (start > 0 ? this.prefix : "") + chars.slice(start, end).join("");
        if (this.vocab.has(sub)) {
          found = this.vocab.get(sub);
          break;
        }
        end -= 1;
      }
      if (found === null) return [this.unk];
      ids.push(found);
      start = end;
    }
    return ids;
  }

  /** [CLS] ids… [SEP], at most maxTokens in all. */
  encode(text) {
    const ids = this.words(text).flatMap((w) => this.pieces(w));
    return [this.cls, ...ids.slice(0, this.maxTokens - 2), this.sep];
  }
}
