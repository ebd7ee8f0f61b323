"""A reply in the chat: the author's quoted sentences with links to their posts, a generated answer, or
"I haven't written about that" with the closest posts; then where it came from and how far to trust it.

Replies are kept in the session as plain dicts (`reply_message`), so they can be drawn again on every
rerun and stored as JSON. A message's "language" (the chat sets it) puts the reader's fixed words ("From
<post>:", the note under quotes) in that language (core/text/labels.py); without one they are English.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from core.answer import QUOTE_JOINS, Quote, Reply, passage_text
from core.text.labels import ENGLISH, labels
from pages.shared.details import details_on
from pages.shared.reading import cited_link
from pages.shared.state import owner_unlocked
from pages.shared.tables import column_config, hits_frame
from pages.shared.text import md_escape, plural, safe_answer

BUILTIN_NOTE = "Answered by the small offline model: rough. Set an OpenAI key or server for better answers."
MODEL_FAILED = "The answer model could not answer just now. Please ask again in a minute."


def model_detail(exc: Exception | str) -> str:
    """A model error's message, escaped, for the owner; "" for a public reader (the message names the
    model server, whose address is not the readers' business)."""
    return md_escape(exc) if owner_unlocked() else ""


def model_failed(exc: Exception) -> str:
    """The error a reader sees when the model failed and nothing could be quoted instead."""
    detail = model_detail(exc)
    return f"{MODEL_FAILED} ({detail})" if detail else MODEL_FAILED


def excerpts_label(count: int, mode: str) -> str:
    """The excerpts expander's title: "1 excerpt was quoted", "3 excerpts went into the answer's context"."""
    excerpts = plural(count, "excerpt")
    if mode == "extractive":
        return f"{excerpts} {'was' if count == 1 else 'were'} quoted"
    return f"{excerpts} went into the answer's context"


def reply_message(
    answered: Reply, label: str | None, builtin: bool, label_at: str | None = None
) -> dict[str, Any]:
    """The assistant message to keep for a consumed reply (JSON-able); `label` names the model that
    generated it (None when nothing was generated) as public readers may see it, `label_at` also where
    it runs (shown to the owner only), `builtin` whether that is the built-in one."""
    grounding = answered.grounding
    return {
        "role": "assistant",
        "question": answered.question,
        "content": answered.text,
        "plain": answered.plain_text,  # what "Copy the answer" gives: no Markdown emphasis or escapes
        "mode": answered.mode,
        "quotes": [q.to_json() for q in answered.quotes],
        "suggestions": [s.to_json() for s in answered.suggestions],
        "sources": [s.to_json() for s in answered.sources],
        "hits": [h.to_json() for h in answered.used_hits],
        "model": label,
        "model_at": label_at if label else None,
        "builtin": answered.called_model and builtin,
        "truncated": answered.truncated,
        "dropped": [s.to_json() for s in answered.dropped],
        "grounding": grounding.to_json() if grounding else None,
        "fallback": answered.fallback_json(),
        "owner_note": answered.owner_note,
    }


def post_link(post_id: str, title: str, url: str = "", sentences: Sequence[str] = ()) -> str:
    """Markdown link to a cited post as readers open it: its page on the blog (at the quoted sentences)
    when it has an address, else the app's reader page (pages/read.py); never the owner's inspector."""
    return f"[{md_escape(title or post_id)}]({cited_link(post_id, url, sentences)})"


def quoted_in(message: dict, post_id: str) -> list[str]:
    """The sentences the reply quoted from this post, in reading order."""
    return [q["text"] for q in message.get("quotes") or [] if q["post_id"] == post_id]


def quotes_markdown(quotes: list[dict], words: dict[str, str] = ENGLISH) -> str:
    """The quoted sentences, post by post, each post's title linking to it under `words`' "From <post>:";
    the sentences verbatim, laid out as the post lays them out (`passage_text`)."""
    groups: list[list[Quote]] = []
    for quote in map(Quote.from_json, quotes):
        if groups and groups[-1][0].post_id == quote.post_id:
            groups[-1].append(quote)
        else:
            groups.append([quote])
    parts = []
    for group in groups:
        body = passage_text(group, QUOTE_JOINS, lambda heading: f"**{heading}**", md_escape)
        link = post_link(group[0].post_id, group[0].title, group[0].url, [q.text for q in group])
        parts.append(words["from_post"].replace("{title}", f"*{link}*") + f"\n\n{body}")
    return "\n\n".join(parts)


