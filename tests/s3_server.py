"""An S3-compatible server on 127.0.0.1 for the object-storage tests: moto in server mode, in its own process.

Run as `python tests/s3_server.py PORT`; `S3Server` starts it on a free port, waits until it answers,
creates the bucket and stops it at the end.

Why a wrapper around moto's app: moto checks a conditional PUT (`If-None-Match: *`, which lance uses to
commit a table version) and then stores the object in two steps, so two concurrent PUTs of the same key
could both pass the check; real S3 decides them atomically. Writes (PUT/POST/DELETE) are therefore served
one at a time here, which makes put-if-absent atomic as on S3, while reads stay concurrent. The wrapper
also counts requests by method and PUTs of table-version manifests with and without the condition
(GET /_inkwell/stats), so a test can show which commit protocol lance used and a bench what a search costs.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

HOST = "127.0.0.1"
BUCKET = "inkwell-test"
STATS_PATH = "/_inkwell/stats"
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "inkwell-key-id",
    "AWS_SECRET_ACCESS_KEY": "s3cr3t-never-shown",
    "AWS_REGION": "us-east-1",
}


class SerialWrites:
    """WSGI middleware: one write at a time (atomic put-if-absent), and manifest-PUT counts."""

    def __init__(self, app: Callable[..., Iterable[bytes]]):
        self.app = app
        self.lock = threading.Lock()
        self.stats: Counter[str] = Counter()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path == STATS_PATH:
            body = json.dumps(dict(self.stats)).encode()
            start_response(
                "200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
            )
            return [body]
        method = environ.get("REQUEST_METHOD", "GET")
        self.stats[f"requests_{method}"] += 1
        if method not in ("PUT", "POST", "DELETE"):
            return self.app(environ, start_response)
        if method == "PUT" and "/_versions/" in path and path.endswith(".manifest"):
            key = "conditional" if environ.get("HTTP_IF_NONE_MATCH") == "*" else "unconditional"
            self.stats[f"manifest_puts_{key}"] += 1
        with self.lock:
            statuses: list[str] = []

            def recording(status: str, headers: list, exc_info: Any = None) -> Any:
                statuses.append(status)
                return start_response(status, headers, exc_info)

            body = list(self.app(environ, recording))  # consumed inside the lock: the write is complete
        if statuses and statuses[0].startswith("412") and "/_versions/" in path:
            self.stats["manifest_puts_refused"] += 1
        return body


def serve(port: int) -> None:
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import make_server

    app = SerialWrites(DomainDispatcherApplication(create_backend_app))
    server = make_server(HOST, port, app, threaded=True, request_handler=MotoRequestHandler)
    print("ready", flush=True)
    server.serve_forever()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


class S3Server:
    """The server process and the environment that points AWS clients (and lance) at it."""

    def __init__(self) -> None:
        self.port = free_port()
        self.endpoint = f"http://{HOST}:{self.port}"
        self.proc: subprocess.Popen | None = None

    @property
    def env(self) -> dict[str, str]:
        return {**CREDENTIALS, "AWS_ENDPOINT_URL": self.endpoint}

    def uri(self, prefix: str) -> str:
        return f"s3://{BUCKET}/{prefix}"

    def ddb_uri(self, prefix: str, table: str = "lance-commits") -> str:
        """The same bucket with lance's DynamoDB commit store (the table is made on first use)."""
        import boto3

        client = boto3.client("dynamodb", endpoint_url=self.endpoint, **_boto_credentials())
        if table not in client.list_tables()["TableNames"]:
            client.create_table(
                TableName=table,
                KeySchema=[
                    {"AttributeName": "base_uri", "KeyType": "HASH"},
                    {"AttributeName": "version", "KeyType": "RANGE"},
                ],
                AttributeDefinitions=[
                    {"AttributeName": "base_uri", "AttributeType": "S"},
                    {"AttributeName": "version", "AttributeType": "N"},
                ],
                BillingMode="PAY_PER_REQUEST",
            )
        return f"s3+ddb://{BUCKET}/{prefix}?ddbTableName={table}"

    def commits_recorded(self, table: str = "lance-commits") -> int:
        """Table versions committed through the DynamoDB commit store."""
        import boto3

        client = boto3.client("dynamodb", endpoint_url=self.endpoint, **_boto_credentials())
        return int(client.scan(TableName=table, Select="COUNT")["Count"])

    def stats(self) -> dict[str, int]:
        import urllib.request

        with urllib.request.urlopen(self.endpoint + STATS_PATH, timeout=10) as response:
            return json.loads(response.read())

    def __enter__(self) -> S3Server:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, __file__, str(self.port)], env=env, stdout=subprocess.PIPE, text=True
        )
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        if line.strip() != "ready":
            self.__exit__()
            raise RuntimeError(f"the S3 test server did not start: {line!r}")
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection((HOST, self.port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        import boto3

        boto3.client("s3", endpoint_url=self.endpoint, **_boto_credentials()).create_bucket(Bucket=BUCKET)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            if self.proc.stdout:
                self.proc.stdout.close()


def _boto_credentials() -> dict[str, str]:
    return {
        "aws_access_key_id": CREDENTIALS["AWS_ACCESS_KEY_ID"],
        "aws_secret_access_key": CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        "region_name": CREDENTIALS["AWS_REGION"],
    }


if __name__ == "__main__":
    import logging

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no access log per request
    serve(int(sys.argv[1]))
