/* Inkwell's widget: an "Ask" button and a small chat panel that a blog gets from one tag,
 *   <script src="https://inkwell.example/widget.js" defer data-title="Ask Mara"></script>
 * Options (data attributes): data-title, data-placeholder, data-button, data-collection,
 * data-accent (a CSS colour), data-api (the Inkwell server; default: where this script came from).
 * It lives in its own shadow DOM (the blog's CSS cannot reach it, its CSS cannot reach the blog), writes
 * every text from the server with textContent (a post's HTML is never run), streams answers from
 * POST /api/ask as server-sent events, and keeps the conversation for the browser session across the
 * blog's pages (sessionStorage). While the server keeps questions (GET /api/welcome: question_log), it
 * says so under the form and offers thumbs and an optional short comment under each answer
 * (POST /api/feedback). No framework, no dependencies.
 * Static mode (data-static, the tag `inkwell export --static` documents): no server at all. The widget
 * imports the exported engine (inkwell-static.mjs, beside this script) when the panel first opens, answers
 * in the browser, and reads the greeting and starters from data/welcome.json; nothing is kept or rated,
 * so there are no thumbs, comment box or privacy note.
 * Its fixed words ("Searched for:", the thumbs, the question box) come from the server in the reader's
 * language (core/text/labels.py): the welcome's `labels` in the blog's language, then each reply's in the
 * language it answered in; English (LABELS below) until they arrive. */
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script || window.__inkwellWidget) return;
  window.__inkwellWidget = true;
  var opt = script.dataset;
  var api = (opt.api || new URL(script.src, location.href).origin).replace(/\/+$/, "");
  var isStatic = opt.static != null;
  var here = new URL(".", new URL(script.src, location.href)).href; // the exported folder, in static mode
  var KEY = "inkwell:" + (isStatic ? here : api);
  var MAX_TURNS = 20;
  var MAX_COMMENT = 500; // what the log keeps of a comment (core/store/questions.py)
  // English, until the welcome or a reply brings the reader's (the same keys as core/text/labels.py).
  var LABELS = {
    searched_for: "Searched for:", sources: "From:", closest: "The closest posts:", writing: "Writing\u2026",
    placeholder: "Ask a question about the posts", question: "Your question", ask: "Ask",
    new_conversation: "New conversation", close: "Close", was_helpful: "Was this helpful?", helpful: "Helpful",
    not_helpful: "Not helpful", thanks: "Thank you: the author will see this.",
    thanks_comment: "Thank you: the author will see your comment.", comment: "Anything to add? (optional)",
    send: "Send", rating_failed: "The rating could not be sent." };
  var T = LABELS; // the labels of the panel's own controls: the blog's, then the last answer's language
  // A label set from the server, any word it lacks in English (a server older than the widget sends none).
  function labelsOf(given) {
    var out = {};
    for (var k in LABELS) out[k] = given && typeof given[k] === "string" && given[k] ? given[k] : LABELS[k];
    return out;
  }
  var state = load();

  function load() {
    try {
      var saved = JSON.parse(sessionStorage.getItem(KEY) || "{}");
      return { open: !!saved.open, turns: Array.isArray(saved.turns) ? saved.turns : [] };
    } catch (e) {
      return { open: false, turns: [] };
    }
  }
  function save() {
    try {
      sessionStorage.setItem(KEY, JSON.stringify({ open: state.open, turns: state.turns.slice(-MAX_TURNS) }));
    } catch (e) { /* private mode or full: the conversation lasts for this page only */ }
  }
  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    for (var name in attrs || {}) node.setAttribute(name, attrs[name]);
    if (text != null) node.textContent = text;
    return node;
  }
  function safeUrl(url) {
    if (!url) return null; // no address (a static export's post without one): the title, unlinked
    try {
      var parsed = new URL(url, location.href);
      return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.href : null;
    } catch (e) {
      return null;
    }
  }

  var host = el("div", { "data-inkwell": "" });
  // The blog's rules still reach this one element outside the shadow DOM (a theme's `div:empty{display:none}`
  // hid the whole widget): reset them inline, which no rule of a stylesheet outranks, !important included.
  host.style.cssText = "all:initial!important";
  var root = host.attachShadow({ mode: "open" });
  var accent = CSS.supports("color", opt.accent || "") ? opt.accent : "#1f4e79";
  var style = el("style");
  style.textContent =
    ":host{all:initial}*{box-sizing:border-box;font:15px/1.45 system-ui,sans-serif}" +
    ".btn{position:fixed;right:20px;bottom:20px;z-index:2147483000;border:0;border-radius:24px;" +
    "padding:10px 18px;background:var(--a);color:#fff;cursor:pointer;box-shadow:0 2px 8px #0004}" +
    ".panel{position:fixed;right:20px;bottom:76px;z-index:2147483000;width:min(380px,calc(100vw - 40px));" +
    // dvh: the panel's height shrinks with a phone's on-screen keyboard (vh, for older browsers, does not)
    "height:min(520px,calc(100vh - 110px));height:min(520px,calc(100dvh - 110px));" +
    "display:flex;flex-direction:column;background:#fff;color:#222;" +
    "border-radius:12px;box-shadow:0 4px 24px #0005;overflow:hidden}" +
    ".panel[hidden]{display:none}header{display:flex;justify-content:space-between;align-items:center;" +
    "padding:10px 14px;background:var(--a);color:#fff;font-weight:600}" +
    "header button{background:none;border:0;color:#fff;font-size:20px;cursor:pointer}" +
    ".log{flex:1;overflow-y:auto;padding:12px;overflow-wrap:anywhere}.q{margin:8px 0 4px;font-weight:600}" +
    ".a{white-space:pre-wrap;margin:0 0 6px}.muted{color:#666;font-size:13px}" +
    ".src{margin:0 0 12px;padding-left:18px;font-size:13px}.src a{color:var(--a)}" +
    ".starter{display:block;margin:0 0 6px;text-align:left;background:#f4f4f4;border:1px solid #ddd;" +
    "border-radius:6px;padding:6px 10px;cursor:pointer;width:100%}" +
    ".rate{margin:0 0 12px;font-size:13px;color:#666}.rate button{background:none;border:1px solid #ccc;" +
    "border-radius:6px;margin-right:6px;cursor:pointer;padding:2px 8px}" +
    ".comment{display:flex;gap:6px;margin-top:6px}.comment input{padding:4px 8px;font-size:13px}" +
    ".note{margin:0;padding:0 10px 8px;font-size:12px;color:#666}.note[hidden]{display:none}" +
    "form{display:flex;gap:6px;padding:10px;border-top:1px solid #ddd}" +
    "input{flex:1;padding:8px;border:1px solid #888;border-radius:6px}" +
    "form button{border:0;border-radius:6px;padding:8px 12px;background:var(--a);color:#fff;cursor:pointer}" +
    ":focus-visible{outline:2px solid #e8a33d;outline-offset:2px}" +
    // The orange stands out on the header's accent, not on white (2.2:1): the accent in the panel, and round
    // the launcher with a white gap, which also shows on a dark blog.
    ".log :focus-visible,form :focus-visible,.btn:focus-visible{outline-color:var(--a)}" +
    ".btn:focus-visible{box-shadow:0 0 0 2px #fff}";
  root.appendChild(style);
  host.style.setProperty("--a", accent);

  var title = opt.title || "Ask the author";
  var button = el("button", { class: "btn", type: "button", "aria-expanded": "false", "aria-controls": "panel" },
    opt.button || "Ask");
  var panel = el("section", { class: "panel", id: "panel", role: "dialog", "aria-label": title, hidden: "" });
  var header = el("header");
  var heading = el("span", null, title);
  header.appendChild(heading);
  var controls = el("span");
  // A new conversation: the follow-ups stop reading the earlier turns, and the starters come back.
  var restart = el("button", { type: "button" }, "\u21ba");
  var close = el("button", { type: "button" }, "\u00d7");
  controls.appendChild(restart);
  controls.appendChild(close);
  header.appendChild(controls);
  var log = el("div", { class: "log", role: "log", "aria-live": "polite" });
  var form = el("form");
  // No maxlength: a pasted question cut to fit would be answered as something the reader did not ask;
  // the server refuses an over-long one with its limit (INKWELL_MAX_QUESTION_CHARS), shown as the answer.
  var input = el("input", { type: "text" });
  var send = el("button", { type: "submit" });
  form.appendChild(input);
  form.appendChild(send);
  // What is kept of a question: shown only once the server says its question log is on.
  var note = el("p", { class: "note", hidden: "" });
  panel.appendChild(header);
  panel.appendChild(log);
  panel.appendChild(form);
  panel.appendChild(note);
  root.appendChild(button);
  root.appendChild(panel);
  // The panel's own words in `labels`' language; the tag's data-button and data-placeholder stay as written.
  function useLabels(labels) {
    T = labelsOf(labels);
    if (!opt.button) button.textContent = T.ask;
    restart.setAttribute("aria-label", T.new_conversation);
    restart.setAttribute("title", T.new_conversation);
    close.setAttribute("aria-label", T.close);
    input.setAttribute("aria-label", T.question);
    input.setAttribute("placeholder", opt.placeholder || T.placeholder);
    send.textContent = T.send; // not "Ask" as the launcher: two buttons of one name are one to a screen reader
  }
  useLabels(null);

  // Static mode's engine, imported once from this script's folder (its data and model load beside it); a
  // failed load is tried again on the next question.
  var loading = null;
  function engine() {
    if (!loading) {
      loading = import(new URL("inkwell-static.mjs", here).href).catch(function (err) {
        loading = null;
        throw new Error("The assistant could not load: " + (err && err.message ? err.message : err));
      });
    }
    return loading;
  }

  function setOpen(open, focus) {
    // Static mode: the model starts loading while the reader types (a failure is said on asking).
    if (open && isStatic) engine().catch(function () {});
    state.open = open;
    panel.hidden = !open;
    button.setAttribute("aria-expanded", String(open));
    save();
    if (focus) (open ? input : button).focus();
  }
  button.addEventListener("click", function () { setOpen(panel.hidden, true); });
  close.addEventListener("click", function () { setOpen(false, true); });
  // From the panel or its launcher (Shift+Tab from the panel's first button lands there).
  root.addEventListener("keydown", function (e) {
    if (e.key === "Escape" && !panel.hidden) setOpen(false, true);
  });
  // Keys typed in the widget's text boxes stay in the widget: outside the shadow DOM they come from its host
  // element, not a text box, so a blog's shortcuts took them ("/" moved the focus to the blog's search).
  ["keydown", "keypress", "keyup"].forEach(function (type) {
    root.addEventListener(type, function (e) { if (e.target.tagName === "INPUT") e.stopPropagation(); });
  });

  function drawQuestion(text) {
    log.appendChild(el("p", { class: "q" }, text));
  }
  // The answer as plain text (answer_text): `answer` is Markdown, whose escapes would show as typed.
  function drawAnswer(turn) {
    var box = el("div");
    var answer = el("p", { class: "a" }, turn.text || turn.answer || "");
    box.appendChild(answer);
    log.appendChild(box);
    if (turn.reply) {
      if (turn.reply.lang) answer.lang = turn.reply.lang;
      drawSearched(box, answer, turn.reply);
      drawSources(box, turn.reply);
    }
    return { box: box, answer: answer };
  }
  // A follow-up was searched with the question before it (or that question again, "tell me more"): the
  // reader sees what was searched, as in the chat.
  function drawSearched(box, answer, reply) {
    if (!reply.searched_for) return;
    box.insertBefore(el("p", { class: "muted" }, labelsOf(reply.labels).searched_for + " " + reply.searched_for), answer);
  }
  function drawSources(box, reply) {
    // One link per post: where the server says a click goes (the post at the quoted sentences).
    var links = [];
    var seen = {};
    var posts = reply.mode === "none" ? reply.suggestions || [] : (reply.sources || []).concat(reply.sentences || []);
    posts.forEach(function (p) {
      if (seen[p.post_id]) return;
      seen[p.post_id] = 1;
      links.push({ title: p.title, href: safeUrl(p.link || p.url || "") });
    });
    if (!links.length) return;
    var words = labelsOf(reply.labels);
    box.appendChild(el("p", { class: "muted" }, reply.mode === "none" ? words.closest : words.sources));
    var list = el("ul", { class: "src" });
    links.forEach(function (l) {
      var item = el("li");
      if (l.href) {
        var a = el("a", { href: l.href, target: "_top" }, l.title);
        item.appendChild(a);
      } else {
        item.textContent = l.title;
      }
      list.appendChild(item);
    });
    box.appendChild(list);
    if (reply.note) box.appendChild(el("p", { class: "muted" }, reply.note));
  }
  // Thumbs under every answer the server logged (question_id), declined ones too as in the chat: the
  // author sees which answers helped and what readers missed. A thumb is sent at once; then an optional
  // short comment goes with it (the same question id, the same thumb).
  function drawRating(box, reply) {
    if (!reply.question_id) return;
    var words = labelsOf(reply.labels);
    var row = el("div", { class: "rate", role: "group", "aria-label": words.was_helpful });
    function rate(up, comment) {
      return fetch(api + "/api/feedback", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ question_id: reply.question_id, up: up, comment: comment || "" }),
      }).then(function (r) { if (!r.ok) throw new Error(String(r.status)); });
    }
    function failed() { say(row, words.rating_failed); }
    [["\ud83d\udc4d", words.helpful, true], ["\ud83d\udc4e", words.not_helpful, false]].forEach(function (b) {
      var thumb = el("button", { type: "button", "aria-label": b[1] }, b[0]);
      thumb.addEventListener("click", function () {
        rate(b[2]).then(function () { drawComment(row, b[2], rate, failed, words); }, failed);
      });
      row.appendChild(thumb);
    });
    box.appendChild(row);
  }
  // The row's last word, in place of its buttons and box: a keyboard reader's focus among them would fall to
  // the blog's page (the next Tab from its top), so it goes to the question box.
  function say(row, text) {
    var had = row.contains(root.activeElement);
    row.textContent = text;
    if (had) input.focus();
  }
  function drawComment(row, up, rate, failed, words) {
    row.textContent = "";
    row.appendChild(el("span", null, words.thanks));
    var line = el("div", { class: "comment" });
    var text = el("input", { type: "text", maxlength: String(MAX_COMMENT), "aria-label": words.comment,
      placeholder: words.comment });
    var sendComment = el("button", { type: "button" }, words.send);
    function submit() {
      var comment = text.value.trim();
      if (!comment || sendComment.disabled) return;
      sendComment.disabled = true;
      rate(up, comment).then(function () { say(row, words.thanks_comment); }, failed);
    }
    sendComment.addEventListener("click", submit);
    // Enter sends the comment (it is not in the question's form, which Enter would submit).
    text.addEventListener("keydown", function (e) {
      if (e.key === "Enter") { e.preventDefault(); submit(); }
    });
    line.appendChild(text);
    line.appendChild(sendComment);
    row.appendChild(line);
    text.focus(); // the thumb that had the focus is gone: a keyboard reader lands on the comment
  }
  state.turns.forEach(function (t) {
    drawQuestion(t.question);
    drawAnswer(t);
  });
  setOpen(state.open, false);

  // Before the first question: the owner's greeting and starter questions, one click to ask; on every
  // page, the note on what is kept while the question log is on.
  var welcome = el("div", { class: "welcome" });
  log.appendChild(welcome);
  var greeting = {}; // the owner's greeting and starters, drawn again for a new conversation
  function drawWelcome() {
    welcome.textContent = "";
    if (greeting.greeting) welcome.appendChild(el("p", { class: "muted" }, greeting.greeting));
    (greeting.starters || []).forEach(function (q) {
      var b = el("button", { type: "button", class: "starter" }, q);
      b.addEventListener("click", function () { input.value = q; form.requestSubmit(); });
      welcome.appendChild(b);
    });
  }
  fetch(isStatic ? here + "data/welcome.json" : api + "/api/welcome").then(function (r) {
    return r.ok ? r.json() : {};
  }).then(function (w) {
    // The blog's language until a question is answered (a conversation kept from another page: its last).
    var last = state.turns.length ? state.turns[state.turns.length - 1].reply : null;
    useLabels(last && last.labels ? last.labels : w.labels);
    if (!opt.title && typeof w.title === "string" && w.title) {
      heading.textContent = w.title; // the owner's chat title, unless the tag names one
      panel.setAttribute("aria-label", w.title);
    }
    if (w.question_log && typeof w.privacy_note === "string" && w.privacy_note) {
      note.textContent = w.privacy_note;
      note.hidden = false;
    }
    greeting = { greeting: w.greeting, starters: w.starters };
    if (!state.turns.length) drawWelcome();
  }, function () { /* no welcome: the panel still asks */ });

  function history() {
    var turns = [];
    state.turns.forEach(function (t) {
      turns.push({ role: "user", content: t.question });
      if (t.answer) turns.push({ role: "assistant", content: t.answer });
    });
    return turns.slice(-MAX_TURNS);
  }

  // Server-sent events from a fetch body (EventSource cannot POST): "event: x\ndata: {...}\n\n" blocks.
  function readEvents(response, onEvent) {
    var reader = response.body.getReader();
    var decoder = new TextDecoder();
    var buffer = "";
    function pump() {
      return reader.read().then(function (chunk) {
        if (chunk.done) return;
        buffer += decoder.decode(chunk.value, { stream: true });
        var blocks = buffer.split("\n\n");
        buffer = blocks.pop();
        blocks.forEach(function (block) {
          var event = "message", data = "";
          block.split("\n").forEach(function (line) {
            if (line.indexOf("event:") === 0) event = line.slice(6).trim();
            else if (line.indexOf("data:") === 0) data += line.slice(5).trim();
          });
          if (data) onEvent(event, JSON.parse(data));
        });
        return pump();
      });
    }
    return pump();
  }

  // fetch rejects (a TypeError, "Failed to fetch") when the server is down or the browser refused it:
  // most often a blog the owner has not allowed, whose call the browser stops before any answer.
  var UNREACHABLE = "The answer service could not be reached from this site. It may not allow this " +
    "site yet (its owner lists the blogs allowed in INKWELL_ALLOWED_ORIGINS), or it may be down.";

  var CUT_OFF = "The answer was cut off before it finished. Please ask again.";

  function finish(turn, view, data) {
    turn.answer = data.answer;  // Markdown, sent back as the conversation (as the chat keeps it)
    turn.text = data.answer_text || data.answer;
    turn.reply = data;
    if (data.labels) useLabels(data.labels); // the controls now speak the reader's language
    log.removeAttribute("aria-busy"); // the finished answer, written once more: read once, as a whole
    view.answer.textContent = turn.text;
    if (data.lang) view.answer.lang = data.lang; // a German answer read in German on an English blog
    drawSearched(view.box, view.answer, data);
    drawSources(view.box, data);
    drawRating(view.box, data);  // only for a logged answer: never in static mode
    state.turns.push(turn);
    save();
    log.scrollTop = log.scrollHeight;
  }

  function askServer(question, turn, view) {
    var body = { question: question, conversation: history(), client: "widget" };
    if (opt.collection) body.collection = opt.collection;
    var text = "";
    return fetch(api + "/api/ask", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify(body),
    }).catch(function () {
      throw new Error(UNREACHABLE);  // only fetch's own rejection: the server's errors are read below
    }).then(function (response) {
      if (!response.ok) {
        return response.json().catch(function () { return {}; }).then(function (err) {
          throw new Error(err.error || "The question could not be answered (" + response.status + ").");
        });
      }
      var done = false;
      return readEvents(response, function (event, data) {
        if (event === "delta") {
          // Busy while the words stream in ("Writing..." is read first): a screen reader read the live log
          // again at every word. The finished answer is read once (finish).
          log.setAttribute("aria-busy", "true");
          text += data.plain != null ? data.plain : data.text;
          view.answer.textContent = text;
          log.scrollTop = log.scrollHeight;
        } else if (event === "done") {
          done = true;
          finish(turn, view, data);
        } else if (event === "error") {
          done = true;
          throw new Error(data.error);
        }
      }).then(function () {
        // The stream ended without its `done` (a proxy's time limit, a restart): the reader would be left
        // with "Writing..." or half an answer that looks whole.
        if (!done) throw new Error(CUT_OFF);
      }, function (err) {
        throw done ? err : new Error(CUT_OFF); // the connection dropped mid-answer ("network error")
      });
    });
  }

  // Static mode: the engine's reply, already in the shape `done` carries (inkwell-static.mjs widgetReply).
  function askHere(question, turn, view) {
    return engine().then(function (m) { return m.widgetReply(question, history()); }).then(function (data) {
      finish(turn, view, data);
    });
  }

  var busy = false;
  restart.addEventListener("click", function () {
    if (busy) return; // the answer being written belongs to the conversation it was asked in
    state.turns = [];
    save();
    while (log.firstChild) log.removeChild(log.firstChild);
    log.appendChild(welcome);
    drawWelcome();
    input.focus();
  });
  form.addEventListener("submit", function (e) {
    e.preventDefault();
    var question = input.value.trim();
    if (!question || busy) return;
    busy = true;
    welcome.textContent = "";
    send.disabled = true;
    input.value = "";
    drawQuestion(question);
    var turn = { question: question, answer: "" };
    var view = drawAnswer(turn);
    view.answer.textContent = T.writing;
    log.scrollTop = log.scrollHeight; // the new question in view, below a long conversation
    (isStatic ? askHere : askServer)(question, turn, view).catch(function (err) {
      log.removeAttribute("aria-busy");
      view.answer.textContent = err && err.message ? err.message : "The question could not be answered.";
      log.scrollTop = log.scrollHeight; // why it was refused (too long, too many, unreachable), in view
    }).then(function () {
      busy = false;
      send.disabled = false;
      input.focus();
    });
  });

  (document.body || document.documentElement).appendChild(host);
})();
