"""The static site: the posts, their vectors and the question model exported for a page that answers
readers in the browser alone (site: the folder; bundle: the index; model: the ONNX question embedder;
archive: the folder as one zip)."""

from __future__ import annotations

from core.publish.archive import ZIP_NAME, static_zip
from core.publish.model import ModelExportError
from core.publish.site import SUPPORTED_MODEL, StaticExportError, StaticReport, export_static

__all__ = [
    "SUPPORTED_MODEL",
    "ZIP_NAME",
    "ModelExportError",
    "StaticExportError",
    "StaticReport",
    "export_static",
    "static_zip",
]
