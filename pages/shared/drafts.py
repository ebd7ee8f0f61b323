"""Form fields that outlive a page switch: Streamlit forgets a widget's value after a run that does not
draw it (another page was open), so a form's values are kept as a draft under a session key of its own
and put back into its widgets when the page is drawn again, until they are stored or cleared.

A form is named by `form` and its widgets by `fields` ({widget key: default value}); the widgets are
drawn with `key=` only (no `value`, `index`), their values coming from session state."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

DRAFT = "draft_{}"  # session state: the form's values not stored yet, {widget key: value}
STORED = "draft_{}_stored"  # session state: the values last stored, which are no draft


def restore_draft(form: str, fields: Mapping[str, Any]) -> None:
    """Before the widgets are drawn: each one Streamlit forgot gets its draft value, else its default."""
    draft = st.session_state.get(DRAFT.format(form)) or {}
    for key, default in fields.items():
        if key not in st.session_state:
            st.session_state[key] = draft.get(key, default)


def keep_draft(form: str, fields: Mapping[str, Any]) -> None:
    """After the widgets are drawn: their values are the draft, unless they are the defaults or were
    stored (`draft_stored`) and not changed since."""
    values = _values(fields)
    if values in (dict(fields), st.session_state.get(STORED.format(form))):
        st.session_state.pop(DRAFT.format(form), None)
    else:
        st.session_state[DRAFT.format(form)] = values


def draft_stored(form: str, fields: Mapping[str, Any]) -> None:
    """The widgets' values were stored: they stay on the page, but are no draft until they change."""
    st.session_state[STORED.format(form)] = _values(fields)
    st.session_state.pop(DRAFT.format(form), None)


def clear_draft(form: str, fields: Mapping[str, Any]) -> None:
    """Every widget back to its default and no draft (an `on_click`: it runs before the widgets)."""
    for key, default in fields.items():
        st.session_state[key] = default
    st.session_state.pop(DRAFT.format(form), None)


def _values(fields: Mapping[str, Any]) -> dict[str, Any]:
    return {key: st.session_state.get(key) for key in fields}
