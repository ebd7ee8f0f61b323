"""What the owner pastes into the blog to put the widget on it (the Ingest page's Share section):

    widget_tag(app_origin(st.context.url) or PLACEHOLDER_ORIGIN, owner.title(settings))
    # <script src="https://inkwell.example/widget.js" defer data-title="Ask Mara"></script>

Plain logic, no Streamlit: the page (pages/shared/share.py) draws it.
"""

from __future__ import annotations

import html
from urllib.parse import urlsplit

# Shown when the app's address is unknown (no browser session): the owner replaces it.
PLACEHOLDER_ORIGIN = "https://inkwell.example"


def app_origin(url: str | None) -> str | None:
    """The scheme, host and port of `url` (the address the owner opened the app at; the widget's script
    and the API are served at its root), or None for no URL or one that is not http(s)."""
    if not url:
        return None
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc}"


def widget_tag(origin: str, title: str) -> str:
    """The one `<script>` tag that puts the widget on a page, titled `title`; both are attribute-escaped
    (a title's quote or `<` must not end the attribute or open a tag in the blog's template)."""
    src = html.escape(f"{origin.rstrip('/')}/widget.js", quote=True)
    return f'<script src="{src}" defer data-title="{html.escape(title, quote=True)}"></script>'
