// The static site's engine and page: loads the index, the vectors and the int8 question model (ONNX Runtime
// Web, from ./vendor, never a CDN), answers in the page. index.html's form is mounted when the page has
// one; a blog's widget (widget.js with data-static) imports this module and asks through widgetReply.
// Every piece of post text is put in the page with textContent: a post holding <img onerror=…> shows
// those characters, it runs nothing. The page's fixed words are the reader's language's (data/index.json
// `labels`, core/text/labels.py): index.html comes written in the blog's, each reply in its own.
import * as ort from "./vendor/ort.wasm.min.mjs";
import stem from "./vendor/porter2.mjs";
import { detectLanguage, Engine, followupQuery, WordPiece } from "./inkwell-core.mjs";

const here = new URL(".", import.meta.url);
ort.env.wasm.wasmPaths = new URL("vendor/", here).href;
ort.env.wasm.numThreads = 1; // threads need cross-origin isolation, which a plain static host doesn't send
ort.env.wasm.proxy = false;

async function fetchOk(path) {
  const response = await fetch(new URL(path, here));
  if (!response.ok) throw new Error(`could not load ${path} (${response.status})`);
  return response;
}

// A file of the folder cut short or replaced (a failed upload, a file from another export) is named, with
// what to do: read as it is, a short vector file made every question "I haven't written about that".
const damaged = (path, why) => new Error(`${path} is damaged (${why}): export the site again`);

async function fetchJson(path) {
  const response = await fetchOk(path);
  try {
    return await response.json();
  } catch (err) {
    throw damaged(path, err.message);
  }
}

/** Throws, naming the file, unless `bytes` is the `expected` size its index says. */
function checkSize(path, bytes, expected) {
  if (bytes !== expected) {
    const n = (x) => x.toLocaleString("en");
    throw damaged(path, `${n(bytes)} bytes where data/index.json needs ${n(expected)}`);
  }
}

/** Everything the page needs, loaded once; resolves to {engine, embed, seconds}. */
async function load() {
  const started = performance.now();
  const [index, vectors, scales, tokenizer, model] = await Promise.all([
    fetchJson("data/index.json"),
    fetchOk("data/vectors.i8").then((r) => r.arrayBuffer()),
    fetchOk("data/scales.f32").then((r) => r.arrayBuffer()),
    fetchJson("model/tokenizer.json"),
    fetchOk("model/question.onnx").then((r) => r.arrayBuffer()),
  ]);
  const rows = index.counts.chunks + index.counts.sentences + index.counts.headings;
  checkSize("data/vectors.i8", vectors.byteLength, rows * index.dim);
  checkSize("data/scales.f32", scales.byteLength, rows * 4);
  let session;
  try {
    session = await ort.InferenceSession.create(new Uint8Array(model), { executionProviders: ["wasm"] });
  } catch (err) {
    throw damaged("model/question.onnx", err.message);
  }
  const engine = new Engine(index, new Int8Array(vectors), new Float32Array(scales), stem);
  const wordpiece = new WordPiece(tokenizer, index.max_tokens);
  async function embed(text) {
    const ids = wordpiece.encode(text);
    const shape = [1, ids.length];
    const tensor = (values) => new ort.Tensor("int64", BigInt64Array.from(values, (v) => BigInt(v)), shape);
    const out = await session.run({
      input_ids: tensor(ids),
      attention_mask: tensor(ids.map(() => 1)),
      token_type_ids: tensor(ids.map(() => 0)),
    });
    return out.embedding.data;
  }
  await embed("warm up"); // the first run compiles kernels: not on the reader's first question
  const words = new Map(); // a missing word's vector, once per page
  engine.embedWord = async (word) => words.get(word) || words.set(word, await embed(word)).get(word);
  engine.loadWords = async () => {
    const [list, ints, scales] = await Promise.all([
      fetchJson("data/words.json"),
      fetchOk("data/words.i8").then((r) => r.arrayBuffer()),
      fetchOk("data/words.f32").then((r) => r.arrayBuffer()),
    ]);
    checkSize("data/words.i8", ints.byteLength, list.length * index.dim); // else: words as written
    checkSize("data/words.f32", scales.byteLength, list.length * 4);
    return { words: list, vectors: new Int8Array(ints), scales: new Float32Array(scales) };
  };
  return { engine, embed, seconds: (performance.now() - started) / 1000 };
}

const ready = load();

/** The reply to a question after `conversation` (earlier {role: "user"|"assistant", content} messages,
 * oldest first), with `seconds` from the question to the reply. A follow-up is searched as the server
 * searches it without a model (core/answer/question.py): joined to the question before, or that question
 * again for "tell me more"; the reply's `query` says what was searched. */
