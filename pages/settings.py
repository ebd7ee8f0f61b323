"""Settings (owner only): how the author sounds and what a new reader is offered, saved with the tables
(core/answer/owner.py) and used by the next question on every page and replica, without a restart.

Fields: the author's name and description, the persona prompt, the decline text, the chat's title and
greeting, and 3–6 starter questions (typed, or suggested from the posts' most central chunks). A preview
shows, for a question, the system prompt a generated answer would be sent with the values as typed (saved
or not) and the answer in each mode (generated only when a model is configured).
"""

from __future__ import annotations

import streamlit as st

from core.answer import reply
from core.answer.abstain import NO_ANSWER_MESSAGE
from core.answer.generate import DEFAULT_PROMPT_TEMPLATE, build_messages
from core.answer.owner import (
    APPLIED,
    DESCRIPTIONS,
    KEYS,
    LABELS,
    MAX_STARTERS,
    MIN_STARTERS,
    PERSONA_EXAMPLE,
    cleared_keys,
    cleared_note,
    edited,
    field_texts,
    load_owner,
    reloaded,
    save_owner,
)
from core.answer.suggest import answered_starters
from core.config import ConfigError, Settings
from core.llm import LLMError
from core.search import bar_for_table, route_and_search
from pages import shared
from pages.shared import replies
from pages.shared.drafts import keep_draft, restore_draft
from pages.shared.state import read_secrets

shared.through_entry()  # first: a fresh server may run this file on its own (pages/shared/entry.py)

md = shared.md_escape
FIELD = "owner_{}"  # session state key of each field's widget
FILLED, VERSION = "owner_filled", "owner_version"  # each field's text when filled; the settings' version
JUST_SAVED = "owner_just_saved"  # the fields this session saved, to show as stored on the next run
DRAFT = "owner"  # the fields' typing, kept while another page is open (pages/shared/drafts.py)

st.title("Settings")
shared.show_flash()
if not shared.require_owner("Changing the settings"):
    st.stop()

settings = shared.base_settings()  # what answers use now: saved values over the environment's
store = shared.get_store(settings)
try:
    # The version first: a save landing between the two reads shows as a newer version on the next run.
    version = store.settings_version()
    stored = field_texts(load_owner(store))
except shared.KNOWN_ERRORS as exc:
    st.error(f"Cannot read the saved settings: {md(exc)}")
    st.stop()
defaults = Settings.load(secrets=read_secrets())  # what applies where nothing is saved


def typed() -> dict[str, str]:
    return {key: st.session_state[FIELD.format(key)] for key in KEYS}


def as_filled() -> dict[str, str]:
    """Each field's widget key and the text it was filled with: a draft equal to these is no draft."""
    return {FIELD.format(k): st.session_state[FILLED][k] for k in KEYS}


# The widgets start from what is saved and keep the owner's typing across reruns. What each field was
# filled with (FILLED) is what Save compares with, so only the owner's own edits are written.
# Streamlit forgets a widget's value after a run that does not draw it: the owner who opened the chat to
# try something came back to the saved values, the typing gone. It is kept as a draft and put back here,
# so the check below sees it as the owner's edits (a field saved elsewhere meanwhile is still reloaded).
if FILLED in st.session_state:
    restore_draft(DRAFT, as_filled())
elsewhere: list[str] = []  # fields another process saved since, reloaded in this run
if FILLED not in st.session_state or any(FIELD.format(k) not in st.session_state for k in KEYS):
    st.session_state.update({FIELD.format(k): text for k, text in stored.items()})
    st.session_state[FILLED], st.session_state[VERSION] = stored, version
elif st.session_state[VERSION] != version:  # saved since the fields were filled: here or elsewhere
    own = st.session_state.pop(JUST_SAVED, {})
    fresh = reloaded(typed(), st.session_state[FILLED], stored)
    mine = {k: stored[k] for k in own if k in stored}  # our own save, as stored (validated, tidied)
    st.session_state.update({FIELD.format(k): text for k, text in {**fresh, **mine}.items()})
    st.session_state[FILLED], st.session_state[VERSION] = stored, version
    elsewhere = [k for k in fresh if k not in own]
    if elsewhere:
        st.info(
            "The settings were changed elsewhere (another tab, `inkwell settings` or another replica) "
            f"since this page loaded, and are reloaded: {', '.join(LABELS[k] for k in elsewhere)}. "
            "Fields you edited keep your text."
        )


def use_example_persona() -> None:
    st.session_state[FIELD.format("persona_prompt")] = PERSONA_EXAMPLE


def suggest() -> None:
    try:
        suggested = answered_starters(store, settings, shared.get_embedder_cached(settings), count=4)
    except shared.KNOWN_ERRORS as exc:
        shared.flash(f"Could not suggest questions: {exc}", "error")
        return
    found = suggested.kept  # only questions the chat answers: a declined one is said, not offered
    if suggested.declined:
        shared.flash(suggested.declined_note, "warning")
    if not found:
        if not suggested.declined:
            shared.flash("There are no posts to suggest questions from yet.", "warning")
        return
    st.session_state[FIELD.format("starters")] = "\n".join(s.question for s in found)
    shared.flash(
        "Suggested from the posts' most central passages: "
        + "; ".join(f"“{s.question}” ({s.title})" for s in found)
        + ". Edit them, then Save.",
        "info",
    )
    if len(found) < MIN_STARTERS:  # too few posts and passages for more: Save would refuse them as they are
        shared.flash(
            f"The posts gave only {shared.plural(len(found), 'question')}: add at least "
            f"{MIN_STARTERS - len(found)} more of your own (one per line) before saving; "
            f"{MIN_STARTERS} to {MAX_STARTERS} are needed.",
            "warning",
        )


