"""The owner's settings for how the author sounds and what a new reader is offered, saved with the tables
(core/store/settings.py) and applied without a restart.

    owner = load_owner(store)                 # read once per settings-table version
    settings = apply_owner(settings, owner)   # author name/description, persona prompt, decline text
    save_owner(store, {"starters": ["…", "…", "…"]})   # validated; SettingError names a bad value

How saved values combine with the environment: a value saved here wins over `INKWELL_AUTHOR_NAME`,
`INKWELL_AUTHOR_DESCRIPTION`, `INKWELL_PERSONA_PROMPT`, `INKWELL_DECLINE_TEXT` and secrets.toml, which stay
the defaults for a field never saved or saved empty (clearing a field brings the environment's value
back). The reason: the owner changes these in the app, while the environment needs a restart; so the
latest deliberate choice is the saved one. A CLI flag given for one call still wins over both.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from core.config import ConfigError, Settings, persona_template_problem
from core.store import Store

MIN_STARTERS, MAX_STARTERS = 3, 6
# The most characters each field may hold: what a page shows in one glance (the persona prompt is longer).
LIMITS = {
    "author_name": 80,
    "author_description": 300,
    "persona_prompt": 4000,
    "decline_text": 400,
    "chat_title": 100,
    "greeting": 600,
    "starter": 200,
}
# A persona prompt with the seed designs' elements, offered to start from: the author's tone, what to do
# when the posts do not say, how many posts to recommend, and hinting at related subjects.
PERSONA_EXAMPLE = (
    "You are {author_name}, {author_description}. Speak as yourself, in the first person, in the same "
    "tone as your posts: plain, warm and concrete. Answer the reader's question using ONLY the excerpts "
    "from your writings you are given. When they do not say, tell the reader plainly that you have not "
    "written about it; never guess or make up details. Recommend at most two of your posts for further "
    "reading, by title. When the excerpts touch on a related subject you wrote about, end with one short "
    "line pointing to it. Answer in the language of the question."
)
# Each setting's name for people: the Settings page's field labels and the errors' (the CLI adds the key).
LABELS = {
    "author_name": "Author's name",
    "author_description": "Short description",
    "persona_prompt": "Persona prompt",
    "decline_text": "Decline text",
    "chat_title": "Chat title",
    "greeting": "Greeting",
    "starters": "Starter questions",
}
# For people (CLI `inkwell settings show`, the Settings page's help).
DESCRIPTIONS = {
    "author_name": "The author's name, as answers and the chat name them.",
    "author_description": "Who the author is, in a few words (the persona prompt's {author_description}).",
    "persona_prompt": "The generated answers' system prompt; may use {author_name} and {author_description}.",
    "decline_text": "The fixed reply when the posts do not answer a question (never written by a model).",
    "chat_title": "The chat page's title (empty: 'Ask <author name>').",
    "greeting": "A first message on the empty chat.",
    "starters": f"{MIN_STARTERS}-{MAX_STARTERS} example questions offered on the empty chat.",
}
# Fields that are Settings fields too, applied to the settings every answer is made with.
APPLIED = ("author_name", "author_description", "persona_prompt", "decline_text")


class SettingError(ConfigError):
    """A value refused for one setting. Its message names the setting as the Settings page labels it
    ("Author's name is 95 characters long (at most 80)"); `with_key` adds the key the CLI takes."""

    def __init__(self, key: str, problem: str) -> None:
        # `problem` follows the name: " is 95 characters long (at most 80)", ": give 3 to 6 …".
        super().__init__(LABELS[key] + problem)
        self.key, self.problem = key, problem

    def with_key(self) -> str:
        """The message with the setting's key: "Author's name (author_name) is 95 characters long …"."""
        return f"{LABELS[self.key]} ({self.key}){self.problem}"


@dataclass(frozen=True)
class OwnerSettings:
    """What the owner saved; "" (or no starters) means not set."""

    author_name: str = ""
    author_description: str = ""
    persona_prompt: str = ""
    decline_text: str = ""
    chat_title: str = ""
    greeting: str = ""
    starters: tuple[str, ...] = ()

    @classmethod
    def from_saved(cls, values: Mapping[str, str]) -> OwnerSettings:
        """From the stored strings; a value no longer valid (an older version's) is left out, not raised."""
        known: dict[str, Any] = {}
        for f in fields(cls):
            raw = values.get(f.name)
            if raw is None:
                continue
            try:
                known[f.name] = _decoded(f.name, raw)
            except ConfigError:
                continue
        return cls(**known)

    def to_json(self) -> dict[str, Any]:
        return {f.name: list(v) if isinstance(v := getattr(self, f.name), tuple) else v for f in fields(self)}

    def title(self, settings: Settings) -> str:
        """The chat's title: the saved one, else "Ask <author name>"."""
        return self.chat_title or f"Ask {settings.author_name}"


KEYS = tuple(f.name for f in fields(OwnerSettings))


