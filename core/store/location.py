"""Where the tables live: a local folder or object storage (S3, GCS, Azure), and how to connect to it.

A data directory such as `s3://bucket/prefix` is handed to LanceDB as is; LanceDB (lance's object store)
reads credentials the usual way, from the environment: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
AWS_SESSION_TOKEN / AWS_PROFILE, GOOGLE_APPLICATION_CREDENTIALS / GOOGLE_SERVICE_ACCOUNT,
AZURE_STORAGE_ACCOUNT_NAME / AZURE_STORAGE_ACCOUNT_KEY, and instance or workload identities. Inkwell
only adds what is not a secret: the S3 endpoint and region (AWS_ENDPOINT_URL[_S3], AWS_REGION /
AWS_DEFAULT_REGION), plain HTTP for an `http://` endpoint (MinIO, a loopback test server), and any
further LanceDB storage option given as a JSON object in INKWELL_STORAGE_OPTIONS. Nothing here is
printed or logged; `describe()` shows the URI only.

Commits on S3 are safe with many writers: lance writes each new table version's manifest with a
conditional PUT (`If-None-Match: *`, put-if-absent), so two writers cannot both create version N; the
loser rebases or retries (core/store/commit.py). GCS and Azure have native put-if-absent. For an
S3-compatible store without conditional writes, lance's DynamoDB commit store is used by naming the
data directory `s3+ddb://bucket/prefix?ddbTableName=<table>`: a DynamoDB table with hash key
`base_uri` (string) and range key `version` (number), reached at AWS_ENDPOINT_URL_DYNAMODB /
DYNAMODB_ENDPOINT / AWS_ENDPOINT_URL when not AWS's own.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import lancedb

from core.config import ConfigError, DataUri, as_data_dir
from core.store.schema import StoreError

ENV_STORAGE_OPTIONS = "INKWELL_STORAGE_OPTIONS"


def storage_options(data_dir: str | Path, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """LanceDB storage options for a data directory: {} for a local folder."""
    where = as_data_dir(data_dir)
    if not isinstance(where, DataUri):
        return {}
    env = os.environ if environ is None else environ
    options: dict[str, str] = {}
    if where.scheme.startswith("s3"):
        endpoint = env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL") or env.get("AWS_ENDPOINT")
        if endpoint:
            options["aws_endpoint"] = endpoint
            if endpoint.lower().startswith("http://"):
                options["allow_http"] = "true"
        if where.scheme == "s3+ddb":  # the commit table's endpoint, by the AWS SDKs' naming
            ddb = (
                env.get("AWS_ENDPOINT_URL_DYNAMODB")
                or env.get("DYNAMODB_ENDPOINT")
                or env.get("AWS_ENDPOINT_URL")
            )
            if ddb:
                options["dynamodb_endpoint"] = ddb
        region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
        if region:
            options["aws_region"] = region
    extra = env.get(ENV_STORAGE_OPTIONS)
    if extra:
        try:
            parsed = json.loads(extra)
        except json.JSONDecodeError:
            parsed = None
        if not isinstance(parsed, dict):
            # The value may hold a secret: say what is wrong, never echo it.
            raise ConfigError(f"{ENV_STORAGE_OPTIONS} must be a JSON object of LanceDB storage options")
        options.update({str(k): str(v) for k, v in parsed.items()})
    return options


def connect(data_dir: str | Path, read_consistency_seconds: float = 0.0) -> Any:
    """A LanceDB connection to the data directory (created when local). Reads through a long-lived
    table handle see other writers' commits within `read_consistency_seconds` (0: at every read)."""
    where = as_data_dir(data_dir)
    if isinstance(where, Path):
        _check_not_a_file(where)
        try:
            where.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the data directory {where}: {exc}") from exc
    interval = timedelta(seconds=max(0.0, read_consistency_seconds))
    try:
        return lancedb.connect(
            str(where) if isinstance(where, DataUri) else where,
            read_consistency_interval=interval,
            storage_options=storage_options(where) or None,
        )
    except (OSError, ValueError, RuntimeError) as exc:
        raise StoreError(f"cannot open the data directory {describe(where)}: {exc}") from exc


def _check_not_a_file(where: Path) -> None:
    """StoreError naming the path when the data directory, or a folder it would be made in, is a file:
    mkdir's own "[Errno 17] File exists" (or "Not a directory") does not say which path is wrong."""
    for path in (where, *where.parents):
        if path.is_file():
            whose = "the data directory" if path == where else f"the data directory {where}: its folder"
            raise StoreError(f"{whose} {path} is a file, not a folder")
        if path.is_dir():
            return


def describe(data_dir: str | Path) -> str:
    """The data directory as shown to people: the URI (no query string: it may name a commit table)
    or the absolute local path."""
    where = as_data_dir(data_dir)
    if isinstance(where, DataUri):
        return where.split("?", 1)[0]
    return str(where.resolve())


def is_remote(data_dir: str | Path) -> bool:
    return isinstance(as_data_dir(data_dir), DataUri)