def not_set_note(key: str) -> str:
    """What applies to the field left empty: the environment's value or the default."""
    if key not in APPLIED:
        return "Not saved."
    value = getattr(defaults, key)
    if not value and key == "decline_text":
        return f"Not saved: the built-in reply applies, “{NO_ANSWER_MESSAGE}” (in the reader's language)."
    return f"Not saved: “{value or DEFAULT_PROMPT_TEMPLATE}” applies (environment or default)."


def field(key: str, *, area: bool = False, height: int | None = None) -> None:
    widget = st.text_area if area else st.text_input
    options = {"height": height} if area and height else {}
    label = LABELS[key] + (" (one per line)" if key == "starters" else "")
    draft = {"on_change": keep_draft, "args": (DRAFT, as_filled())}  # kept even if a page switch ends the run
    widget(label, key=FIELD.format(key), help=DESCRIPTIONS[key], **draft, **options)
    if not st.session_state[FIELD.format(key)].strip() and key != "starters":
        st.caption(md(not_set_note(key)))


st.caption(
    "Saved with the tables: every page, `inkwell ask` and every replica use them from the next question, "
    "no restart. A value saved here wins over INKWELL_AUTHOR_NAME, INKWELL_AUTHOR_DESCRIPTION and "
    "secrets.toml; leave a field empty to use those again."
)
left, right = st.columns(2)
with left:
    field("author_name")
    field("author_description")
    field("chat_title")
    field("greeting", area=True, height=90)
with right:
    field("decline_text", area=True, height=90)
    st.caption(
        "Shown, word for word, when the posts do not answer a question (no model writes it), to readers "
        "asking in the language it is written in; other languages keep the built-in reply."
    )
    field("starters", area=True, height=160)
    st.button(
        "Suggest starter questions",
        on_click=suggest,
        icon=":material/lightbulb:",
        help=f"Up to 4 questions (at most {MAX_STARTERS} are kept) made from the most central passage of "
        "each group of similar posts: from its heading and title, never claiming what it says.",
    )
field("persona_prompt", area=True, height=180)
st.button("Start from the example persona", on_click=use_example_persona, type="tertiary")
keep_draft(DRAFT, as_filled())  # what the fields hold now, suggested or example text included

if st.button("Save", type="primary", icon=":material/save:"):
    changes = edited(typed(), st.session_state[FILLED])
    try:
        saved = save_owner(store, changes)
    except ConfigError as exc:
        st.error(f"Not saved: {md(exc)}")
    except shared.KNOWN_ERRORS as exc:
        st.error(f"Could not save the settings: {md(exc)}")
    else:
        if changes:
            st.session_state[JUST_SAVED] = changes
        if elsewhere:  # said above, but the rerun clears it: say it again after
            names = ", ".join(LABELS[k] for k in elsewhere)
            shared.flash(
                f"The settings were changed elsewhere and reloaded: {names} (kept as saved there).", "info"
            )
        cleared = cleared_note(cleared_keys(changes, saved))  # said: an empty field is not "saved" as empty
        said = " ".join(filter(None, ["Saved.", cleared, "Readers get them with their next question."]))
        shared.flash(said if changes else "Nothing changed.")
        st.rerun()

# Preview ----------------------------------------------------------------------------------------------------
st.subheader("Preview")
st.caption("Ask a question to see the prompt a generated answer would be sent, and the answer in each mode, "
           "with the values above as typed (saved or not).")  # fmt: skip
question = st.text_input("Question", key="owner_preview_question", placeholder="e.g. one of the starters")
want_preview = st.button("Preview", icon=":material/visibility:")
if want_preview and not question.strip():  # the click did nothing, with no word why
    st.warning("Type a question to preview the answer to.")
if want_preview and question.strip():
    values = typed()
    try:
        preview = settings.replace(**{k: values[k].strip() or getattr(defaults, k) for k in APPLIED})
        embedder = shared.get_embedder_cached(preview)
        with st.spinner("Searching the posts…"):
            _, retrieval = route_and_search(question, preview, store=store, embedder=embedder)
            bar = bar_for_table(store, embedder)
    except shared.KNOWN_ERRORS as exc:
        st.error(f"Cannot preview: {md(exc)}")
        st.stop()
    messages, _ = build_messages(question, retrieval.hits, preview)
    st.markdown("**System prompt a generated answer is sent**")
    st.code(messages[0]["content"], language=None, wrap_lines=True)
    modes = ["extractive"] if preview.uses_builtin_llm else ["extractive", "generative"]
    for mode, column in zip(modes, st.columns(len(modes)), strict=True):
        with column:
            st.markdown(f"**{'The author’s own sentences' if mode == 'extractive' else 'Generated answer'}**")
            try:
                answered = reply(question, retrieval.hits, preview, embedder, mode=mode, bar=bar)
                for _ in answered:  # the whole text
                    pass
            except (LLMError, *shared.KNOWN_ERRORS) as exc:
                st.error(f"Could not answer: {md(exc)}")
                continue
            if answered.mode == "none":
                st.caption("The posts do not answer this: readers get the decline text.")
            # Drawn by the chat's own function: each post's linked title, then its quoted sentences below.
            replies.show_body(replies.reply_message(answered, None, preview.uses_builtin_llm))
    if preview.uses_builtin_llm:
        st.caption("No answer model is configured (OPENAI_API_KEY or OPENAI_BASE_URL): readers get quotes.")
