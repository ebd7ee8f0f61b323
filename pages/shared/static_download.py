"""The Ingest page's "Static site" expander: **Build static site** writes `inkwell export --static` into a
temporary folder (core/publish), zips it and offers it as inkwell-static.zip with its size; what
core/publish refuses (a table it cannot serve, no posts, the browser runtime not installed) is shown as
its own message; with the zip, the tag of the static widget for the blog's template. The zip stays in
the session until the next build, so a download does not rebuild."""

from __future__ import annotations

import streamlit as st

from core.config import Settings
from core.publish import ZIP_NAME, ModelExportError, StaticExportError, static_zip
from pages.shared.state import KNOWN_ERRORS
from pages.shared.text import md_escape, plural

BUILT = "static_zip"  # session state: (zip bytes, what was built, the static widget's tag)
REFUSED = "static_refused"  # session state: the last build's refusal


def static_site_section(settings: Settings) -> None:
    """The build button, then the last build's download button (or why it was refused)."""
    st.caption(
        "A folder any static host serves (GitHub Pages, Netlify, `python -m http.server`) whose page "
        "answers readers in their browser with your own sentences, with no Inkwell running. Unzip it "
        "and upload the files. Details: docs/static.md."
    )
    if st.button("Build static site", key="static_build"):
        _build(settings)
    refused = st.session_state.get(REFUSED)
    built = st.session_state.get(BUILT)
    if refused:
        st.error(refused)
    elif built:
        data, note, tag = built
        st.caption(md_escape(note))
        st.caption(
            "On your blog, the widget answers from the same folder with no server: serve it at /ask/ "
            "(or change the path) and paste this tag into the template."
        )
        st.code(tag, language="html")
        st.download_button(
            f"Download {ZIP_NAME} ({_megabytes(len(data))})",
            data,
            file_name=ZIP_NAME,
            mime="application/zip",
            key="static_download",
        )


def _build(settings: Settings) -> None:
    st.session_state.pop(BUILT, None)
    st.session_state.pop(REFUSED, None)
    spinner = (
        "Building the static site: the posts' vectors, the question model (exported to ONNX the first "
        "time, about a minute; cached after) and the browser runtime…"
    )
    with st.spinner(spinner):
        try:
            data, report = static_zip(settings)
        except (StaticExportError, ModelExportError) as exc:
            st.session_state[REFUSED] = f"Not built: {md_escape(exc)}"
            return
        except (*KNOWN_ERRORS, OSError) as exc:  # the table or the temporary folder failed
            st.session_state[REFUSED] = f"Could not build the static site: {md_escape(exc)}"
            return
    st.session_state[BUILT] = (
        data,
        f"Built from {plural(report.chunks, 'chunk')} in {report.seconds:.0f} s: {len(report.sizes)} files, "
        f"{_megabytes(report.total_bytes)} unpacked, {_megabytes(len(data))} zipped.",
        report.widget_tag,
    )


def _megabytes(size: int) -> str:
    return f"{size / 1e6:.1f} MB"
