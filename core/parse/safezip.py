"""Zip archives read in memory, refusing what a real export never holds: path escapes, links, encrypted
members, too many members, too much uncompressed data, zip bombs (core/parse/archives.py, word.py).

Nothing is ever extracted to disk; members are read by name into bytes, each read capped at the size its
header declares (zipfile stops there and checks the CRC, so a lying header cannot inflate past it).
"""

from __future__ import annotations

import io
import stat
import zipfile
from dataclasses import dataclass
from pathlib import PurePosixPath

from core.parse.fields import BadInput

MAX_MEMBERS = 20_000
MAX_TOTAL_BYTES = 500 * 1024 * 1024  # uncompressed, all members together
MAX_RATIO = 200  # uncompressed / compressed; text compresses 3-20×, a bomb thousands of times
_RATIO_FLOOR = 1024 * 1024  # members below this are never a bomb, whatever their ratio


@dataclass(frozen=True)
class ZipLimits:
    members: int = MAX_MEMBERS
    total_bytes: int = MAX_TOTAL_BYTES
    ratio: float = MAX_RATIO


class SafeZip:
    """A checked archive: `names` (files only, in archive order) and `read(name)`."""

    def __init__(self, data: bytes, limits: ZipLimits | None = None) -> None:
        limits = limits or ZipLimits()
        try:
            self._zip = zipfile.ZipFile(io.BytesIO(data))
            infos = self._zip.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
            raise BadInput(f"is not a readable zip archive ({_short(exc)}): corrupt or truncated") from None
        if len(infos) > limits.members:
            raise BadInput(f"is a zip of {len(infos):,} members, over the {limits.members:,} limit; refused")
        total = 0
        self._infos: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            _check_member(info, limits)
            total += info.file_size
            if total > limits.total_bytes:
                raise BadInput(
                    f"is a zip bomb or too large: over {_size(limits.total_bytes)} uncompressed; refused"
                )
            if not info.is_dir():
                self._infos[info.filename] = info
        compressed = max(1, sum(i.compress_size for i in infos))
        if total > _RATIO_FLOOR and total / compressed > limits.ratio:
            raise BadInput(
                f"is a zip bomb: it expands {total / compressed:,.0f}× (limit {limits.ratio:g}×); refused"
            )

    @property
    def names(self) -> list[str]:
        return list(self._infos)

    def read(self, name: str) -> bytes:
        """The member's bytes; BadInput when its data is damaged."""
        info = self._infos[name]
        try:
            with self._zip.open(info) as member:
                data = member.read(info.file_size + 1)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, RuntimeError) as exc:
            raise BadInput(f"member {name} cannot be read ({_short(exc)}): corrupt archive") from None
        if len(data) > info.file_size:
            raise BadInput(f"member {name} is larger than its header says: crafted archive; refused")
        return data


def _check_member(info: zipfile.ZipInfo, limits: ZipLimits) -> None:
    name = info.filename
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or (path.parts and ":" in path.parts[0]):
        raise BadInput(f"has a member whose path leaves the archive ({name!r}): crafted archive; refused")
    if stat.S_ISLNK(info.external_attr >> 16):
        raise BadInput(f"has a symbolic link member ({name!r}); refused")
    if info.flag_bits & 0x1:
        raise BadInput(f"has an encrypted member ({name!r}); export it again without a password")
    if info.file_size > _RATIO_FLOOR and info.file_size / max(1, info.compress_size) > limits.ratio:
        ratio = info.file_size / max(1, info.compress_size)
        raise BadInput(
            f"is a zip bomb: member {name!r} expands {ratio:,.0f}× (limit {limits.ratio:g}×); refused"
        )


def _size(limit: int) -> str:
    return f"{limit / 2**20:g} MB" if limit >= 2**20 else f"{limit:,} bytes"


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:120]
