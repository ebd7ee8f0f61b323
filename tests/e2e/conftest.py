"""What the end-to-end tests share: the browser check and one headless Chromium per module.

A module marked `browser` is checked first: without Chromium or Playwright it fails under CI and skips
elsewhere, before anything is ingested or started. Each module starts its own `streamlit run` (its
settings differ) with tests/e2e_support.py's `streamlit_server`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e_support import chromium_path, launch_chromium, missing_browser


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test here is slow: each module starts `streamlit run` (15-50 s a test on 2 shared cores)."""
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="module", autouse=True)
def browser_available(request: pytest.FixtureRequest) -> None:
    """In a module marked `browser`: Chromium and Playwright are there, or the module fails (CI) or skips."""
    if request.node.get_closest_marker("browser") is None:
        return
    chromium_path()
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing_browser("Playwright for Python is not installed (pip install -r requirements-dev.txt)")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's headless Chromium through Playwright, one for the module (closed after it)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = launch_chromium(playwright)
        try:
            yield chromium
        finally:
            chromium.close()
