"""The models an evaluator scores with: sessions created on first use, their fingerprint, and the score cache.

:class:`ModelSessions` is the half of :class:`~pytest_nlgeval.core.evaluator.Evaluator` that scorers reach the
models through (:class:`~pytest_nlgeval.core.scorers.base.Models`): the Boolean-QA graphs of the model folder and
its sub-folders, its sentence encoders, what a scorer keeps for the evaluator's length (a fact checker's session),
and the cache every reading goes through. An ONNX Runtime session is created only when a text is not in the cache,
so a warm re-run of an unchanged suite never builds one. That needs the fingerprint before the session exists: it
comes from the model folder's manifest (``nlgeval_runtime.fingerprint.planned_fingerprint``, which imports neither
numpy nor onnxruntime) or, where only a session can tell the provider (device ``auto`` with CUDA listed), from
the fingerprint a previous run recorded in the cache for the same request.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Callable, Sequence

from pytest_nlgeval.core.scorers.similarity import PAIR

__all__ = ["ModelSessions"]


def _checked_values(keys: list[str], values: Any) -> list[tuple[float, bool, int]]:
    """``values`` (what a part computed for ``keys``) when it is one ``(score, truncated, n_tokens)`` per key with
    a finite score; otherwise a :class:`~pytest_nlgeval.core.scorers.answers.ScorerAnswerError`, so that a part's
    bad answer is never cached."""
    import math

    from pytest_nlgeval.core.scorers.answers import ScorerAnswerError

    values = list(values)
    if len(values) != len(keys):
        raise ScorerAnswerError(
            f"a model call answered {len(values)} answer(s) for {len(keys)} input(s) (the first: {keys[0][:80]!r}); "
            "nothing of it was cached"
        )
    for key, value in zip(keys, values):
        score = value[0] if isinstance(value, (tuple, list)) and len(value) == 3 else None
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            raise ScorerAnswerError(
                f"a model call answered {value!r:.80} for the input {key[:80]!r}, not (a finite score, truncated, "
                "tokens); nothing of it was cached"
            )
    return values


#: a model call over at least this many inputs draws its progress (where the evaluator draws any)
LONG_CALL_INPUTS = 512


class ModelSessions:
    """Sessions, fingerprint and cache of an evaluator; the evaluator's constructor sets what they read (``model``,
    ``device``, ``precision``, ``batch_size``, ``threads``, ``model_cache_dir``, ``cache``, ``source_windows``,
    ``fact_checker``)."""

    model: str | None
    device: str
    precision: str
    batch_size: int | None
    threads: int | None
    model_cache_dir: Any
    cache: Any
    source_windows: str
    fact_checker: str | None
    stats: dict[str, int]
    _scorer: Any
    _graph_scorers: dict
    _resources: dict[tuple, Any]
    _folder: Any
    _fingerprint: dict | None
    _fingerprint_id: str | None
    _planner: Any

    # -- model and fingerprint --------------------------------------------------------------------------
    @property
    def folder(self):
        """The resolved model folder (reads its manifest; creates no session)."""
        if self._folder is None:
            from nlgeval_runtime.modelfolder import ModelFolder
            from nlgeval_runtime.resolve import resolve_model

            folder = ModelFolder.open(resolve_model(self.model, cache_dir=self.model_cache_dir))
            if folder.kind != "boolqa":
                from nlgeval_runtime.errors import ModelFormatError

                what = {"claim-support": "a fact checker (kind claim-support)"}.get(
                    folder.kind, f"a {folder.kind} model"
                )
                fix = (
                    "give it as --nlgeval-fact-checker PATH (Evaluator(fact_checker=PATH)) beside an evaluator model"
                    if folder.kind == "claim-support"
                    else "give an evaluator folder (kind boolqa), e.g. the embedded default or `nlgeval export` of "
                    "a UniEval checkpoint"
                )
                raise ModelFormatError(
                    f"model {self.model_ref!r} ({str(folder.path)!r}) holds {what}, not an evaluator model (kind "
                    f"boolqa, read from 'kind' in its nlgeval.json): {fix}"
                )
            self._folder = folder
        return self._folder

    @property
    def model_ref(self) -> str:
        return self.model if self.model is not None else "default"

    @property
    def scorer(self):
        """The runtime scorer; created (ONNX session and all) on first access."""
        if self._scorer is None:
            from nlgeval_runtime.boolqa import load_boolqa

            kwargs = {} if self.batch_size is None else {"max_batch_size": self.batch_size}
            self._scorer = load_boolqa(
                self.model,
                device=self.device,
                precision=self.precision,
                threads=self.threads,
                cache_dir=self.model_cache_dir,
                **kwargs,
            )
            self.stats["sessions"] += 1
            planned = self._fingerprint_id
            self._adopt(self._scorer.fingerprint)
            if self.cache is not None:
                self.cache.put_meta(self._request_key(), {"fingerprint": dict(self._scorer.fingerprint)})
            if planned is not None and planned != self._fingerprint_id:
                import warnings

                warnings.warn(
                    f"the evaluator was planned as {planned} but its session is {self._fingerprint_id} "
                    f"({self._fingerprint.get('provider')}, {self._fingerprint.get('precision')}); "
                    "scores are cached under the session's fingerprint",
                    RuntimeWarning,
                    stacklevel=2,
                )
        return self._scorer

    @property
    def session_created(self) -> bool:
        return self._scorer is not None

    def _request_key(self) -> str:
        """What a run asked for, by content: the same request on the same installation gets the same evaluator."""
        from nlgeval_runtime import _version
        from nlgeval_runtime.fingerprint import planned_provider
        from nlgeval_runtime.session import cuda_listed

        folder = self.folder
        request = {
            "model": self.model_ref,
            "files": folder.manifest.get("files"),
            "device": self.device,
            "precision": self.precision,
            "runtime_version": _version.__version__,
            "cuda_listed": planned_provider(self.device) is None and cuda_listed(),
            **self._checker_print(),
        }
        digest = hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()[:24]
        return f"planned:{digest}"

    def _adopt(self, runtime_fingerprint: dict) -> None:
        """The evaluator's fingerprint: the runtime's (files, provider, precision, version) plus the
        evaluator settings that change scores."""
        from nlgeval_runtime.fingerprint import fingerprint_id

        self._fingerprint = {**runtime_fingerprint, "source_windows": self.source_windows, **self._checker_print()}
        self._fingerprint_id = fingerprint_id(self._fingerprint)

    def _checker_print(self) -> dict:
        """The fact checker's part of the fingerprint: its files and how they are read (empty without one)."""
        if self.fact_checker is None:
            return {}
        from nlgeval_runtime.modelfolder import ModelFolder

        from nlgeval_runtime.claim_support import sentence_splitter

        checker = ModelFolder.open(self.fact_checker)
        reading = checker.manifest.get("reading")
        sentences = sentence_splitter(reading)[0]  # Punkt as the authors split, or this runtime's splitter
        return {
            "fact_checker": {
                "files": checker.manifest["files"],
                "reading": reading,
                **({"sentences": sentences} if sentences else {}),
            }
        }

    def _ensure_fingerprint(self) -> tuple[dict, str]:
        """The fingerprint and its id: planned from the manifest or the cache, else from a session."""
        if self._fingerprint is None or self._fingerprint_id is None:
            self._plan_fingerprint()
        assert self._fingerprint is not None and self._fingerprint_id is not None, "a session sets both"
        return self._fingerprint, self._fingerprint_id

    def _plan_fingerprint(self) -> None:
        from nlgeval_runtime.fingerprint import planned_fingerprint

        planned = planned_fingerprint(self.folder, self.model_ref, device=self.device, precision=self.precision)
        if planned is None and self.cache is not None:
            memo = self.cache.get_meta(self._request_key())
            planned = (memo or {}).get("fingerprint")
        if planned is None:
            self.scorer  # only a session can tell (sets the fingerprint)
            return
        self._adopt(planned)

    @property
    def fingerprint(self) -> dict:
        """Model files' sha256, provider, precision, runtime version, source windows; usually known
        without a session."""
        return dict(self._ensure_fingerprint()[0])

    @property
    def fingerprint_id(self) -> str:
        """Short stable id of :attr:`fingerprint`; cached scores and baselines are keyed by it."""
        return self._ensure_fingerprint()[1]

    # -- what scorers read through (models and cache) ------------------------------------------------------
    def cached(self, keys: Sequence[str], compute: Callable[[list[str]], list]) -> list[tuple[float, bool, int]]:
        """``(score, truncated, n_tokens)`` per key: from the cache, misses computed by ``compute(misses)`` in one
        call and cached under this evaluator's fingerprint (a key names everything that makes its score)."""
        keys = list(keys)
        unique = list(dict.fromkeys(keys))
        known: dict[str, tuple[float, bool, int]] = {}
        if self.cache is not None and unique:
            known = self.cache.get_many(self.fingerprint_id, unique)
        misses = [k for k in unique if k not in known]
        if misses:
            fresh = dict(zip(misses, _checked_values(misses, compute(misses))))
            known.update(fresh)
            if self.cache is not None:
                self.cache.put_many(self.fingerprint_id, fresh)
        self.stats["scored"] += len(misses)
        self.stats["cached"] += len(unique) - len(misses)
        return [known[k] for k in keys]

    def score_texts(self, texts: Sequence[str], graph: str | None = None) -> list[tuple[float, bool, int]]:
        """``(score, truncated, n_tokens)`` per evaluator input text, cached, misses in one batched call.

        ``graph``: the sub-folder model that answers these texts, as the folder declares it per dimension
        (None: the folder's own graph). The cache needs no graph in its key: a dimension is answered by
        one graph only, and every input text names its dimension's question.
        """
        self.stats["calls"] += 1

        def compute(misses: list[str]) -> list[tuple[float, bool, int]]:
            scorer = self.scorer if graph is None else self._graph_scorer(graph)
            stream = getattr(self, "progress", None)
            if stream is None or len(misses) < LONG_CALL_INPUTS:
                result = scorer.score(misses)
            else:  # one call over thousands of inputs (a very long output): say how far it is
                from pytest_nlgeval.core.progress import progress

                with progress(len(misses), "nlgeval model inputs", unit="input", stream=stream) as bar:
                    result = scorer.score(misses, progress=lambda done, total: bar.update(done - bar.n))
            return [(float(s), bool(t), int(n)) for s, t, n in zip(result.scores, result.truncated, result.n_tokens)]

        return self.cached(texts, compute)

    def _graph_scorer(self, graph: str):
        """The scorer of the sub-folder model ``graph`` (created on first use, closed with the evaluator)."""
        scorers = self._graph_scorers
        if graph not in scorers:
            from nlgeval_runtime.boolqa import load_boolqa

            self.scorer  # the main session verifies the folder and fixes the fingerprint first
            kwargs: dict[str, Any] = {} if self.batch_size is None else {"max_batch_size": self.batch_size}
            scorers[graph] = load_boolqa(
                self.folder.path / graph, device=self.device, precision=self.precision, threads=self.threads, **kwargs
            )
            self.stats["sessions"] += 1
        return scorers[graph]

    def similarities(self, keys: Sequence[str], folder: str, *, best_sentence: bool = False) -> list[float]:
        """Cosines of the text pairs ``keys`` (see :func:`~pytest_nlgeval.core.scorers.similarity.pair_key`) under
        the sentence encoder in the sub-folder ``folder``; cached like scores, keyed by the pair. ``best_sentence``:
        the best cosine of the unit with any sentence of the other text (a reply uses one sentence of a long fact)."""
        from nlgeval_runtime.sentences import split_sentences

        prefix = "best sentence " if best_sentence else ""

        def compute(misses: list[str]) -> list[tuple[float, bool, int]]:
            pairs = [k[len(prefix) :].split(PAIR, 2)[1:] for k in misses]
            others = {b: (split_sentences(b) or [b]) if best_sentence else [b] for _, b in pairs}
            sides = list(dict.fromkeys([a for a, _ in pairs] + [t for parts in others.values() for t in parts]))
            vectors = dict(zip(sides, self._embedder(folder).embed(sides)))
            return [(max(float(vectors[a] @ vectors[t]) for t in others[b]), False, 0) for a, b in pairs]

        return [v for v, _, _ in self.cached([prefix + k for k in keys], compute)]

    def _embedder(self, folder: str):
        """The sentence encoder of the sub-folder ``folder`` (created on first use)."""
        key = ("embedding", folder)
        if key not in self._graph_scorers:
            from nlgeval_runtime.embedding import load_embedder

            self._ensure_fingerprint()
            self._graph_scorers[key] = load_embedder(
                self.folder.path / folder, device=self.device, precision=self.precision, threads=self.threads
            )
            self.stats["sessions"] += 1
        return self._graph_scorers[key]

    def embedder(self, folder: str):
        """The sentence encoder of the sub-folder ``folder`` (what a scorer embeds texts with)."""
        return self._embedder(folder)

    def resource(self, key: tuple, make: Callable[[], Any]) -> Any:
        """What a scorer keeps for the evaluator's length (a fact checker's session): ``make()`` on first use of
        ``key``, released by :meth:`close`."""
        if key not in self._resources:
            self._ensure_fingerprint()
            self._resources[key] = make()
            self.stats["sessions"] += 1
        return self._resources[key]

    # -- source windows ----------------------------------------------------------------------------------
    @property
    def window_planner(self):
        """Plans source windows with the model's tokenizer and maximum length (no session needed)."""
        if self._planner is None:
            from pytest_nlgeval.core.windows import WindowPlanner

            encoder = self._scorer.encoder if self._scorer is not None else self._text_encoder()
            self._planner = WindowPlanner(lambda texts: encoder.encode(list(texts)).n_tokens, encoder.max_length)
        return self._planner

    def _text_encoder(self):
        from nlgeval_runtime.tokenize import TextEncoder

        conventions = self.folder.input_conventions
        return TextEncoder(
            self.folder.tokenizer_path,
            separator=conventions["separator"],
            separator_token=conventions["separator_token"],
            max_length=conventions["max_length"],
        )
