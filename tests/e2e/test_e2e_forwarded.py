"""The owner-password lockout is counted per client, not per X-Forwarded-For (issue #31, part 2).

A real `streamlit run` on 127.0.0.1 and real WebSocket sessions (tests/streamlit_client.py) that send
the headers a browser cannot be made to send. Streamlit's server (uvicorn) trusts loopback's proxy
headers by default, so before the fix every new X-Forwarded-For value from this machine started a fresh
count. Now the header is believed only from INKWELL_TRUSTED_PROXIES (core/serve/clients.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e_support import AppServer, app_environ, streamlit_server
from tests.streamlit_client import StreamlitSession

PASSWORD = "correct horse battery staple"
FIRST = "Wrong password (2 tries before a pause)."
LOCKED = "Wrong password. Try again in 2 s."
REFUSED = "Too many wrong passwords: try again in"


def guess(server: AppServer, forwarded_for: str) -> str:
    """One wrong password on the Ingest page, from a new session sending this X-Forwarded-For."""
    with StreamlitSession(server.url, {"X-Forwarded-For": forwarded_for}) as session:
        session.run().open("posts")
        session.run({session.widget("Admin password"): "a guess", session.widget("Unlock"): True})
        errors = session.errors()
    assert len(errors) == 1, errors
    return errors[0]


@pytest.fixture
def serve(tmp_path: Path):
    def start(**settings: str):
        env = app_environ(INKWELL_DATA_DIR=str(tmp_path / "db"), INKWELL_ADMIN_PASSWORD=PASSWORD, **settings)
        return streamlit_server(tmp_path / "streamlit", env)

    return start


def test_varying_x_forwarded_for_from_an_untrusted_peer_is_one_client(serve):
    with serve() as server:
        results = [guess(server, f"203.0.113.{n}") for n in range(1, 5)]
        assert results[:3] == [FIRST, "Wrong password (1 try before a pause).", LOCKED]
        assert results[3].startswith(REFUSED), results
        assert "Traceback" not in server.log.read_text(errors="replace"), server.log_tail()


def test_behind_a_trusted_proxy_the_client_it_names_is_counted(serve):
    with serve(INKWELL_TRUSTED_PROXIES="127.0.0.1") as server:
        # The proxy appends the client's address; what the client wrote before it does not count.
        results = [guess(server, f"10.9.9.{n}, 198.51.100.7") for n in range(1, 4)]
        assert results[2] == LOCKED, results
        assert guess(server, "198.51.100.8") == FIRST  # another client behind the proxy: its own count