async function ask(question, conversation = []) {
  const { engine, embed } = await ready;
  const started = performance.now();
  const text = String(question || "").trim();
  // The reader reads these: the server's refusals (core/text/question.py check_question), in the reader's
  // language (labels: the question's, or the blog's for an empty one), numbers as that language writes them.
  // Invisible characters only (a zero-width space, a BOM) are empty too, as on the server.
  const { language, labels } = engine.labelsFor(text);
  const words = wordsOf(labels);
  if (!/[^\p{Z}\p{Cc}\p{Cf}\s]/u.test(text)) throw new Error(words.question_empty);
  const length = Array.from(text).length;
  const limit = engine.settings.max_question_chars;
  if (limit && length > limit) {
    const number = (n) => n.toLocaleString(language);
    throw new Error(words.question_too_long.replace("{length}", number(length)).replace("{limit}", number(limit)));
  }
  // Each text embedded once; the sentences are compared without "she", "the author" (`about`).
  const vectors = new Map();
  const vector = async (t) => vectors.get(t) || vectors.set(t, await embed(t)).get(t);
  const q = await vector(text);
  const qAbout = await vector(engine.about(text));
  const follow = followupQuery(text, conversation, engine.L);
  const searched =
    follow.query === text
      ? null
      : { ...follow, q: await vector(follow.query), qAbout: await vector(engine.about(follow.query)) };
  const reply = await engine.answer(text, q, qAbout, searched);
  return { ...languages(reply, engine.L), ...engine.labelsFor(text), seconds: (performance.now() - started) / 1000 };
}

/** The reply with the language of what it shows, for the page's `lang` (a screen reader reads a German
 * blog's sentences in German whatever the language of the page's own words): each passage's `lang`, and
 * `lang` for the decline; none where the text is too short to tell. Nothing chosen or scored by it. */
function languages(reply, L) {
  const code = (text) => {
    const lang = detectLanguage(text, L);
    return lang === "und" ? null : lang;
  };
  if (reply.mode !== "extractive") return { ...reply, lang: code(reply.text) };
  return { ...reply, groups: reply.groups.map((g) => ({ ...g, lang: code(passage(g)) })) };
}

// Text fragments (https://wicg.github.io/scroll-to-text-fragment/): these characters must be escaped.
function fragment(text) {
  return encodeURIComponent(text).replace(/-/g, "%2D").replace(/,/g, "%2C").replace(/&/g, "%26");
}

function safeAddress(url) {
  try {
    const parsed = new URL(url);
    return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.href.split("#")[0] : "";
  } catch {
    return "";
  }
}

/** The post's address opened at `quote` (a text fragment); null for no http(s) address. */
function fragmentLink(url, quote) {
  const address = safeAddress(url || "");
  return address && quote ? `${address}#:~:text=${fragment(quote)}` : address || null;
}

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

function link(title, url, quote) {
  const address = safeAddress(url || "");
  if (!address) return element("em", title);
  const a = element("a", title);
  a.href = fragmentLink(url, quote);
  a.rel = "noopener";
  a.target = "_blank";
  return a;
}

const JOINS = { line: "\n", paragraph: "\n\n" };

// English, for any word a label set lacks (the keys of core/text/labels.py).
const ENGLISH = {
  searched_for: "Searched for:",
  from_post: "From {title}:",
  quoted: "The author's own sentences, quoted from the posts (no model wrote them).",
  closest: "The closest posts:",
  thinking: "Thinking…",
};
const wordsOf = (labels) => ({ ...ENGLISH, ...(labels || {}) });

/** One turn on the page: the question, what was searched when it differs, then the reply. */
function render(reply, out) {
  const words = wordsOf(reply.labels);
  // A heading per turn: a screen reader's reader moves from question to question (its heading keys).
  out.replaceChildren(element("h2", reply.question, "inkwell-asked"));
  if (reply.query && reply.query !== reply.question) {
    out.append(element("p", `${words.searched_for} ${reply.query}`, "inkwell-note inkwell-searched"));
  }
  if (reply.mode === "extractive") {
    for (const group of reply.groups) {
      const block = element("div", undefined, "inkwell-passage");
      // "From {title}:" with the title a link, wherever the language puts it ("{title} yazısından:").
      const [before, after = ""] = words.from_post.split("{title}");
      const from = element("p", before, "inkwell-from");
      from.append(link(group.title, group.url, group.quotes[0].text), document.createTextNode(after));
      const quote = element("blockquote", undefined, "inkwell-quote");
      if (group.lang) quote.lang = group.lang;
      group.quotes.forEach((q, i) => {
        // A passage going on into the post's next section shows its heading, as the server's answer does.
        if (i && q.section) quote.append(element("strong", q.section, "inkwell-section"));
        else if (i) quote.append(document.createTextNode(JOINS[q.joined] || " "));
        quote.append(element("span", q.text, "inkwell-sentence"));
      });
      block.append(from, quote);
      out.append(block);
    }
    out.append(element("p", words.quoted, "inkwell-note"));
    return;
  }
  const decline = element("p", reply.text, "inkwell-decline");
  if (reply.lang) decline.lang = reply.lang;
  out.append(decline);
  if (reply.suggestions && reply.suggestions.length) {
    const list = element("ul", undefined, "inkwell-suggestions");
    for (const s of reply.suggestions) {
      const item = element("li");
      item.append(link(s.title, s.url, ""));
      list.append(item);
    }
    const closest = element("p", reply.closest || words.closest, "inkwell-note");
    if (reply.lang && reply.closest) closest.lang = reply.lang; // the decline's language (reply.py CLOSEST)
    out.append(closest, list);
  }
}

