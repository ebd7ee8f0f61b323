"""Which client a connection comes from (core/serve/clients.py, issue #31): X-Forwarded-For is believed
only from the owner's trusted proxies, and uvicorn's own loopback trust is undone."""

from __future__ import annotations

import pytest

from core.config import ConfigError, Settings
from core.serve.clients import client_address, forwarded_hops, request_client, server_peer


def networks(text: str):
    return Settings.load({"trusted_proxies": text}, environ={}).trusted_proxy_networks


def test_a_spoofed_header_from_an_untrusted_peer_is_ignored():
    for spoof in (["1.2.3.4"], ["10.0.0.1, 198.51.100.7"], []):
        assert client_address("203.0.113.9", spoof, ()) == "203.0.113.9"
        assert client_address("203.0.113.9", spoof, networks("10.0.0.0/8")) == "203.0.113.9"
    assert client_address(None, ["1.2.3.4"], ()) is None  # this machine, whatever it claims


def test_a_trusted_proxy_chain_names_the_client():
    trusted = networks("10.0.0.0/8, 192.0.2.1")
    # client → 192.0.2.1 → 10.1.1.1 → app; what the client wrote itself (left) does not count.
    hops = forwarded_hops(["6.6.6.6, 198.51.100.7", "192.0.2.1"])
    assert hops == ["6.6.6.6", "198.51.100.7", "192.0.2.1"]
    assert client_address("10.1.1.1", hops, trusted) == "198.51.100.7"
    ported = forwarded_hops(["6.6.6.6, 198.51.100.7:5000, [::ffff:192.0.2.1]:80"])
    assert client_address("10.1.1.1", ported, trusted) == "198.51.100.7"
    assert client_address("10.1.1.1", [], trusted) == "10.1.1.1"  # no header: the proxy's own request
    assert client_address("10.1.1.1", ["10.2.2.2", "192.0.2.1"], trusted) == "10.2.2.2"  # all trusted
    # A proxy on this machine: either loopback spelling trusts both (Streamlit reports loopback as None).
    assert client_address(None, ["198.51.100.7"], networks("127.0.0.1")) == "198.51.100.7"
    assert client_address(None, ["2001:db8::1"], networks("::1")) == "2001:db8::1"
    assert client_address(None, ["2001:DB8:0::1"], networks("::1")) == "2001:db8::1"  # one spelling


def test_a_bad_entry_in_the_setting_is_a_clear_config_error():
    with pytest.raises(
        ConfigError, match=r"trusted_proxies takes IP addresses or CIDR networks .*'10\.0\.0\.0/33'"
    ):
        networks("127.0.0.1, 10.0.0.0/33")
    with pytest.raises(ConfigError, match=r"'proxy\.example'"):
        Settings.load(environ={"INKWELL_TRUSTED_PROXIES": "proxy.example"})
    assert networks("") == () and len(networks(" 10.0.0.0/8 ,, ::1 ")) == 2


def test_uvicorns_loopback_rewrite_is_undone():
    # Streamlit's server trusts loopback by default and reports the header's right-most non-loopback
    # entry as the peer: that peer was this machine, whatever the header says.
    for header in (["1.2.3.4"], ["9.9.9.9, 1.2.3.4"], ["1.2.3.4, 127.0.0.1"]):
        assert server_peer("1.2.3.4", forwarded_hops(header), environ={}) is None
    assert server_peer("203.0.113.9", ["1.2.3.4"], environ={}) == "203.0.113.9"  # not rewritten
    assert server_peer("203.0.113.9", [], environ={}) == "203.0.113.9"
    # With FORWARDED_ALLOW_IPS set, the owner chose uvicorn's proxies: its peer stands.
    assert server_peer("1.2.3.4", ["1.2.3.4"], environ={"FORWARDED_ALLOW_IPS": "10.0.0.1"}) == "1.2.3.4"
    # Varying headers from this machine are one client, with or without a trusted loopback proxy.
    for spoof in ("1.1.1.1", "2.2.2.2", "3.3.3.3, 4.4.4.4"):
        hops = forwarded_hops([spoof])
        seen = hops[-1]  # what uvicorn reports
        assert client_address(server_peer(seen, hops, environ={}), hops, ()) is None


def test_a_request_is_one_client_whatever_it_forwards_unless_its_proxy_is_trusted():
    # What the chat and the API both call: the peer uvicorn reports (already the header's entry) and
    # the raw header values.
    loopback = networks("127.0.0.1")
    for spoof in ("198.51.100.1", "198.51.100.2", "10.0.0.1, 198.51.100.3"):
        seen = forwarded_hops([spoof])[-1]
        assert request_client(seen, [spoof], (), environ={}) is None  # this machine: one client
        assert request_client(seen, [spoof], loopback, environ={}) == seen  # the proxy's client
    assert request_client("203.0.113.9", ["198.51.100.1"], (), environ={}) == "203.0.113.9"
    assert request_client("127.0.0.1", [], (), environ={}) is None
