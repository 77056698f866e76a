"""Text embeddings from a GGUF model the project already ships, for the reference-free
embedding-similarity baseline (cosine between context and response).

The model is the embedded judge's (SmolLM2-135M by default, found the same way), run by
llama.cpp in embedding mode; the vectors of its last layer are averaged over the tokens. It is not a
trained sentence encoder: the similarity it gives is a weak, cheap signal, which is exactly
what a baseline is for. Nothing is downloaded; vectors are cached per text within one embedder.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from convoscope.models import DEFAULT_EMBEDDED, INSTALL_HINT, ModelError, embedded_model_path
from convoscope.models._embedded import LLAMA_CPP_LOCK


class Embedder(Protocol):
    """Anything that turns texts into one vector each (rows of the returned matrix)."""

    @property
    def name(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class LlamaEmbedder:
    """Mean-pooled embeddings of a packaged GGUF model (``smollm2``, ``gemma3-270m``) or a
    ``.gguf`` path. Loads the model on first use; texts longer than ``max_tokens`` tokens keep
    their first ``max_tokens``. Identical texts are embedded once.

    Example: ``LlamaEmbedder().embed(["Hello there.", "Hi!"]).shape`` is ``(2, 576)``.
    """

    def __init__(self, model: str = DEFAULT_EMBEDDED, *, max_tokens: int = 512,
                 n_threads: int | None = None) -> None:
        self._model = model
        self._path = embedded_model_path(model)
        self._max_tokens = max_tokens
        self._n_threads = n_threads
        self._llama: Any = None
        self._cache: dict[str, np.ndarray] = {}

    @property
    def name(self) -> str:
        return f"embedded:{self._model}"

    def _load(self) -> Any:
        if self._llama is None:
            try:
                import llama_cpp
            except ImportError as error:
                raise ModelError(INSTALL_HINT) from error
            # No pooling_type: a chat model's GGUF leaves it unset, llama.cpp then returns one
            # vector per token and we average them (asking for mean pooling gives the same
            # vector, within float error, but makes llama.cpp print a warning on every load).
            self._llama = llama_cpp.Llama(
                model_path=str(self._path), embedding=True, n_ctx=self._max_tokens,
                n_batch=self._max_tokens, n_ubatch=self._max_tokens, n_threads=self._n_threads,
                seed=0, verbose=False)
        return self._llama

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text. An empty text has no tokens to pool and is an error."""
        for text in texts:
            if text not in self._cache:
                self._cache[text] = self._embed_one(text)
        if not texts:
            return np.empty((0, 0))
        return np.vstack([self._cache[text] for text in texts])

    def _embed_one(self, text: str) -> np.ndarray:
        if not text.strip():
            raise ValueError("embedding: cannot embed an empty text")
        with LLAMA_CPP_LOCK:  # llama.cpp redirects the process's stdout/stderr: one call at a time
            vectors = np.asarray(self._load().embed(text, normalize=False, truncate=True), dtype=np.float64)
        # One row per token (mean-pool them), or one pooled vector from a model that sets its own.
        return vectors.mean(axis=0) if vectors.ndim == 2 else vectors

    def close(self) -> None:
        """Free the model (it is loaded again if used afterwards)."""
        if self._llama is not None:
            with LLAMA_CPP_LOCK:
                self._llama.close()
            self._llama = None
