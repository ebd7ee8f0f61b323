"""A minimal Streamlit client for tests: one browser session over the app's real WebSocket
(/_stcore/stream, Streamlit's protobuf messages), with the HTTP headers the test chooses (e.g.
X-Forwarded-For), which neither AppTest nor a browser context can set.

    with StreamlitSession(server.url, {"X-Forwarded-For": "1.2.3.4"}) as session:
        session.run()                                  # the home page
        session.open("posts")                          # a page by its url_path
        session.run({session.widget("Admin password"): "guess", session.widget("Unlock"): True})
        session.errors()                               # the st.error texts of the last run

It speaks just enough of the protocol to run pages and submit widgets: no Origin header (so no XSRF
token is needed), no cached messages.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.sync.client import ClientConnection, connect

RUN_TIMEOUT = 120.0  # s: a page's first run on a busy 2-core machine


class StreamlitSession:
    def __init__(self, url: str, headers: Mapping[str, str] | None = None) -> None:
        self.ws_url = url.replace("http://", "ws://", 1) + "/_stcore/stream"
        self.headers = dict(headers or {})
        self.connection: ClientConnection | None = None
        self.pages: dict[str, str] = {}  # url_path → page_script_hash
        self.page_hash = ""
        self.elements: list = []  # the last run's elements (protobuf Element)

    def __enter__(self) -> StreamlitSession:
        self.connection = connect(
            self.ws_url, subprotocols=["streamlit"], additional_headers=self.headers, max_size=None
        )
        return self

    def __exit__(self, *exc: object) -> None:
        if self.connection is not None:
            self.connection.close()

    def run(self, widgets: Mapping[str, str | bool] | None = None) -> StreamlitSession:
        """Run the current page with these widget values (text: str, a button or form submit: True) and
        collect its elements until the run ends."""
        assert self.connection is not None
        message = BackMsg()
        message.rerun_script.page_script_hash = self.page_hash
        for widget_id, value in (widgets or {}).items():
            state = message.rerun_script.widget_states.widgets.add()
            state.id = widget_id
            if isinstance(value, bool):
                state.trigger_value = value
            else:
                state.string_value = value
        self.connection.send(message.SerializeToString())
        self.elements = []
        deadline = time.monotonic() + RUN_TIMEOUT
        while True:
            data = self.connection.recv(timeout=max(0.1, deadline - time.monotonic()))
            forward = ForwardMsg()
            forward.ParseFromString(data)
            kind = forward.WhichOneof("type")
            if kind == "navigation":
                self.pages = {p.url_pathname: p.page_script_hash for p in forward.navigation.app_pages}
            elif kind == "delta" and forward.delta.WhichOneof("type") == "new_element":
                self.elements.append(forward.delta.new_element)
            elif kind == "script_finished":
                return self

    def open(self, url_path: str) -> StreamlitSession:
        """Go to a page of the app's navigation (as a click on its sidebar link does) and run it."""
        self.page_hash = self.pages[url_path]
        return self.run()

    def widget(self, label: str) -> str:
        """The id of the last run's widget with this label."""
        for element in self.elements:
            inner = getattr(element, element.WhichOneof("type"))
            if getattr(inner, "label", None) == label and getattr(inner, "id", ""):
                return inner.id
        raise LookupError(f"no widget labelled {label!r} in the last run")

    def errors(self) -> list[str]:
        return [
            e.alert.body
            for e in self.elements
            if e.WhichOneof("type") == "alert" and e.alert.format == Alert.ERROR
        ]
