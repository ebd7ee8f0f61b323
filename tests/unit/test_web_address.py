"""`check_url`: an address `inkwell ingest` cannot fetch is named with what is wrong with it."""

from __future__ import annotations

import pytest

from core.ingest.web.fetch import check_url


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("https://", "https://: no host name in the address"),
        ("ftp://blog.example/feed.xml", "ftp://blog.example/feed.xml: not an http(s) address"),
        ("http://[::1", "http://[::1: not a valid web address (Invalid IPv6 URL)"),
        ("http://127.0.0.1:99999/", "http://127.0.0.1:99999/: not a valid web address (Port out of range"),
    ],
)
def test_a_bad_address_is_named_with_its_fault(url, message):
    with pytest.raises(ValueError) as raised:
        check_url(url)
    assert str(raised.value).startswith(message)


def test_a_good_address_is_kept_stripped():
    assert check_url("  https://blog.example:8443/feed.xml ") == "https://blog.example:8443/feed.xml"
