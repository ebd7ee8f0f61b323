"""The owner's saved settings (persona, decline text, the chat's title, greeting and starter questions):
a fourth table, `settings`, of key/value rows beside `chunks`, `posts` and `changes`.

Why a table and not a file: it lives with the tables, so replicas on object storage share it, and each
save is one LanceDB commit (a merge on the key), which lance commits with put-if-absent on S3: two
processes saving at once both land (the later commit rebases on the earlier one; a conflict lance does
not rebase is retried whole by `retry_commit`), and for the same key the later save wins. Readers see a
save through the store's table handles, so within `read_consistency_seconds` (core/config.py). The rows
are read once per table version (`per_version`), so a page run or CLI call that finds no new version
reads no rows.

Values are strings (the caller encodes lists as JSON); an empty string means "not set" (the default or
the environment applies), which is how a saved value is cleared.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from core.store.commit import retry_commit
from core.store.reads import per_version, scan

SETTINGS = "settings"
SETTINGS_SCHEMA = pa.schema(
    [
        pa.field("key", pa.string(), nullable=False),
        pa.field("value", pa.string()),
        pa.field("saved_at", pa.string()),  # ISO 8601, UTC
    ]
)


class SavedSettings:
    """Mixed into Store (core/store/tables.py), which provides `db`, `key` and `_open`."""

    db: Any
    key: str

    def _open(self, name: str) -> Any | None:  # pragma: no cover - Store's
        raise NotImplementedError

    def saved_settings(self) -> dict[str, str]:
        """Every saved key and its value ("" included: a cleared value), as of the table's version."""
        table = self._open(SETTINGS)
        if table is None:
            return {}
        return dict(per_version(self.key, "settings", table, _read_settings))

    def settings_version(self) -> int | None:
        """The settings table's version (None: nothing was ever saved); a new save gives a new version."""
        table = self._open(SETTINGS)
        return None if table is None else int(table.version)

    def save_settings(self, values: Mapping[str, str]) -> None:
        """Store these keys' values in one commit (other keys are kept), retried on commit conflicts."""
        if not values:
            return
        stamp = datetime.now(UTC).isoformat(timespec="microseconds")
        rows = [{"key": str(k), "value": str(v), "saved_at": stamp} for k, v in values.items()]
        data = pa.Table.from_pylist(rows, schema=SETTINGS_SCHEMA)

        def merge() -> None:
            table = self._settings_table()
            table.merge_insert("key").when_matched_update_all().when_not_matched_insert_all().execute(data)

        retry_commit("save the settings", merge)

    def _settings_table(self) -> Any:
        table = self._open(SETTINGS)
        if table is None:
            table = retry_commit("create the settings table", self._create_settings)
        return table

    def _create_settings(self) -> Any:
        table = self.db.create_table(SETTINGS, schema=SETTINGS_SCHEMA, exist_ok=True)
        # As for chunks: with a primary key, two first saves of one key do not store it twice.
        table.set_unenforced_primary_key("key")
        return table


def _read_settings(table: Any) -> dict[str, str]:
    return {row["key"]: row["value"] or "" for row in scan(table, ["key", "value"]).to_pylist()}
