"""The static site: the posts, their vectors and the question model exported for a page that answers
readers in the browser alone (site: the folder; bundle: the index; model: the ONNX question embedder)."""

from __future__ import annotations

from core.publish.model import ModelExportError
from core.publish.site import SUPPORTED_MODEL, StaticExportError, StaticReport, export_static

__all__ = ["SUPPORTED_MODEL", "ModelExportError", "StaticExportError", "StaticReport", "export_static"]
