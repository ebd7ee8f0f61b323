"""Which client a connection comes from, for the counts kept per client (wrong owner passwords).

The socket peer is the client, unless the owner named it as a trusted proxy (setting `trusted_proxies`,
env INKWELL_TRUSTED_PROXIES; empty by default: no proxy header is believed). Behind trusted proxies the
client is the right-most X-Forwarded-For entry that is not itself a trusted proxy: each proxy appends
the address it was connected from, so entries left of that one are whatever the client chose to send.

    peer = server_peer(st.context.ip_address, forwarded)   # undo uvicorn's own header handling
    key = client_address(peer, forwarded, settings.trusted_proxy_networks)
    key = request_client(seen, header_values, trusted)     # the two steps, from the raw headers

The chat (pages/shared/state.py) and the HTTP API (core/serve/api.py) both decide this way.

Addresses come back in one spelling (`ipaddress`'s), loopback as None (Streamlit's "this machine").
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterable, Mapping, Sequence
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network

Network = IPv4Network | IPv6Network
Address = IPv4Address | IPv6Address

LOOPBACK = (ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1"))


def forwarded_hops(headers: Iterable[str]) -> list[str]:
    """The entries of X-Forwarded-For header values, in order (several headers count as one list),
    each without its port or IPv6 brackets; empty entries dropped."""
    hops = (_host(part.strip()) for value in headers for part in value.split(","))
    return [hop for hop in hops if hop]


def _host(entry: str) -> str:
    """`entry` without a port: "[::1]:80" → "::1", "1.2.3.4:80" → "1.2.3.4"; other text as it is."""
    if entry.startswith("["):
        end = entry.find("]")
        return entry[1:end] if end > 0 else entry
    if entry.count(":") == 1:
        return entry.split(":", 1)[0]
    return entry


def _address(text: str | None) -> Address | None:
    """The IP address `text` spells, loopback for None (Streamlit's value for this machine), else None."""
    if text is None:
        return LOOPBACK[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _canonical(text: str | None) -> str | None:
    """One spelling per address (IPv4-mapped IPv6 as IPv4), None for loopback; non-addresses as sent."""
    address = _address(text)
    if address is None:
        return text
    if isinstance(address, IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return None if address.is_loopback else str(address)


def is_trusted(text: str | None, trusted: Sequence[Network]) -> bool:
    """Whether `text` (an address; None: this machine) is in one of the `trusted` networks."""
    address = _address(text)
    if address is None:
        return False
    if isinstance(address, IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address.is_loopback:  # 127.0.0.1 and ::1 are the same machine: either one trusts both
        return any(loop in net for net in trusted for loop in LOOPBACK if loop.version == net.version)
    return any(address.version == net.version and address in net for net in trusted)


def client_address(peer: str | None, forwarded_for: Sequence[str], trusted: Sequence[Network]) -> str | None:
    """The client: `peer` (the socket's address; None: this machine) unless it is a trusted proxy, then
    the right-most `forwarded_for` hop (forwarded_hops) that is not a trusted proxy, or the left-most
    hop when all are. A trusted peer that sent no header is the client itself."""
    if not is_trusted(peer, trusted):
        return _canonical(peer)
    hops = list(forwarded_for)
    for hop in reversed(hops):
        if not is_trusted(hop, trusted):
            return _canonical(hop)
    return _canonical(hops[0]) if hops else _canonical(peer)


def server_peer(
    seen: str | None, forwarded_for: Sequence[str], environ: Mapping[str, str] | None = None
) -> str | None:
    """The socket peer, from the address Streamlit reports (`st.context.ip_address`; None: loopback).

    `streamlit run` serves with uvicorn, whose proxy-header middleware replaces the peer with an
    X-Forwarded-For entry when the peer is one of FORWARDED_ALLOW_IPS (by default 127.0.0.1 and ::1): any
    local process or loopback proxy could then name itself anything. With that default, when the header
    is there and `seen` is the entry uvicorn would have picked, the peer was loopback and None is
    returned. (A remote peer whose own header ends in its own address reads as loopback too: one more
    key, never one of its choosing.) When FORWARDED_ALLOW_IPS is set, the owner chose uvicorn's proxies,
    and `seen` is taken as the peer.
    """
    env = os.environ if environ is None else environ
    if "FORWARDED_ALLOW_IPS" in env or not forwarded_for:
        return seen
    picked = _uvicorn_pick(forwarded_for)
    return None if _canonical(seen) == _canonical(picked) else seen


def request_client(
    seen: str | None,
    forwarded_headers: Iterable[str],
    trusted: Sequence[Network],
    environ: Mapping[str, str] | None = None,
) -> str | None:
    """The client of a request that uvicorn served: `seen` is the peer it reports (the chat's
    `st.context.ip_address`, the API's `request.client.host`), `forwarded_headers` the X-Forwarded-For
    values. See server_peer and client_address."""
    hops = forwarded_hops(forwarded_headers)
    return client_address(server_peer(seen, hops, environ), hops, trusted)


def _uvicorn_pick(hops: Sequence[str]) -> str:
    """The entry uvicorn's ProxyHeadersMiddleware takes with loopback trusted: the right-most hop that is
    not a loopback address, else the first."""
    for hop in reversed(hops):
        address = _address(hop)
        if address is None or address not in LOOPBACK:
            return hop
    return hops[0]