/** What the reply said, as the conversation keeps it for the next question. */
function replyText(reply) {
  return reply.mode === "extractive" ? reply.groups.map(passage).join("\n\n") : reply.text;
}

function mount() {
  const form = document.getElementById("inkwell-form");
  const input = document.getElementById("inkwell-question");
  const out = document.getElementById("inkwell-answer");
  const status = document.getElementById("inkwell-status");
  const earlier = document.getElementById("inkwell-conversation");
  const restart = document.getElementById("inkwell-new");
  if (!form || !input || !out) return;
  // The conversation lasts as long as the page: a follow-up ("how much did it cost?", "tell me more")
  // reads it. The latest turn is in `out`; the ones before move up into `earlier`.
  let conversation = [];
  let words = wordsOf(null); // the blog's language once loaded, then the last reply's
  if (restart) {
    restart.addEventListener("click", () => {
      conversation = [];
      earlier?.replaceChildren();
      out.replaceChildren();
      delete out.dataset.mode;
      restart.hidden = true;
      input.focus();
    });
  }
  ready.then(
    (r) => {
      words = wordsOf(r.engine.labelsFor("").labels);
      status.textContent = "";
      form.dataset.ready = "true";
      window.inkwell.loadSeconds = r.seconds;
    },
    (err) => {
      status.textContent = `The assistant could not load: ${err.message}`;
    },
  );
  const send = form.querySelector("button");
  let busy = false; // one question at a time: a second Enter while thinking would ask it twice
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (busy) return;
    busy = true;
    if (send) send.disabled = true;
    status.textContent = words.thinking;
    try {
      const reply = await ask(input.value, conversation);
      if (earlier && out.childNodes.length) {
        const turn = element("article", undefined, "inkwell-turn");
        turn.append(...out.childNodes);
        earlier.append(turn);
      }
      render(reply, out);
      words = wordsOf(reply.labels);
      out.dataset.mode = reply.mode;
      conversation.push({ role: "user", content: reply.question }, { role: "assistant", content: replyText(reply) });
      input.value = "";
      if (restart) restart.hidden = false;
      if (earlier?.childNodes.length) out.scrollIntoView({ block: "start" }); // the new turn, below the last
      status.textContent = "";
    } catch (err) {
      status.textContent = err.message;
    } finally {
      busy = false;
      if (send) send.disabled = false;
    }
  });
}

/** A post's passage as plain text (extractive.py `passage_text`): joins as written, a section it goes
 * on into under its heading. */
function passage(group) {
  const between = (q) => (q.section ? `${JOINS.paragraph}${q.section}${JOINS.paragraph}` : JOINS[q.joined] || " ");
  return group.quotes.map((q, i) => (i ? between(q) : "") + q.text).join("");
}

/** The reply in the shape the server's widget draws (the HTTP API's `done` event, core/serve/api.py
 * answer_json): the passages as plain text under "From <title>:" (in the reader's language), one source per post linking to its
 * first quoted sentence, or the decline with the closest posts. No question_id: nothing to rate here. */
export async function widgetReply(question, conversation = []) {
  const reply = await ask(question, conversation);
  const asked = {
    question: reply.question,
    searched_for: reply.query !== reply.question ? reply.query : null,
    language: reply.language,
    labels: reply.labels,
  };
  const ref = (post, title, url, quote) =>
    ({ post_id: post, title, url: safeAddress(url || "") || null, link: fragmentLink(url, quote) });
  if (reply.mode === "extractive") {
    const from = wordsOf(reply.labels).from_post;  // "From {title}:" in the reader's language
    const text = reply.groups.map((g) => `${from.split("{title}").join(g.title)}\n${passage(g)}`).join("\n\n");
    const sources = reply.groups.map((g) => ref(g.post, g.title, g.url, g.quotes[0].text));
    const langs = new Set(reply.groups.map((g) => g.lang)); // the widget's one lang: the posts' when they agree
    const lang = langs.size === 1 ? [...langs][0] : null;
    const shown = { mode: "extractive", answer: text, answer_text: text, lang };
    return { ...asked, ...shown, sources, sentences: [], suggestions: [] };
  }
  const suggestions = (reply.suggestions || []).map((s) => ref(s.post, s.title, s.url, ""));
  const shown = { mode: "none", answer: reply.text, answer_text: reply.text, lang: reply.lang };
  return { ...asked, ...shown, sources: [], sentences: [], suggestions };
}

/** The question's vector as the page computes it (for checking it against the Python embedder). */
async function embed(question) {
  const { embed: run } = await ready;
  return Array.from(await run(String(question)));
}

window.inkwell = { ready, ask, embed, loadSeconds: null };
mount();
