"""The evaluator: dimension specs in, scores out, through the score cache and the runtime scorer.

An :class:`Evaluator` holds its configuration (model, device, precision, batch size, cache) and
creates the ONNX Runtime scorer only when a text is not in the cache, so a warm re-run of an unchanged
suite never builds a session. That needs the fingerprint before the session exists: it comes from the
model folder's manifest (``nlgeval_runtime.fingerprint.planned_fingerprint``, which imports neither
numpy nor onnxruntime) or, where only a session can tell the
provider (device ``auto`` with CUDA listed), from the fingerprint a previous run recorded in the cache
for the same request.

    >>> ev = Evaluator("models/unieval-sum", device="cpu")
    >>> ev.score("The cat sat on the mat.", "fluency") > 0.5
    True
    >>> ev.score_batch(["A summary.", "Another one."], "consistency", sources=[doc1, doc2])
    [0.91, 0.42]
"""

from __future__ import annotations

import json
import hashlib
import os
from typing import Any, Callable, Sequence

from pytest_nlgeval.core.cache import DEFAULT_CACHE_DIR
from pytest_nlgeval.core.dimensions import (
    DEFAULT_TASK,
    OVERALL,
    Dimension,
    DimensionError,
    DimensionRegistry,
    InputError,
    hide_user_errors,
    prepare_inputs,
)
from pytest_nlgeval.core.score import Score, ScoreList
from pytest_nlgeval.core.windows import Window

__all__ = ["DEFAULT_CACHE_DIR", "Evaluator"]


