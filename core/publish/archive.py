"""The static site as one zip file (what the Ingest page offers for download): the folder
`export_static` writes, built in a temporary folder and packed with deflate, its files at the zip's root
so the unpacked folder is the site.

    data, report = static_zip(settings)
"""

from __future__ import annotations

import io
import tempfile
import zipfile
from pathlib import Path

from core.config import Settings
from core.publish.site import StaticReport, export_static

ZIP_NAME = "inkwell-static.zip"


def zip_folder(folder: Path) -> bytes:
    """Every file under `folder` (in path order, by its path inside it), deflated."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            archive.write(path, path.relative_to(folder).as_posix())
    return buffer.getvalue()


def static_zip(settings: Settings) -> tuple[bytes, StaticReport]:
    """The static site for the stored posts, zipped, and the export's report (its `path` is gone by
    the time this returns). Raises what `export_static` raises (StaticExportError, ModelExportError)."""
    with tempfile.TemporaryDirectory(prefix="inkwell-static-") as folder:
        report = export_static(settings, Path(folder) / "site")
        return zip_folder(report.path), report