def validated(changes: Mapping[str, Any]) -> dict[str, str]:
    """The changes as stored strings, each checked; SettingError (one line, naming the field as the
    Settings page labels it) otherwise, or ConfigError for a key that is no setting.

    `starters` takes a list of questions (or a JSON list, or one per line); every other field a string.
    An empty value clears the field.
    """
    out: dict[str, str] = {}
    for key, value in changes.items():
        if key not in KEYS:
            raise ConfigError(f"unknown setting {key!r}; the settings are: {', '.join(KEYS)}")
        if key == "starters":
            out[key] = json.dumps(list(_starters(value)), ensure_ascii=False)
            continue
        text = str(value or "").strip()
        if key in ("author_name", "chat_title"):  # one line: they are shown as headings
            text = " ".join(text.split())
        if len(text) > LIMITS[key]:
            raise SettingError(key, f" is {len(text)} characters long (at most {LIMITS[key]})")
        if key == "persona_prompt" and (problem := persona_template_problem(text)):
            raise SettingError(key, f": {problem}")
        out[key] = text
    return out


def _starters(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except json.JSONDecodeError:
                raise SettingError("starters", ": not a JSON list of questions") from None
        else:
            value = text.splitlines()
    if not isinstance(value, list | tuple) or not all(isinstance(q, str) for q in value):
        raise SettingError("starters", ": give a list of questions")
    unique: dict[str, str] = {}  # the same question in other capitals counts once
    for question in (" ".join(q.split()) for q in value if q.strip()):
        unique.setdefault(question.casefold(), question)
    questions = tuple(unique.values())
    if questions and not MIN_STARTERS <= len(questions) <= MAX_STARTERS:
        raise SettingError(
            "starters",
            f": give {MIN_STARTERS} to {MAX_STARTERS} different questions (or none), not {len(questions)}",
        )
    for question in questions:
        if len(question) > LIMITS["starter"]:
            raise SettingError(
                "starters",
                f": “{question[:40]}…” is {len(question)} characters long (at most {LIMITS['starter']})",
            )
    return questions


def _decoded(key: str, raw: str) -> Any:
    if key == "starters":
        return _starters(raw) if raw else ()
    return validated({key: raw})[key]


def field_texts(owner: OwnerSettings) -> dict[str, str]:
    """Each setting as a text field shows it (the starters one per line)."""
    return {k: "\n".join(v) if isinstance(v := getattr(owner, k), tuple) else v for k in KEYS}


def edited(typed: Mapping[str, str], filled: Mapping[str, str]) -> dict[str, str]:
    """The fields the owner changed from what they were filled with (outer spaces aside). Only these are
    saved: comparing with what is stored now would write a field another process saved meanwhile back
    with the old value the page still shows."""
    return {k: v for k, v in typed.items() if v.strip() != filled.get(k, "").strip()}


def reloaded(
    typed: Mapping[str, str], filled: Mapping[str, str], stored: Mapping[str, str]
) -> dict[str, str]:
    """The fields left as filled whose stored value changed since (another process saved them): each
    one's new text, to show instead. A field the owner edited keeps the owner's text."""
    return {
        k: stored[k]
        for k, v in typed.items()
        if k in stored and v.strip() == filled.get(k, "").strip() and stored[k].strip() != v.strip()
    }


def load_owner(store: Store) -> OwnerSettings:
    """The saved owner settings (read once per settings-table version; see core/store/settings.py)."""
    return OwnerSettings.from_saved(store.saved_settings())


def save_owner(store: Store, changes: Mapping[str, Any]) -> OwnerSettings:
    """Check and store `changes` in one commit (the other fields are kept); returns what is saved now."""
    store.save_settings(validated(changes))
    return load_owner(store)


def cleared_note(keys: Sequence[str]) -> str:
    """What clearing `keys` did, naming them as the Settings page labels them: "Cleared Author's name
    (back to the default)." ("defaults" for several; the environment's value is the default where it has
    one, see the module's docstring); "" when none was cleared."""
    labels = [LABELS[key] for key in keys]
    if not labels:
        return ""
    names = labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]
    return f"Cleared {names} (back to the default{'s' if len(labels) > 1 else ''})."


def cleared_keys(changes: Iterable[str], saved: OwnerSettings) -> list[str]:
    """The keys among `changes` that `saved` (what save_owner returned) holds no value for: cleared."""
    return [key for key in changes if not getattr(saved, key)]


def apply_owner(settings: Settings, owner: OwnerSettings, keep: Mapping[str, Any] | None = None) -> Settings:
    """`settings` with the owner's saved author name, description, persona prompt and decline text
    (those set), except the fields in `keep` (a CLI flag's, for one call)."""
    values = {k: getattr(owner, k) for k in APPLIED if getattr(owner, k) and k not in (keep or {})}
    return settings.replace(**values) if values else settings


def with_owner(settings: Settings, store: Store) -> Settings:
    """The settings every answer is made with: `settings` with what the owner saved in `store`."""
    return apply_owner(settings, load_owner(store))