def show_body(message: dict) -> None:
    """The reply's text as the reader reads it."""
    mode = message.get("mode")
    if mode == "extractive" and message.get("quotes"):
        st.markdown(quotes_markdown(message["quotes"], labels(message.get("language"))))
    elif mode == "none":
        # A fixed sentence: ours or the owner's decline text (Settings), plain words shown as typed, as
        # the widget shows them ("$40 to $90" is no formula, "*nix" no emphasis).
        st.markdown(md_escape(message.get("content", "")))
        suggestions = message.get("suggestions") or []
        if suggestions:
            links = "\n".join(
                f"- {post_link(s['post_id'], s['title'], s.get('url') or '')}" for s in suggestions
            )
            st.markdown(f"{closest_label(message)}\n\n{links}")
        route = message.get("route") or {}
        if route.get("status") == "chosen":  # the reader's sidebar choice: the other collections may answer
            where = md_escape(", ".join(route.get("collections") or []))
            st.caption(f"{labels(message.get('language'))['searched_in']} {where}")
    elif message.get("content"):
        st.markdown(safe_answer(message["content"]))


def closest_label(message: dict) -> str:
    from core.answer.reply import CLOSEST, phrase

    return phrase(CLOSEST, message.get("question", ""))


def source_line(source: dict, sentences: Sequence[str] = (), details: bool = False) -> str:
    """A cited post, linked (at `sentences`, the ones quoted from it); its relevance with `details`."""
    where = ", ".join(md_escape(v) for v in (source.get("collection"), source.get("date")) if v)
    return (
        post_link(source["post_id"], source["title"], source.get("url") or "", sentences)
        + (f" ({where})" if where else "")
        + (f" · relevance {source['relevance']:.2f}" if details else "")
    )


def show_notes(message: dict) -> None:
    """Under a reply: who wrote it, cuts and left-out sentences, sources, grounding; for the owner (see
    pages/shared/details.py) also the model's name, relevance numbers and the excerpts."""
    mode = message.get("mode")
    details = details_on()
    words = labels(message.get("language"))
    fallback = message.get("fallback")
    if message.get("owner_note") and owner_unlocked():
        st.caption(f"For the owner: {md_escape(message['owner_note'])}")
    if fallback:
        st.caption(md_escape(fallback["note"]))
        detail = model_detail(fallback["error"])
        if detail:
            st.caption(f"Model error (shown to the owner only): {detail}")
    elif mode == "extractive":
        st.caption(words["quoted"])
    elif message.get("builtin"):
        st.caption(BUILTIN_NOTE)
    elif message.get("model") and details:
        label = (owner_unlocked() and message.get("model_at")) or message["model"]
        st.caption(f"Answered by {md_escape(label)}.")
    if message.get("truncated"):
        st.caption("The answer reached the length limit (max tokens): it ends at its last complete sentence.")
    dropped = message.get("dropped") or []
    if dropped:
        st.caption(
            f"{plural(len(dropped), 'sentence')} not found in the excerpts {'was' if len(dropped) == 1 else 'were'} left out."
        )
    sources = message.get("sources") or []
    if sources and mode != "none":
        lines = [
            f"{i}. {source_line(s, quoted_in(message, s['post_id']), details)}"
            for i, s in enumerate(sources, start=1)
        ]
        st.markdown(f"**{words['sources_title']}**\n\n" + "\n".join(lines))
    show_grounding(message.get("grounding"), dropped)
    hits = message.get("hits") or []
    if hits and details:
        with st.expander(excerpts_label(len(hits), mode)):
            st.dataframe(
                hits_frame(hits).drop(columns=["rank"]), hide_index=True, column_config=column_config()
            )
    if message.get("content") and mode != "none":
        with st.expander(words["copy"]):
            # Plain text, as the API's answer_text: a reader pastes it where Markdown's `*title*` and `\&`
            # would show as typed. A message kept before "plain" existed copies its Markdown.
            st.code(message.get("plain") or message["content"], language=None, wrap_lines=True)


def show_grounding(grounding: dict | None, dropped: list[dict]) -> None:
    if grounding and grounding.get("skipped"):
        st.caption(f"Grounding not checked: {md_escape(grounding['skipped'])}.")
        return
    if not grounding or grounding["supported_fraction"] is None:
        return
    judged = [g for g in grounding["sentences"] if g["judged"]]
    unsupported = [g for g in judged if not g["supported"]]
    st.caption(
        f"Grounding: {len(judged) - len(unsupported)} of {plural(len(judged), 'sentence')} "
        f"{'is' if len(judged) == 1 else 'are'} supported by the excerpts below."
    )
    listed = dropped or unsupported
    if listed:
        label = "left out of the answer" if dropped else "not found in the excerpts: treat with care"
        with st.expander(f"{plural(len(listed), 'sentence')} {label}"):
            for item in listed:
                st.text(item["sentence"])
                if item.get("unknown_details"):
                    st.caption("No excerpt mentions: " + ", ".join(item["unknown_details"]))