class Evaluator:
    """Scores outputs on dimensions with one Boolean-QA model.

    ``model``: a model folder, a Hugging Face id, or None for the embedded default. ``device``:
    ``auto``/``cpu``/``cuda``; ``precision``: ``auto``/``fp32``/``fp16``/``int8``. ``batch_size``: the
    most inputs per ONNX call. ``cache``: True (``cache_dir``, default ``.nlgeval-cache`` in the current
    directory), False (no cache), or a :class:`~pytest_nlgeval.core.cache.ScoreCache`. ``registry``: the
    dimensions this evaluator knows (default: the built-in catalogue). ``source_windows``: ``auto``
    scores a long document in overlapping sentence windows where the dimension allows it
    (:mod:`pytest_nlgeval.core.windows`), ``off`` cuts the input's tail as UniEval does; the setting is part of
    the fingerprint, so scores of the two modes are never mixed. ``default_task``: the task of a call
    that names none, a name or a function that gives one (a pytest run passes the running test's).
    ``recorder``: where comparisons of the scores it makes are recorded when a call hands in none: a
    :class:`~pytest_nlgeval.core.checks.CheckRecorder`, a function that gives the current one (a run passes
    its own, so the ``nlgeval`` fixture's scores are recorded), or None (the default: nowhere).
    ``progress``: where a batch of many outputs (:data:`~pytest_nlgeval.core.progress.MIN_ITEMS` or more) draws
    its progress (:mod:`pytest_nlgeval.core.progress`): a stream, or None (the default: nowhere).

    The evaluator knows nothing of pytest: the task, the inputs and where a comparison is recorded
    (``recorder=`` here or of :meth:`score`/:meth:`evaluate`) come in as arguments.
    """

    def __init__(
        self,
        model: str | os.PathLike | None = None,
        *,
        device: str = "auto",
        precision: str = "auto",
        batch_size: int | None = None,
        cache: Any = True,
        cache_dir: str | os.PathLike | None = None,
        threads: int | None = None,
        registry: DimensionRegistry | None = None,
        model_cache_dir: str | os.PathLike | None = None,
        source_windows: str = "auto",
        default_task: str | Callable[[], str] = DEFAULT_TASK,
        max_windows: int | None = None,
        recorder: Any = None,
        progress: Any = None,
    ) -> None:
        from nlgeval_runtime.session import check_options

        from pytest_nlgeval.core.windows import check_mode

        check_options(device, precision)
        self.source_windows = check_mode(source_windows)
        if batch_size is not None and (isinstance(batch_size, bool) or int(batch_size) < 1):
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        if max_windows is not None and (isinstance(max_windows, bool) or int(max_windows) < 1):
            raise ValueError(f"max_windows must be a positive integer, got {max_windows!r}")
        #: the most source windows one unit may be scored against (None: no cap); see :meth:`_unit_windows`
        self.max_windows = None if max_windows is None else int(max_windows)
        self.model = None if model is None else os.fspath(model)
        self.device = device
        self.precision = precision
        self.batch_size = None if batch_size is None else int(batch_size)
        self.threads = threads
        self.model_cache_dir = model_cache_dir
        self.registry = registry if registry is not None else DimensionRegistry()
        self.default_task = default_task
        self.recorder = recorder
        self.progress = progress
        if cache is True:
            from pytest_nlgeval.core.cache import ScoreCache

            cache = ScoreCache.in_folder(cache_dir or DEFAULT_CACHE_DIR)
        self.cache = cache or None
        self._scorer = None
        self._graph_scorers: dict = {}  # sub-folder name -> its scorer (see :meth:`_graph_scorer`)
        self._folder = None
        self._fingerprint: dict | None = None
        self._fingerprint_id: str | None = None
        self._planner = None
        self._capped: set[int] = set()  # units (in plan order) of the last call past WHOLE_SOURCE_TOKENS
        #: texts sent to the model / answered by the cache, and ONNX sessions created, by this evaluator
        self.stats = {"scored": 0, "cached": 0, "sessions": 0, "calls": 0}

    def __repr__(self) -> str:
        return (
            f"Evaluator(model={self.model or 'default'!r}, device={self.device!r}, "
            f"precision={self.precision!r}, source_windows={self.source_windows!r}, "
            f"cache={'on' if self.cache else 'off'})"
        )

    # -- model and fingerprint --------------------------------------------------------------------------
    @property
    def folder(self):
        """The resolved model folder (reads its manifest; creates no session)."""
        if self._folder is None:
            from nlgeval_runtime.modelfolder import ModelFolder
            from nlgeval_runtime.resolve import resolve_model

            self._folder = ModelFolder.open(resolve_model(self.model, cache_dir=self.model_cache_dir))
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
        }
        digest = hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()[:24]
        return f"planned:{digest}"

    def _adopt(self, runtime_fingerprint: dict) -> None:
        """The evaluator's fingerprint: the runtime's (files, provider, precision, version) plus the
        evaluator settings that change scores."""
        from nlgeval_runtime.fingerprint import fingerprint_id

        self._fingerprint = {**runtime_fingerprint, "source_windows": self.source_windows}
        self._fingerprint_id = fingerprint_id(self._fingerprint)

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

    # -- scoring texts -----------------------------------------------------------------------------------
    def score_texts(self, texts: Sequence[str], graph: str | None = None) -> list[tuple[float, bool, int]]:
        """``(score, truncated, n_tokens)`` per evaluator input text, cached, misses in one batched call.

        ``graph``: the sub-folder model that answers these texts, as the folder declares it per dimension
        (None: the folder's own graph). The cache needs no graph in its key: a dimension is answered by
        one graph only, and every input text names its dimension's question.
        """
        texts = list(texts)
        self.stats["calls"] += 1
        unique = list(dict.fromkeys(texts))
        known: dict[str, tuple[float, bool, int]] = {}
        if self.cache is not None and unique:
            known = self.cache.get_many(self.fingerprint_id, unique)
        misses = [t for t in unique if t not in known]
        if misses:
            scorer = self.scorer if graph is None else self._graph_scorer(graph)
            result = scorer.score(misses)
            fresh = {
                t: (float(s), bool(tr), int(n))
                for t, s, tr, n in zip(misses, result.scores, result.truncated, result.n_tokens)
            }
            known.update(fresh)
            if self.cache is not None:
                self.cache.put_many(self.fingerprint_id, fresh)
        self.stats["scored"] += len(misses)
        self.stats["cached"] += len(unique) - len(misses)
        return [known[t] for t in texts]

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

    def _scored_units(self, dims: list[Dimension], texts: list[str]) -> list[tuple[float, bool, int]]:
        """Scores of ``texts[k]`` (an input of ``dims[k]``), each text sent to the graph its dimension names
        (a similarity dimension's texts to its sentence encoder, calibrated)."""
        specs = {d.key: self._served(d) for d in {d.key: d for d in dims}.values()}
        graph_of = {
            key: (("similarity", spec["folder"]) if spec.get("scorer") == "similarity" else spec.get("folder"))
            for key, spec in specs.items()
        }
        graphs = [graph_of[d.key] for d in dims]
        if not any(graphs):
            return self.score_texts(texts)
        out: list = [None] * len(texts)
        for graph in dict.fromkeys(graphs):
            at = [k for k, g in enumerate(graphs) if g == graph]
            if isinstance(graph, tuple):
                best = bool(specs[dims[at[0]].key].get("best_sentence"))
                cosines = self.similarities([texts[k] for k in at], graph[1], best_sentence=best)
                for k, cosine in zip(at, cosines):
                    out[k] = (_calibrated(specs[dims[k].key]["calibration"], cosine, texts[k]), False, 0)
                continue
            for k, result in zip(at, self.score_texts([texts[k] for k in at], graph)):
                out[k] = result
        return out

    def _in_context(self, dim, partner: str, outputs, task: str, per_case, labels, by_case) -> None:
        """``dim``'s scores as the geometric mean of the model's answer and the output's score on ``partner``
        (a dimension of the same task): "a natural response *in the dialogue*" asks that the reply reads
        naturally and that it answers this dialogue. Updates ``by_case`` in place; the partner's scores are
        not recorded as checks."""
        import math

        needed = self.registry.get(partner, task).arguments
        # an output given without the partner's inputs (a reply without its history) keeps the model's answer
        cases = [i for i in range(len(outputs)) if all(per_case[i].get(a) is not None for a in needed)]
        if not cases:
            return
        others = self._evaluate(
            [outputs[i] for i in cases], partner, task, [per_case[i] for i in cases], [labels[i] for i in cases], None
        )
        for i, other in zip(cases, others):
            d, units, results, supports = by_case[i][dim.name]
            fitted = [(math.sqrt(max(0.0, r[0]) * float(other)), *r[1:]) for r in results]
            by_case[i][dim.name] = (d, units, fitted, supports)

    def _related_keys(self, dim: Dimension, units: list[str], values: dict) -> dict[str, list[str]]:
        """The sentence-encoder pairs of a ``related`` or ``informative`` dimension's units: for each text its
        declaration names (``against``: argument -> calibration) that the call gives, one pair key per unit."""
        from pytest_nlgeval.core.dimensions import _check_text, prepare_fields

        fields = prepare_fields(dim, values)
        for argument in self._served(dim)["against"]:
            if argument not in fields and values.get(argument) is not None:
                fields[argument] = _check_text(values[argument], f"`{argument}=`")
        return {
            argument: [_pair_key(dim, unit, fields[argument]) for unit in units]
            for argument in self._served(dim)["against"]
            if argument in fields
        }

    def _related(
        self, dim: Dimension, units: list[str], keys: dict[str, list[str]], cosines: dict[str, float]
    ) -> list[tuple[float, bool, int]]:
        """Each unit's calibrated relation to the texts of ``keys`` (see :meth:`_related_keys`).

        ``related``: the mean log-odds over the named texts that were given (summarization relevance: the
        summary keeps what the reference and the document say matters). ``informative``: the best of them,
        times how much the unit says (1 - exp(-content words / ``content_scale``)); dialogue engagingness,
        "an engaging and informative response according to the dialogue history and fact" (UniEval's
        question), summed over sentences.
        """
        import math

        from nlgeval_runtime.claims import content_words

        spec = self._served(dim)
        log_odds = [[_log_odds(spec["against"][a], cosines[k], k) for k in pairs] for a, pairs in keys.items()]
        if spec.get("scorer") == "related":
            return [(_sigmoid(sum(column) / len(column)), False, 0) for column in zip(*log_odds)]
        scale = float(spec.get("content_scale", 5.0))
        return [
            (_sigmoid(max(column)) * (1.0 - math.exp(-len(content_words(u)) / scale)), False, 0)
            for column, u in zip(zip(*log_odds), units)
        ]

    def similarities(self, keys: Sequence[str], folder: str, *, best_sentence: bool = False) -> list[float]:
        """Cosines of the text pairs ``keys`` (see :func:`_similarity_keys`) under the sentence encoder in the
        sub-folder ``folder``; cached like scores, keyed by the pair. ``best_sentence``: the best cosine of the
        unit with any sentence of the other text (a reply uses one sentence of a long fact)."""
        from nlgeval_runtime.sentences import split_sentences

        keys = list(keys)
        prefix = "best sentence " if best_sentence else ""
        unique = list(dict.fromkeys(keys))
        known: dict[str, float] = {}
        if self.cache is not None and unique:
            stored = self.cache.get_many(self.fingerprint_id, [prefix + k for k in unique])
            known = {k[len(prefix) :]: v[0] for k, v in stored.items()}
        misses = [k for k in unique if k not in known]
        if misses:
            embedder = self._embedder(folder)
            pairs = [k.split(_PAIR, 2)[1:] for k in misses]
            others = {b: (split_sentences(b) or [b]) if best_sentence else [b] for _, b in pairs}
            sides = list(dict.fromkeys([a for a, _ in pairs] + [t for parts in others.values() for t in parts]))
            vectors = dict(zip(sides, embedder.embed(sides)))
            fresh = {k: max(float(vectors[a] @ vectors[t]) for t in others[b]) for k, (a, b) in zip(misses, pairs)}
            known.update(fresh)
            if self.cache is not None:
                self.cache.put_many(self.fingerprint_id, {prefix + k: (v, False, 0) for k, v in fresh.items()})
        self.stats["scored"] += len(misses)
        self.stats["cached"] += len(unique) - len(misses)
        return [known[k] for k in keys]

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

    # -- dimensions --------------------------------------------------------------------------------------
    def dimension(self, name: str, task: str | None = None) -> Dimension:
        return self.registry.get(name, task)

    def evaluate(
        self,
        outputs: Sequence[str],
        dimension: str,
        *,
        sources=None,
        references=None,
        contexts=None,
        facts=None,
        task: str | None = None,
        source=None,
        reference=None,
        context=None,
        fact=None,
        questions=None,
        question=None,
        recorder=None,
    ) -> ScoreList:
        """Score many outputs on one dimension in one batched call; returns a :class:`ScoreList`.

        Per-case inputs are lists (``sources=[...]``); one shared input is a single value (``source=...``).
        In the rag task ``contexts=[[...], ...]`` holds each output's retrieved passages and ``context=[...]``
        passages shared by all.
        ``recorder``: where comparisons of the scores are recorded (None: the evaluator's own, see
        :class:`Evaluator`).
        """
        __tracebackhide__ = hide_user_errors
        task = self._task(task)
        if isinstance(outputs, str) or not isinstance(outputs, Sequence):
            raise InputError(
                f"outputs must be a list of strings, got {type(outputs).__name__}; "
                "use assert_dimension / Evaluator.score for a single output"
            )
        if len(outputs) == 0:
            raise InputError("outputs is an empty list: there is nothing to score")
        per_case = _per_case_values(
            len(outputs),
            sources=(sources, source),
            references=(references, reference),
            contexts=(contexts, context),
            facts=(facts, fact),
            questions=(questions, question),
        )
        labels = [f"outputs[{i}]" for i in range(len(outputs))]
        recorder = self._recorder(recorder)
        from pytest_nlgeval.core.progress import MIN_ITEMS, progress

        if self.progress is None or len(outputs) < MIN_ITEMS:
            return self._evaluate(outputs, dimension, task, per_case, labels, recorder)
        # a long batch in parts of PROGRESS_PART outputs, with a status line (scores do not depend on batching)
        scores: list[Score] = []
        with progress(len(outputs), f"nlgeval {task}/{dimension}", unit="output", stream=self.progress) as bar:
            for start in range(0, len(outputs), PROGRESS_PART):
                end = start + PROGRESS_PART
                part = self._evaluate(
                    outputs[start:end], dimension, task, per_case[start:end], labels[start:end], recorder
                )
                scores.extend(part)
                bar.update(len(part))
        return ScoreList(scores, name=dimension, task=task, labels=list(outputs))

    def _recorder(self, recorder):
        """The recorder a call handed in, else the evaluator's own (a recorder, or a function that gives one)."""
        if recorder is not None:
            return recorder
        return self.recorder() if callable(self.recorder) else self.recorder

    def _task(self, task: str | None) -> str:
        """``task``, else the default task (a name, or a function that names it)."""
        if task:
            return task
        default = self.default_task() if callable(self.default_task) else self.default_task
        return default or DEFAULT_TASK

    def _evaluate(
        self, outputs, dimension: str, task: str, per_case: list[dict], labels: list[str], recorder=None
    ) -> ScoreList:
        __tracebackhide__ = hide_user_errors
        members = [self._as_served(dim) for dim in self._members(dimension, task)]
        plans = []  # (case, dimension, units, per unit: its windows or None)
        texts: list[str] = []
        unread: dict[tuple[int, str], int] = {}  # (case, dimension) -> claims before the cap
        for i, output in enumerate(outputs):
            for dim in members:
                units, unit_texts = prepare_inputs(dim, output, per_case[i], label=labels[i])
                if dim.unit == "claim" and len(units) > MAX_CLAIMS:
                    # a runaway output (a 200,000-character dump) costs bounded time; the score says so
                    unread[(i, dim.name)] = len(units)
                    units, unit_texts = units[:MAX_CLAIMS], unit_texts[:MAX_CLAIMS]
                scorer = self._served(dim).get("scorer")
                if scorer == "similarity":
                    unit_texts = _similarity_keys(dim, units, per_case[i])
                elif scorer in ("informative", "related"):
                    unit_texts = []  # scored from the sentence encoder's cosines below, not by a graph
                plans.append((i, dim, units, unit_texts))
                texts.extend(unit_texts)
        self._capped = set()
        windows = self._windows(plans, texts, per_case)
        capped, self._capped = self._capped, set()
        text_dims = [dim for _, dim, _, unit_texts in plans for _ in unit_texts]
        if windows:
            all_texts = [t for unit_windows in windows for t in unit_windows[1]]
            text_dims = [d for d, unit_windows in zip(text_dims, windows) for _ in unit_windows[1]]
        else:
            all_texts = texts
        results = self._cascade(plans, windows, text_dims, all_texts)
        related_keys = {
            p: self._related_keys(dim, units, per_case[i])
            for p, (i, dim, units, _) in enumerate(plans)
            if self._served(dim).get("scorer") in ("informative", "related")
        }
        cosines: dict[str, float] = {}
        for folder in dict.fromkeys(self._served(plans[p][1])["folder"] for p in related_keys):
            keys = list(
                dict.fromkeys(
                    k
                    for p, by_argument in related_keys.items()
                    if self._served(plans[p][1])["folder"] == folder
                    for pairs in by_argument.values()
                    for k in pairs
                )
            )
            cosines.update(zip(keys, self.similarities(keys, folder)))
        fingerprint, fid = self.fingerprint, self.fingerprint_id
        by_case: list[dict[str, tuple]] = [dict() for _ in outputs]
        at = unit_at = 0
        claim_units = []  # (case, dimension, unit index, claim, its candidate evidence windows)
        for p, (i, dim, units, unit_texts) in enumerate(plans):
            if p in related_keys:
                by_case[i][dim.name] = (
                    dim,
                    units,
                    self._related(dim, units, related_keys[p], cosines),
                    [None] * len(units),
                )
                continue
            unit_results, supports = [], []
            for u, unit in enumerate(units):
                if windows:
                    unit_windows, window_texts = windows[unit_at]
                    read = [(k, r) for k, r in enumerate(results[at : at + len(window_texts)]) if r is not None]
                    at += len(window_texts)
                    scored = [r for _, r in read]
                    unit_results.append(_combine(dim, scored))
                    supports.append(_support(dim, [unit_windows[k] for k, _ in read] if unit_windows else None, scored))
                    if unit_at in capped:
                        supports[-1] = {
                            **(supports[-1] or {}),
                            "source_read": f"aligned units only: the source is over the {WHOLE_SOURCE_TOKENS:,} tokens "
                            "read whole",
                        }
                    if unit_windows and len(read) < len(window_texts):
                        supports[-1] = {
                            **(supports[-1] or {}),
                            "candidates_read": f"{len(read)} of {len(window_texts)}",
                        }
                else:
                    unit_windows = None
                    unit_results.append(results[at])
                    at += 1
                    supports.append(None)
                if dim.unit == "claim" and self._served(dim).get("checks"):
                    claim_units.append((i, dim, u, unit, unit_windows))
                elif self._served(dim).get("evasive") and _evasive(unit):
                    # an answer that declines to answer does not address the question, however close its
                    # words are to it (Ragas' noncommittal flag)
                    unit_results[-1] = (min(unit_results[-1][0], EVASIVE_CAP), *unit_results[-1][1:])
                    supports[-1] = {"evasive": "the answer declines to answer (a hedge, no content)"}
                unit_at += 1
            by_case[i][dim.name] = (dim, units, unit_results, supports)
        if claim_units:
            self._check_claims(claim_units, by_case, per_case)
        for i, dim, _, _ in plans:
            if self._served(dim).get("fact_checks") and dim.name in by_case[i]:
                _check_against_fact(dim, self._served(dim)["fact_checks"], by_case[i], per_case[i])
        self._read_whole(plans, by_case, per_case)
        for dim in members:
            partner = self._served(dim).get("in_context_of")
            if partner:
                self._in_context(dim, partner, outputs, task, per_case, labels, by_case)
        scores = []
        for i, output in enumerate(outputs):
            inputs = {"output": output, **{k: v for k, v in per_case[i].items() if v is not None}}
            score = _make_score(dimension, task, by_case[i], inputs, fid, fingerprint, recorder)
            for (case, name), total in unread.items():
                if case == i:
                    score.details["claims_read"] = f"the first {MAX_CLAIMS} of {total} claims ({name})"
            scores.append(score)
        return ScoreList(scores, name=dimension, task=task, labels=list(outputs))

    def _cascade(self, plans, windows, text_dims, texts: list[str]) -> list:
        """Scores of ``texts`` (the flat list of every unit's window texts, in plan order); None for a
        candidate window that was not read.

        A dimension declared with ``cascade: {"first": k, "stop": t}`` reads a unit's aligned source units
        in two steps: first the ``k`` that share the most content words with it; only a unit whose best
        score there stays below ``t`` reads the rest (its other aligned units and the whole source). The
        score is the best over the windows read (``max``), so a unit that stops has found support already;
        the evidence of its explicit fact checks is still every aligned unit.
        """
        if not windows:
            return self._scored_units(text_dims, texts)
        groups = []  # (start, end, stop or None, first-step mask)
        start = unit_at = 0
        for _, dim, _, unit_texts in plans:
            cascade = self._served(dim).get("cascade")
            for _ in unit_texts:
                unit_windows, window_texts = windows[unit_at]
                unit_at += 1
                n = len(window_texts)
                mask = [True] * n
                if cascade and unit_windows and n > 1:
                    first = int(cascade["first"])
                    mask = [w.rank is not None and w.rank < first for w in unit_windows]
                    if not any(mask):
                        mask = [True] * n
                groups.append((start, start + n, float(cascade["stop"]) if cascade else None, mask))
                start += n
        out: list = [None] * len(texts)
        first_step = [p for s, e, _, mask in groups for p, keep in zip(range(s, e), mask) if keep]
        for p, r in zip(
            first_step, self._scored_units([text_dims[p] for p in first_step], [texts[p] for p in first_step])
        ):
            out[p] = r
        second_step = [
            p
            for s, e, stop, mask in groups
            if not all(mask) and (stop is None or max(out[q][0] for q in range(s, e) if mask[q - s]) < stop)
            for p in range(s, e)
            if not mask[p - s]
        ]
        if second_step:
            for p, r in zip(
                second_step, self._scored_units([text_dims[p] for p in second_step], [texts[p] for p in second_step])
            ):
                out[p] = r
        return out

    def _read_whole(self, plans: list, by_case: list[dict], per_case: list[dict]) -> None:
        """The readings of a whole output (against its ``source`` where one is given) that a dimension's
        declaration asks for; updates ``by_case`` in place.

        - ``form`` (summarization fluency): the model's answer, raised to ``head_power``, times the factor of
          :mod:`nlgeval_runtime.form`.
        - ``slots`` (data-to-text informativeness): a slot of the meaning representation whose value the
          utterance does not state caps the score.
        - ``discourse`` (summarization coherence): the model's answer, raised to ``head_power``, times the
          order, repetition and topic factors of :mod:`nlgeval_runtime.discourse`.
        """
        discourse = []
        for i, dim, _, _ in plans:
            spec = self._served(dim)
            if spec.get("form") and dim.name in by_case[i]:
                self._read_form(dim, spec["form"], by_case[i])
            if per_case[i].get("source") is None or dim.name not in by_case[i]:
                continue
            if spec.get("slots"):
                self._check_slots(dim, spec["slots"], by_case[i], per_case[i]["source"])
            if spec.get("discourse"):
                discourse.append((i, dim, spec["discourse"]))
        if discourse:
            self._read_discourse(discourse, by_case, per_case)

    @staticmethod
    def _read_form(dim: Dimension, spec: dict, parts: dict) -> None:
        from nlgeval_runtime.form import read_form
        from nlgeval_runtime.sentences import split_sentences

        _, units, results, supports = parts[dim.name]
        for u, unit in enumerate(units):
            form = read_form(unit, split_sentences(unit) or [unit], penalty=float(spec.get("penalty", 0.5)))
            head = max(0.0, results[u][0]) ** float(spec.get("head_power", 1.0))
            results[u] = (head * form.factor, *results[u][1:])
            if form.findings:
                supports[u] = {
                    **(supports[u] or {}),
                    "findings": [*(supports[u] or {}).get("findings", []), *form.findings],
                }

    @staticmethod
    def _check_slots(dim: Dimension, spec: dict, parts: dict, source) -> None:
        from nlgeval_runtime.slots import missing_slots

        from pytest_nlgeval.core.dimensions import _check_text

        _, units, results, supports = parts[dim.name]
        mr = _check_text(source, "`source=` (the meaning representation)")
        cap = float(spec.get("cap", 0.2))
        for u, unit in enumerate(units):
            try:
                missing = missing_slots(unit, mr)
            except ValueError as exc:
                raise InputError(f"{dim.task} {dim.name} reads `source=` as a meaning representation: {exc}") from None
            if missing:
                results[u] = (min(results[u][0], cap), *results[u][1:])
                findings = [f"missing slot: {slot} is not stated" for slot in missing]
                supports[u] = {**(supports[u] or {}), "slots": [str(s) for s in missing], "findings": findings}

    def _read_discourse(self, cases: list, by_case: list[dict], per_case: list[dict]) -> None:
        import numpy as np
        from nlgeval_runtime.discourse import read_discourse
        from nlgeval_runtime.sentences import split_sentences

        from pytest_nlgeval.core.dimensions import _check_text

        readings = []
        for i, dim, spec in cases:
            _, units, _, _ = by_case[i][dim.name]
            source = _check_text(per_case[i]["source"], "`source=`")
            document = split_sentences(source)[:DISCOURSE_DOCUMENT_SENTENCES]
            readings.append((i, dim, spec, split_sentences(units[0]) or [units[0]], document))
        for folder in dict.fromkeys(spec["folder"] for _, _, spec, _, _ in readings):
            mine = [r for r in readings if r[2]["folder"] == folder]
            texts = list(dict.fromkeys(t for r in mine for t in r[3] + r[4]))
            vectors = dict(zip(texts, self._embedder(folder).embed(texts)))
            for i, dim, spec, sentences, document in mine:
                reading = read_discourse(
                    np.stack([vectors[t] for t in sentences]),
                    np.stack([vectors[t] for t in document]) if document else np.zeros((0, 1)),
                    repeat_from=float(spec.get("repeat_from", 0.6)),
                    order_floor=float(spec.get("order_floor", 0.0)),
                    topic_from=float(spec.get("topic_from", 0.0)),
                    topic_to=float(spec.get("topic_to", 0.0)),
                )
                _, units, results, supports = by_case[i][dim.name]
                head = max(0.0, results[0][0])
                results[0] = (head ** float(spec.get("head_power", 1.0)) * reading.factor, *results[0][1:])
                supports[0] = {
                    **(supports[0] or {}),
                    "discourse": reading.as_dict(),
                    "findings": reading.findings(sentences),
                }

    def _check_claims(self, claim_units: list, by_case: list[dict], per_case: list[dict]) -> None:
        """Each claim's final score from its head score, the explicit fact checks against its evidence, its
        lexical support and its form (:mod:`nlgeval_runtime.factcheck`); updates ``by_case`` in place.

        The evidence of a claim is the set of source units it was aligned with (its best supporting spans),
        or the whole source where it was scored against the source as a whole.
        """
        from nlgeval_runtime.factcheck import FactChecks

        fluency = self._as_served(self.registry.get("fluency", "summarization"))
        forms = self._scored_units([fluency] * len(claim_units), [fluency.input_text(c[3], {}) for c in claim_units])
        checks_of = {d.key: FactChecks.from_spec(self._served(d)["checks"]) for _, d, _, _, _ in claim_units}
        for (i, dim, u, claim, unit_windows), form in zip(claim_units, forms):
            _, body, _ = self._source_parts(dim, per_case[i])
            aligned = [w.text for w in unit_windows or [] if 1 <= w.last - w.first <= 2]  # sentences, pairs
            evidence = "\n".join(aligned) if aligned else body
            checks = checks_of[dim.key]
            _, units, results, supports = by_case[i][dim.name]
            head, truncated, n_tokens = results[u]
            verdict = checks.judge(claim, head=head, form=form[0], evidence=evidence, source=body)
            results[u] = (verdict.score, truncated, n_tokens)
            supports[u] = {**(supports[u] or {}), "claim": verdict.as_dict()}

    def score(
        self,
        output: str,
        dimension: str,
        *,
        source=None,
        reference=None,
        context=None,
        fact=None,
        task: str | None = None,
        question=None,
        contexts=None,
        recorder=None,
    ) -> Score:
        """Score one output; compare the returned :class:`Score` with a threshold to assert.

        ``question`` and ``contexts`` (the retrieved passages, a list) are the inputs of the rag task.

        ``recorder``: where the comparison is recorded (``assert_dimension`` hands in its run's); None, the
        default, means the evaluator's own (see :class:`Evaluator`).
        """
        __tracebackhide__ = hide_user_errors
        if contexts is not None:
            if context is not None:
                raise InputError("pass the retrieved passages once: contexts=[...] (or context=...), not both")
            if isinstance(contexts, str):
                raise InputError("contexts= is a list of retrieved passages; wrap a single passage: contexts=[text]")
            context = contexts
        values = {"source": source, "reference": reference, "context": context, "fact": fact, "question": question}
        per_case = [{k: v for k, v in values.items() if v is not None}]
        return self._evaluate([output], dimension, self._task(task), per_case, ["output"], self._recorder(recorder))[0]

    @staticmethod
    def samples(fn, *args, n: int = 5, **kwargs):
        """``fn(*args, **kwargs)`` called ``n`` times: :func:`pytest_nlgeval.core.sampling.samples`, offered on the
        ``nlgeval`` fixture (``nlgeval.samples(app, question, n=5)``)."""
        from pytest_nlgeval.core.sampling import samples

        return samples(fn, *args, n=n, **kwargs)

    def score_batch(self, outputs: Sequence[str], dimension: str, **inputs) -> list[float]:
        """Plain numbers for many outputs (one batched call); same arguments as :meth:`evaluate`."""
        __tracebackhide__ = hide_user_errors
        return [float(s) for s in self.evaluate(outputs, dimension, **inputs)]

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

    def _windows(self, plans, texts: list[str], per_case: list[dict]):
        """Per unit (in plan order): ``(windows or None, texts to score)``; None when no unit needs windows.

        A unit of a dimension that the model folder declares with ``source_units`` ``sentences`` or
        ``both`` is always aligned with its source's sentences (:func:`~pytest_nlgeval.core.windows.alignment_units`);
        otherwise windows are planned only for inputs longer than the model's maximum.
        """
        if not texts or self.source_windows == "off" or not any(dim.window for _, dim, _, _ in plans):
            return None  # (no texts: outputs that make no claim)
        windowed = {dim.key: dim for _, dim, _, _ in plans if dim.window}
        units_of = {key: self._served(dim).get("source_units", "windows") for key, dim in windowed.items()}
        aligned = any(mode != "windows" for mode in units_of.values())
        planner = self.window_planner
        # A token covers at least one byte of UTF-8, so a text with fewer bytes than the maximum (less the
        # special tokens) fits for sure and needs no tokenising: the common short input costs nothing here.
        room = planner.max_length - planner.special_tokens
        maybe_long = [k for k, t in enumerate(texts) if len(t) > room and len(t.encode("utf-8")) > room]
        # a text far past the whole-source cap is not tokenised at all (it is over any budget)
        over_cap = {k for k in maybe_long if len(texts[k].encode("utf-8")) > 8 * WHOLE_SOURCE_TOKENS and aligned}
        maybe_long = [k for k in maybe_long if k not in over_cap]
        if not maybe_long and not aligned:
            return None
        lengths = [0] * len(texts)
        for k, n in zip(maybe_long, planner.count([texts[k] for k in maybe_long])):
            lengths[k] = n
        for k in over_cap:
            lengths[k] = 8 * WHOLE_SOURCE_TOKENS + 1
        if max(lengths) <= planner.max_length and not aligned:
            return None
        out: list[tuple[list[Window] | None, list[str]] | None] = []
        k = 0
        for i, dim, units, unit_texts in plans:
            mode = units_of.get(dim.key, "windows")
            for unit, text in zip(units, unit_texts):
                n = lengths[k]
                k += 1
                if dim.window is None or (mode == "windows" and n <= planner.max_length):
                    out.append((None, [text]))
                    continue
                passage = None
                if mode == "both" and (n > WHOLE_SOURCE_TOKENS or len(text.encode("utf-8")) > 8 * WHOLE_SOURCE_TOKENS):
                    # Past the cap the whole source is not read window by window: each claim reads its
                    # aligned units, found lexically over all of it (a 2 MB context would be ~10,000 windows).
                    self._capped.add(len(out))
                elif mode != "sentences":
                    passage = (
                        self._unit_windows(dim, unit, per_case[i])
                        if n > planner.max_length
                        else ([Window(0, 1, 0, 0, self._source_parts(dim, per_case[i])[1])], [text])
                    )
                if mode == "windows":
                    out.append(passage)
                    continue
                windows, window_texts = self._alignment_windows(dim, unit, per_case[i])
                if passage is not None:
                    windows, window_texts = windows + passage[0], window_texts + passage[1]
                out.append((windows, window_texts))
        return out

    def _alignment_windows(self, dim: Dimension, unit: str, values: dict):
        """The unit's claim against its source's sentence units (see :func:`alignment_units`)."""
        from pytest_nlgeval.core.windows import alignment_units

        fields, body, tail = self._source_parts(dim, values)
        prefix_text = dim.input_text(unit, {**fields, _window_argument(dim): ""})
        planner = self.window_planner
        # a token covers at least one byte: a short prefix leaves room for sure and needs no tokenising
        if len(prefix_text.encode("utf-8")) + planner.special_tokens > self._room_limit():
            self._check_room(dim, unit, planner.count([prefix_text])[0])
        windows = alignment_units(unit, body, top=int(self._served(dim).get("top_units", 6)), tail=tail)
        return windows, [dim.input_text(unit, {**fields, _window_argument(dim): w.text}) for w in windows]

    @staticmethod
    def _source_parts(dim: Dimension, values: dict) -> tuple[dict, str, str]:
        """The prepared fields of a unit, and its source split into body and the tail every window keeps
        (the dialogue fact convention ends a fact with a line break)."""
        from pytest_nlgeval.core.dimensions import prepare_fields

        fields = prepare_fields(dim, values)
        source = fields[_window_argument(dim)]
        tail = "\n" if source.endswith("\n") else ""
        return fields, (source[:-1] if tail else source), tail

    def _room_limit(self) -> int:
        """The most tokens a unit and its question may take: room stays for a short sentence of the source."""
        limit = self.window_planner.max_length
        return limit - max(8, limit // 8)

    def _check_room(self, dim: Dimension, unit: str, prefix_tokens: int) -> None:
        """A unit must leave room for its source: scored without it, a claim would be judged on itself."""
        __tracebackhide__ = hide_user_errors
        if prefix_tokens > self._room_limit():
            raise InputError(
                f"a {dim.fields[0]} of {dim.name!r} takes {prefix_tokens} tokens with its question, and the model "
                f"reads {self.window_planner.max_length}: its `{dim.window}=` would not be read. Score shorter "
                f"units (split the output into sentences; one sentence starts {unit[:60]!r}...)"
            )

    def _unit_windows(self, dim: Dimension, unit: str, values: dict):
        planner = self.window_planner
        fields, body, tail = self._source_parts(dim, values)
        prefix = planner.count([dim.input_text(unit, {**fields, _window_argument(dim): ""})])[0]
        self._check_room(dim, unit, prefix)
        for _ in range(4):
            windows = planner.plan(prefix, body, tail)
            window_texts = [dim.input_text(unit, {**fields, _window_argument(dim): w.text}) for w in windows]
            over = max(n - planner.max_length for n in planner.count(window_texts))
            # The sentence counts are measured one sentence at a time; joined sentences can tokenise a
            # little longer. Shrink the budget by the overflow and plan again.
            if over <= 0 or all(w.last - w.first == 1 for w in windows):
                break
            prefix += over
        if self.max_windows is not None and len(windows) > self.max_windows:
            raise InputError(
                f"the `{dim.window}=` of {dim.name!r} needs {len(windows)} windows of the model's {planner.max_length} "
                f"tokens for each {dim.fields[0]}, more than the cap of {self.max_windows} "
                "(--nlgeval-max-windows / Evaluator(max_windows=...)); raise the cap, or pass the part of the "
                "source the output is about"
            )
        return windows, window_texts

    def _members(self, dimension: str, task: str) -> list[Dimension]:
        __tracebackhide__ = hide_user_errors
        if dimension == OVERALL:
            if task not in self.registry.tasks():
                from pytest_nlgeval.core.dimensions import DimensionError

                raise DimensionError(f"unknown task {task!r}; valid tasks: {', '.join(self.registry.tasks())}")
            members = self.registry.overall_members(task)
        else:
            members = [self.registry.get(dimension, task)]
        for dim in members:
            self._served(dim)
        return members

    def _as_served(self, dim: Dimension) -> Dimension:
        """``dim`` as the model reads it: with only the fields its declaration names (``fields``), e.g.
        a coherence question asked about the summary alone, and its ``unit`` (``whole`` or ``sentence``);
        unchanged without such a declaration."""
        spec = self._served(dim)
        fields, unit, aggregation = spec.get("fields"), spec.get("unit"), spec.get("aggregation")
        similarity = spec.get("scorer") == "similarity" and dim.window is not None
        if (
            (not fields or tuple(fields) == dim.fields)
            and (not unit or unit == dim.unit)
            and (not aggregation or aggregation == dim.aggregation)
            and not similarity
        ):
            return dim
        import dataclasses

        changes: dict = {}
        if similarity:
            changes["window"] = None  # a sentence encoder reads its texts whole (cut at its maximum length)
        if aggregation and aggregation != dim.aggregation:
            changes["aggregation"] = aggregation  # e.g. the weakest claim weighs in a fact score
        if unit and unit != dim.unit:
            changes["unit"] = unit  # e.g. fluency judged over the whole text, where repetition shows
        if fields and tuple(fields) != dim.fields:
            arguments = tuple(a for f, a in zip(dim.fields[1:], dim.arguments) if f in fields[1:])
            changes.update(
                fields=tuple(fields), arguments=arguments, window=dim.window if dim.window in arguments else None
            )
        return dataclasses.replace(dim, **changes)

    def _served(self, dim: Dimension) -> dict:
        """How the model answers ``dim`` (its ``dimensions.serves`` entry; ``{}`` for a folder without a
        declaration); raises :class:`DimensionNotServedError` for a dimension the model cannot judge."""
        __tracebackhide__ = hide_user_errors
        declared = self.folder.dimensions
        if declared is None:
            return {}
        spec = declared["serves"].get(dim.key)
        if spec is not None:
            return spec
        from pytest_nlgeval.core.dimensions import DimensionNotServedError, released_checkpoint

        refused = declared.get("refuses", {}).get(dim.key)
        use = (refused or {}).get("use") or released_checkpoint(dim.task)
        model = "the embedded default model" if self.model is None else f"model {self.model!r}"
        if refused is not None:
            why = refused["reason"]
        elif not dim.builtin:
            if declared.get("zero_shot"):
                return {}
            why = (
                "it answers only the questions it was trained on, not custom zero-shot questions "
                f"(it serves: {', '.join(sorted(declared['serves']))})"
            )
        else:
            why = f"its model folder does not declare {dim.key} among the dimensions it serves"
        raise DimensionNotServedError(
            f"{model} cannot judge {dim.key}: {why}. Score it with a checkpoint that can, e.g. "
            f"--nlgeval-model {use} (or Evaluator(model={use!r})); `nlgeval probe MODEL` checks that a "
            "model's dimensions react to damaged text."
        )

    def close(self) -> None:
        """Release the model session and close the cache's connection (a shared cache reopens on next use)."""
        if self.cache is not None:
            self.cache.close()
        self._scorer = None
        self._graph_scorers.clear()


#: the most an evasive answer scores on a dimension declared with ``evasive`` (rag answer relevance)
EVASIVE_CAP = 0.2
#: the claims of one output that a fact dimension reads at most (about a minute on 2 CPU cores for a long
#: article); the rest are not scored, and the score's details and explanation say so
MAX_CLAIMS = 200
#: outputs per part of a long batch that draws its progress
PROGRESS_PART = 64
#: the longest source (tokens, with the claim and question) that a claim of a ``both`` dimension also reads
#: whole, window by window; past it, each claim reads only its aligned units, found over the whole source
WHOLE_SOURCE_TOKENS = 4096
#: the document sentences a coherence reading places summary sentences among (the lead of a long source)
DISCOURSE_DOCUMENT_SENTENCES = 200


def _check_against_fact(dim: Dimension, spec: dict, parts: dict, values: dict) -> None:
    """The explicit fact checks of a reply's claims against the knowledge it is grounded in (dialogue
    groundedness): a claim about the fact (sharing two of its content words, or half of a short claim's)
    that states another date, weekday, number, name or role than the fact caps the reply at ``cap``.
    Names and days may also come from the dialogue history ("the parcel you ordered on Monday").
    Updates ``parts`` in place."""
    from nlgeval_runtime.claims import content_words, split_claims, words
    from nlgeval_runtime.factcheck import check_claim

    fact = values.get(spec.get("against", "fact"))
    if not isinstance(fact, str) and isinstance(fact, (list, tuple)):
        fact = "\n".join(str(f) for f in fact)
    if not isinstance(fact, str) or not fact.strip():
        return
    history = values.get("context")
    if isinstance(history, (list, tuple)):
        history = "\n".join(str(t) for t in history)
    known = fact + ("\n" + history if isinstance(history, str) else "")
    fact_words = set(words(fact))
    cap = float(spec.get("cap", 0.2))
    _, units, results, supports = parts[dim.name]
    for u, unit in enumerate(units):
        findings: list = []
        for claim in split_claims(unit)[0]:
            mine = set(content_words(claim))
            need = 2 if len(mine) >= 4 else max(1, len(mine) // 2)
            if not mine or len(mine & fact_words) < need:
                continue  # small talk beside the fact: not a statement about it
            findings.extend(m for m in check_claim(claim, fact, known) if m.kind != "negation" or len(mine) >= 3)
        if findings:
            results[u] = (min(results[u][0], cap), *results[u][1:])
            supports[u] = {**(supports[u] or {}), "claim": {"mismatches": [m.as_dict() for m in findings]}}


def _evasive(text: str) -> bool:
    from nlgeval_runtime.claims import is_evasive

    return is_evasive(text)


#: separates the parts of a similarity dimension's cache key (never in user text: a control character)
_PAIR = "\x1f"


def _similarity_keys(dim: Dimension, units: list[str], values: dict) -> list[str]:
    """Cache keys of a similarity dimension's units: the question asked, the unit, the text it is compared
    with (the dimension's first field after the output, e.g. the question)."""
    from pytest_nlgeval.core.dimensions import prepare_fields

    other = prepare_fields(dim, values)[dim.arguments[0]]
    return [_pair_key(dim, unit, other) for unit in units]


def _pair_key(dim: Dimension, unit: str, other: str) -> str:
    """The cache key of one (unit, other text) pair of a sentence-encoder dimension; :meth:`Evaluator.similarities`
    splits it back into the two texts."""
    return f"similarity {dim.question}{_PAIR}{unit.strip()}{_PAIR}{other.strip()}"


def _calibrated(calibration: dict, cosine: float, key: str | None = None) -> float:
    """sigmoid(scale * cosine + offset [+ lexical * share of the unit's content words in the other text]): a
    cosine on the relevance scale (the folder's declaration; ``key`` is the pair, see :func:`_similarity_keys`)."""
    return _sigmoid(_log_odds(calibration, cosine, key))


def _log_odds(calibration: dict, cosine: float, key: str | None = None) -> float:
    z = float(calibration["scale"]) * cosine + float(calibration["offset"])
    if calibration.get("lexical") and key is not None:
        from nlgeval_runtime.factcheck import lexical_support

        _, unit, other = key.split(_PAIR, 2)
        z += float(calibration["lexical"]) * lexical_support(unit, other)
    return z


def _sigmoid(z: float) -> float:
    import math

    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


def _per_case_values(n: int, **pairs) -> list[dict[str, Any]]:
    """Per-case argument dicts from ``name=(list_or_None, shared_or_None)`` pairs."""
    __tracebackhide__ = hide_user_errors
    cases: list[dict[str, Any]] = [dict() for _ in range(n)]
    for plural, (many, one) in pairs.items():
        argument = plural[:-1]
        if many is not None and one is not None:
            raise InputError(f"pass either {plural}=[...] (one per output) or {argument}=... (shared), not both")
        if many is not None:
            if isinstance(many, str) or not isinstance(many, Sequence):
                raise InputError(
                    f"{plural}= must be a list with one entry per output; for one shared value use {argument}=..."
                )
            if len(many) != n:
                hint = ""
                if plural == "contexts" and all(isinstance(v, str) for v in many):
                    hint = (
                        f"; if these {len(many)} passages are retrieved contexts shared by every output, pass "
                        "context=[...] instead (contexts=[[...], ...] holds one list of passages per output)"
                    )
                raise InputError(f"{plural}= has {len(many)} entries but there are {n} outputs{hint}")
            for case, value in zip(cases, many):
                case[argument] = value
        elif one is not None:
            for case in cases:
                case[argument] = one
    return cases


def _aggregate(dim: Dimension, unit_scores: list[float]) -> float:
    if not unit_scores:
        return 1.0  # only a claim unit can be empty: an output that asserts nothing contradicts nothing
    if dim.aggregation == "sum":
        return float(sum(unit_scores))
    mean = float(sum(unit_scores) / len(unit_scores))
    if dim.aggregation == "min":
        return float(min(unit_scores))
    if dim.aggregation == "mean_min":
        return (mean + float(min(unit_scores))) / 2
    return mean


def _combine(dim: Dimension, scored: list[tuple[float, bool, int]]) -> tuple[float, bool, int]:
    """One unit's ``(score, truncated, tokens)`` from the scores of its source windows."""
    values = [r[0] for r in scored]
    value = max(values) if dim.window_aggregation == "max" else sum(values) / len(values)
    return value, any(r[1] for r in scored), max(r[2] for r in scored)


def _support(dim: Dimension, windows, scored) -> dict | None:
    """The window that decided a unit's score (the best one under ``max``), for the failure message."""
    if windows is None:
        return None
    best = max(range(len(scored)), key=lambda k: scored[k][0])
    return {**windows[best].describe(scored[best][0]), "aggregation": dim.window_aggregation}


def _window_argument(dim: Dimension) -> str:
    """The argument a windowed dimension splits; only dimensions with one reach the window paths."""
    if dim.window is None:  # pragma: no cover - guarded by every caller
        raise DimensionError(f"dimension {dim.key!r} has no source argument to split into windows")
    return dim.window


def _make_score(
    name: str, task: str, parts: dict[str, tuple], inputs: dict, fid: str, fingerprint: dict, recorder=None
) -> Score:
    components = {}
    details: dict[str, Any] = {
        "inputs": _jsonable_inputs(inputs),
        "truncated": False,
        "source_windows": fingerprint.get("source_windows", "off"),
    }
    for dim_name, (dim, units, results, supports) in parts.items():
        unit_scores = [r[0] for r in results]
        components[dim_name] = _aggregate(dim, unit_scores)
        details["truncated"] = details["truncated"] or any(r[1] for r in results)
        windowed = [w for w in supports if w is not None]
        if len(parts) == 1:
            details["aggregation"] = dim.aggregation
            details["unit"] = dim.unit
            if dim.unit != "whole":
                details["units"] = [
                    {"text": u, "score": s, **({"window": supports[k]} if supports[k] else {})}
                    for k, (u, s) in enumerate(zip(units, unit_scores))
                ]
            elif windowed:
                details["window"] = supports[0]
        elif windowed:
            details.setdefault("windows", {})[dim_name] = windowed
    if len(parts) == 1:
        value = next(iter(components.values()))
        explain = None
    else:
        # overall = mean of the evaluated dimensions (UniEval), engagingness sum included as it is.
        value = sum(components.values()) / len(components)
        details["components"] = components

        def explain(score, op, threshold, components=components):
            return ["mean of: " + ", ".join(f"{k} {v:.4f}" for k, v in components.items())]

    return Score(
        value,
        name=name,
        kind="dimension",
        task=task,
        details=details,
        evaluator_id=fid,
        evaluator_fingerprint=fingerprint,
        explain=explain,
        recorder=recorder,
    )


def _jsonable_inputs(inputs: dict) -> dict:
    out = {}
    for key, value in inputs.items():
        out[key] = list(value) if isinstance(value, (list, tuple)) else value
    return out
