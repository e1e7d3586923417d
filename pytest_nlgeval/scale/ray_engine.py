"""Scoring on a Ray cluster: an evaluator's cache misses go out as Ray Data batches, one ONNX Runtime
session per actor.

    nlgeval score outputs.jsonl -d consistency --engine ray --ray-address auto --ray-workers 8
    nlgeval meta-eval summeval.jsonl --model default --engine ray --ray-address auto

    >>> ev = RayEvaluator("models/unieval-sum", device="cpu", workers=4, address="auto")   # doctest: +SKIP
    >>> ev.score_batch(outputs, "consistency", sources=articles)                           # doctest: +SKIP

Results are identical to the local path. The driver tokenises the misses and plans the length-sorted batches
exactly as the local scorer does (same token budget, same batch size, one input per batch for a dynamically
quantised graph); each planned batch is one row of a Ray Dataset, and an actor scores it as one ONNX Runtime
call, so every input runs with the same padding and the same batch-mates as on one machine. The score cache,
the fingerprint and the source windows stay the :class:`~pytest_nlgeval.core.evaluator.Evaluator`'s own: only
misses leave the driver, and they are cached when they come back.

The model folder is shipped once: the driver puts the files the chosen precision reads (and the manifest) into
Ray's object store a single time; each actor writes them to a folder on its node named by their hashes, so the
actors of one node share one copy. Every actor checks that its session has the driver's fingerprint (same
files, provider, precision, runtime version) and refuses to score otherwise.

Every dimension goes to the cluster: the sub-folder models a folder routes dimensions to (the embedded model's
``text/``) each get their own actors, and so does the sentence encoder of the similarity dimensions
(``embed/``), whose texts are embedded in the chunks the local encoder would form (length-sorted, 32 at a
time), so that a dynamically quantised encoder sees the same batch-mates.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

from pytest_nlgeval.core.evaluator import Evaluator
from pytest_nlgeval.errors import UsageError
from pytest_nlgeval.util.extras import MissingExtraError

__all__ = [
    "RayEvaluator",
    "RayBoolQAScorer",
    "RayEmbedder",
    "RayScoringError",
    "RayUnavailable",
    "require_ray",
    "connect",
    "ship_folder",
    "materialise",
]


class RayUnavailable(MissingExtraError):
    """Ray is not installed; scoring on Ray needs the optional extra ``ray``."""


class RayScoringError(UsageError):
    """Scoring on the Ray cluster failed; the message says where and what to change (the command line prints
    it without a traceback)."""


def require_ray():
    """Import and return :mod:`ray`, or raise :class:`RayUnavailable` saying how to install it."""
    try:
        import ray
        import ray.data  # noqa: F401  (the data extra: pyarrow, pandas)
    except ImportError as exc:
        raise RayUnavailable(
            "scoring on Ray (Ray Data)",
            getattr(exc, "name", None) or "ray",
            "ray",
            "ray[data]",
            f"{exc}; install it on the driver and on every node of the cluster",
        ) from None
    return ray


def connect(address: str | None = None) -> bool:
    """Join the Ray cluster at ``address`` (``None``: ``$RAY_ADDRESS``, else a new local cluster) unless Ray is
    initialised already; True when this call initialised it."""
    ray = require_ray()
    if ray.is_initialized():
        return False
    try:
        ray.init(address=address, include_dashboard=False, logging_level="WARNING")
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = address or os.environ.get("RAY_ADDRESS") or "a new local cluster"
        raise RayScoringError(
            f"cannot connect to the Ray cluster at {where}: {' '.join(str(exc).split())[:300]}; "
            "start one with `ray start --head` or check --ray-address"
        ) from None
    return True


# -- the model folder, shipped once ------------------------------------------------------------------------


def ship_folder(folder, precision: str) -> dict[str, Any]:
    """The bytes an actor needs to open ``folder`` at ``precision``: the manifest and the files it reads.

    ``digest`` names the payload by content, so a node that already holds it writes nothing.
    """
    from nlgeval_runtime.modelfolder import MANIFEST

    names = sorted(folder.files_for(precision))
    # the manifests of the sub-folders the declaration routes dimensions to: they are part of the folder's
    # fingerprint (each sub-folder's own graph travels with its own scorer)
    names += [f"{sub}/{MANIFEST}" for sub in folder.subfolders if (folder.path / sub / MANIFEST).is_file()]
    manifest = (folder.path / MANIFEST).read_bytes()
    digest = hashlib.sha256(manifest + "\n".join(names).encode()).hexdigest()[:24]
    return {"digest": digest, "manifest": manifest, "files": {n: (folder.path / n).read_bytes() for n in names}}


def materialise(payload: dict[str, Any], root: str | os.PathLike | None = None) -> Path:
    """Write a shipped folder under ``root`` (default ``$NLGEVAL_RAY_MODEL_DIR`` or the temp dir) once per node.

    Concurrent actors each write a private copy and rename it into place; the first rename wins and the
    others discard theirs.
    """
    from nlgeval_runtime.modelfolder import MANIFEST

    base = Path(root or os.environ.get("NLGEVAL_RAY_MODEL_DIR") or tempfile.gettempdir()) / "nlgeval-ray-models"
    target = base / payload["digest"]
    if (target / MANIFEST).is_file():
        return target
    base.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{payload['digest']}-", dir=base))
    for name, blob in payload["files"].items():
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_bytes(blob)
    (tmp / MANIFEST).write_bytes(payload["manifest"])  # last: its presence marks a complete folder
    try:
        os.rename(tmp, target)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)  # another actor on this node was first
        if not (target / MANIFEST).is_file():
            raise
    return target


# -- the actor ------------------------------------------------------------------------------------------------


class _BatchScorer:
    """A Ray Data callable class: each actor opens the shipped folder once and keeps one session."""

    def __init__(
        self,
        shipped: list,
        model_ref: str,
        device: str,
        precision: str,
        threads: int | None,
        batch_tokens: int,
        max_batch_size: int,
        fingerprint_id: str,
    ) -> None:
        import socket

        import ray
        from nlgeval_runtime.boolqa import BoolQAScorer
        from nlgeval_runtime.modelfolder import ModelFolder
        from nlgeval_runtime.session import create_session, verify_for

        # The reference travels inside a list so that Ray hands it over unresolved; it is fetched here, once.
        payload = ray.get(shipped[0])
        folder = ModelFolder.open(materialise(payload))
        verify_for(folder, device, precision)
        session = create_session(folder, device=device, precision=precision, threads=threads)
        self.scorer = BoolQAScorer(
            folder, session, model_ref=model_ref, batch_tokens=batch_tokens, max_batch_size=max_batch_size
        )
        self.worker = f"{socket.gethostname()}:{os.getpid()}"
        if self.scorer.fingerprint_id != fingerprint_id:
            raise RayScoringError(
                f"worker {self.worker} runs the evaluator as {self.scorer.fingerprint_id} "
                f"({self.scorer.provider}, {self.scorer.precision}) but the driver planned {fingerprint_id}; "
                "install the same nlgeval-runtime and onnxruntime build on every node, or pass --device explicitly"
            )

    def __call__(self, batch: dict) -> dict:
        import numpy as np

        indices: list[int] = []
        scores: list[float] = []
        for group_indices, group_texts in zip(batch["indices"], batch["texts"]):
            result = self.scorer.score([str(t) for t in group_texts])
            indices.extend(int(i) for i in group_indices)
            scores.extend(float(s) for s in result.scores)
        return {
            "index": np.asarray(indices, dtype=np.int64),
            "score": np.asarray(scores, dtype=np.float64),
            "worker": np.asarray([self.worker] * len(indices), dtype=object),
        }


class _BatchEmbedder:
    """A Ray Data callable class: each actor opens the shipped sentence encoder once; a row is one chunk the
    local encoder would embed in one session call."""

    def __init__(self, shipped: list, model_ref: str, device: str, precision: str, threads: int | None,
                 fingerprint_id: str) -> None:  # fmt: skip
        import socket

        import ray
        from nlgeval_runtime.embedding import SentenceEmbedder
        from nlgeval_runtime.modelfolder import ModelFolder
        from nlgeval_runtime.session import create_session, verify_for

        payload = ray.get(shipped[0])
        folder = ModelFolder.open(materialise(payload))
        verify_for(folder, device, precision)
        session = create_session(folder, device=device, precision=precision, threads=threads)
        self.embedder = SentenceEmbedder(folder, session, model_ref=model_ref)
        self.worker = f"{socket.gethostname()}:{os.getpid()}"
        if self.embedder.fingerprint_id != fingerprint_id:
            raise RayScoringError(
                f"worker {self.worker} runs the sentence encoder as {self.embedder.fingerprint_id} but the driver "
                f"planned {fingerprint_id}; install the same nlgeval-runtime and onnxruntime build on every node"
            )

    def __call__(self, batch: dict) -> dict:
        import numpy as np

        indices: list[int] = []
        vectors: list = []
        for chunk_indices, chunk_texts in zip(batch["indices"], batch["texts"]):
            rows = self.embedder.embed([str(t) for t in chunk_texts])
            indices.extend(int(i) for i in chunk_indices)
            vectors.extend(np.asarray(r, dtype=np.float32) for r in rows)
        return {
            "index": np.asarray(indices, dtype=np.int64),
            "vector": np.stack(vectors) if vectors else np.zeros((0, 0), np.float32),
            "worker": np.asarray([self.worker] * len(indices), dtype=object),
        }


def _run_on_actors(rows: list[dict], actor, kwargs: dict, *, workers: int, threads: int | None, device: str,
                   groups_per_task: int):  # fmt: skip
    """Map ``rows`` (planned groups of inputs) over a pool of ``workers`` ``actor``s; yields their batches."""
    ray = require_ray()
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False  # one line of our own instead of Ray's operator bars
    dataset = ray.data.from_items(rows, override_num_blocks=max(1, min(len(rows), workers * 4)))
    remote = {"num_gpus": 1} if device == "cuda" else {"num_cpus": max(1, threads or 1)}
    mapped = dataset.map_batches(
        actor,
        batch_size=groups_per_task,
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=workers),
        fn_constructor_kwargs=kwargs,
        **remote,
    )
    try:
        yield from mapped.iter_batches(batch_size=None, batch_format="numpy")
    except Exception as exc:  # Ray wraps a worker's exception in its own error types
        raise RayScoringError(f"scoring on Ray failed: {_cause(exc)}") from exc


def _default_workers(threads: int | None) -> int:
    ray = require_ray()
    cpus = int(ray.cluster_resources().get("CPU", 1))
    return max(1, cpus // max(1, threads or 1))


# -- the driver's scorer -------------------------------------------------------------------------------------


class _Progress:
    """One line on stderr, rewritten: inputs scored, rate, workers."""

    def __init__(self, total: int, workers: int, stream=None) -> None:
        self.total, self.workers = total, workers
        self.stream = stream or sys.stderr
        self.start = time.monotonic()
        self.done = 0

    def update(self, n: int) -> None:
        self.done += n
        seconds = max(time.monotonic() - self.start, 1e-9)
        print(
            f"\r[{seconds:6.1f}s] Ray: {self.done}/{self.total} inputs scored "
            f"({self.done / seconds:.1f}/s on {self.workers} workers)",
            end="",
            file=self.stream,
            flush=True,
        )

    def close(self) -> None:
        print(file=self.stream, flush=True)


class RayBoolQAScorer:
    """Scores Boolean-QA input texts on a Ray cluster; a drop-in for the runtime's ``BoolQAScorer``.

    ``address``: the cluster (``"auto"``, ``"ray://head:10001"``, ...); when Ray is not initialised yet and
    no address is given, a local cluster is started (and stopped by :meth:`close`). ``workers``: actors, each
    with one session of ``threads`` intra-op threads (default: every CPU of the cluster, one thread each).
    ``groups_per_task``: planned batches per Ray Data batch.
    """

    def __init__(
        self,
        folder,
        model_ref: str,
        *,
        device: str = "cpu",
        precision: str = "auto",
        threads: int | None = None,
        batch_tokens: int = 16384,
        max_batch_size: int = 64,
        address: str | None = None,
        workers: int | None = None,
        groups_per_task: int = 4,
        progress: bool = True,
    ) -> None:
        from nlgeval_runtime.fingerprint import fingerprint_id, planned_fingerprint
        from nlgeval_runtime.tokenize import TextEncoder

        ray = require_ray()
        planned = planned_fingerprint(folder, model_ref, device=device, precision=precision)
        if planned is None:
            raise RayScoringError(
                "device 'auto' cannot be planned on this driver (its onnxruntime lists CUDA), so the workers "
                "could pick different providers; pass --device cpu or --device cuda with --engine ray"
            )
        if groups_per_task < 1:
            raise ValueError(f"groups_per_task must be >= 1, got {groups_per_task}")
        self.folder = folder
        self.model_ref = model_ref
        self.device = "cuda" if planned["provider"].startswith("CUDA") else "cpu"
        self.precision = planned["precision"]
        self.fingerprint = planned
        self.fingerprint_id = fingerprint_id(planned)
        self.provider = planned["provider"]
        self.batch_tokens = int(batch_tokens)
        self.batch_invariant = folder.batch_invariant(self.precision)
        # The local scorer runs dynamically quantised graphs one input at a time; so does the plan here.
        self.max_batch_size = int(max_batch_size) if self.batch_invariant else 1
        conventions = folder.input_conventions
        self.encoder = TextEncoder(
            folder.tokenizer_path,
            separator=conventions["separator"],
            separator_token=conventions["separator_token"],
            max_length=conventions["max_length"],
        )
        self._owns_ray = connect(address)
        # Each actor reserves this many CPUs and its session uses as many intra-op threads (default 1), so the
        # actors of a node do not oversubscribe its cores.
        self.threads = threads
        if workers is None:
            workers = _default_workers(threads)
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self.workers = int(workers)
        self.sessions = self.workers
        self.groups_per_task = int(groups_per_task)
        self.progress = progress
        self._shipped = ray.put(ship_folder(folder, self.precision))
        #: figures of the last :meth:`score` call: inputs, seconds, inputs per worker
        self.last_run: dict[str, Any] = {}

    max_length = property(lambda self: self.encoder.max_length)
    separator = property(lambda self: self.encoder.separator)

    def plan(self, texts: Sequence[str]):
        """``(encoded, batches)``: the batches of input indices the local scorer would run."""
        import numpy as np
        from nlgeval_runtime.tokenize import plan_batches

        encoded = self.encoder.encode(list(texts))
        lengths = np.array([r.size for r in encoded.ids], dtype=np.int64)
        return encoded, plan_batches(lengths, batch_tokens=self.batch_tokens, max_batch_size=self.max_batch_size)

    def score(self, texts: Sequence[str], *, progress=None):
        """Score ``texts`` on the cluster; a ``BoolQAResult`` in input order, as the local scorer returns."""
        import numpy as np
        from nlgeval_runtime.boolqa import BoolQAResult

        texts = list(texts)
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"texts[{i}] is {type(text).__name__}, expected str")
        scores = np.full(len(texts), np.nan, dtype=np.float64)
        if not texts:
            return BoolQAResult(scores, np.zeros(0, bool), np.zeros(0, np.int64))
        encoded, batches = self.plan(texts)
        rows = [{"indices": [int(i) for i in b], "texts": [texts[int(i)] for i in b]} for b in batches]
        kwargs = {
            "shipped": [self._shipped],
            "model_ref": self.model_ref,
            "device": self.device,
            "precision": self.precision,
            "threads": self.threads or 1,
            "batch_tokens": self.batch_tokens,
            "max_batch_size": self.max_batch_size,
            "fingerprint_id": self.fingerprint_id,
        }
        bar = _Progress(len(texts), self.workers) if self.progress else None
        per_worker: Counter = Counter()
        started = time.monotonic()
        try:
            for batch in _run_on_actors(
                rows, _BatchScorer, kwargs, workers=self.workers, threads=self.threads, device=self.device,
                groups_per_task=self.groups_per_task,
            ):  # fmt: skip
                idx = batch["index"]
                scores[idx] = batch["score"]
                per_worker.update(str(w) for w in batch["worker"])
                if bar is not None:
                    bar.update(len(idx))
                if progress is not None:
                    progress(int(sum(per_worker.values())), len(texts))
        finally:
            if bar is not None:
                bar.close()
        seconds = time.monotonic() - started
        missing = int(np.isnan(scores).sum())
        if missing:
            raise RayScoringError(f"{missing} of {len(texts)} inputs came back unscored from the Ray workers")
        self.last_run = {
            "inputs": len(texts),
            "batches": len(batches),
            "seconds": seconds,
            "workers": self.workers,
            "per_worker": dict(per_worker),
        }
        return BoolQAResult(scores, encoded.truncated, encoded.n_tokens)

    def close(self) -> None:
        if self._owns_ray:
            import ray

            ray.shutdown()
            self._owns_ray = False


class RayEmbedder:
    """Embeds texts on a Ray cluster with a sentence-encoder folder; a drop-in for the runtime's
    ``SentenceEmbedder`` (same vectors: the driver forms the chunks the local encoder would)."""

    def __init__(
        self,
        folder,
        model_ref: str,
        *,
        device: str = "cpu",
        precision: str = "auto",
        threads: int | None = None,
        address: str | None = None,
        workers: int | None = None,
        groups_per_task: int = 4,
        max_batch: int = 32,
    ) -> None:
        from nlgeval_runtime.fingerprint import fingerprint_id, planned_fingerprint
        from tokenizers import Tokenizer

        ray = require_ray()
        planned = planned_fingerprint(folder, model_ref, device=device, precision=precision)
        if planned is None:
            raise RayScoringError(
                "device 'auto' cannot be planned on this driver (its onnxruntime lists CUDA); pass --device cpu "
                "or --device cuda with --engine ray"
            )
        self.folder, self.model_ref = folder, model_ref
        self.device = "cuda" if planned["provider"].startswith("CUDA") else "cpu"
        self.precision = planned["precision"]
        self.fingerprint_id = fingerprint_id(planned)
        self.threads = threads
        self.max_batch = int(max_batch)
        self.groups_per_task = int(groups_per_task)
        self.tokenizer = Tokenizer.from_file(str(folder.tokenizer_path))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(int(folder.input_conventions["max_length"]))
        self._owns_ray = connect(address)
        self.workers = int(workers) if workers is not None else _default_workers(threads)
        if self.workers < 1:
            raise ValueError(f"workers must be >= 1, got {self.workers}")
        self._shipped = ray.put(ship_folder(folder, self.precision))

    def embed(self, texts: Sequence[str]):
        """Unit vectors of ``texts`` (float32, one row per text, input order), as the local encoder gives."""
        import numpy as np

        texts = list(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        lengths = [len(e.ids) for e in self.tokenizer.encode_batch(texts)]
        order = sorted(range(len(texts)), key=lambda k: lengths[k])  # the local encoder's order and chunks
        chunks = [order[i : i + self.max_batch] for i in range(0, len(order), self.max_batch)]
        rows = [{"indices": chunk, "texts": [texts[k] for k in chunk]} for chunk in chunks]
        kwargs = {
            "shipped": [self._shipped],
            "model_ref": self.model_ref,
            "device": self.device,
            "precision": self.precision,
            "threads": self.threads or 1,
            "fingerprint_id": self.fingerprint_id,
        }
        out: list = [None] * len(texts)
        for batch in _run_on_actors(
            rows, _BatchEmbedder, kwargs, workers=self.workers, threads=self.threads, device=self.device,
            groups_per_task=self.groups_per_task,
        ):  # fmt: skip
            for k, vector in zip(batch["index"], batch["vector"]):
                out[int(k)] = np.asarray(vector, dtype=np.float32)
        missing = sum(1 for v in out if v is None)
        if missing:
            raise RayScoringError(f"{missing} of {len(texts)} texts came back unembedded from the Ray workers")
        return np.stack(out)

    def close(self) -> None:
        if self._owns_ray:
            import ray

            ray.shutdown()
            self._owns_ray = False


def _cause(exc: BaseException) -> str:
    """The innermost message of a Ray error chain (the worker's own exception), on one line."""
    seen: Any = exc
    while getattr(seen, "cause", None) is not None and seen.cause is not seen:
        seen = seen.cause
    text = " ".join(str(seen).split())
    return text[-600:]


class RayEvaluator(Evaluator):
    """An :class:`~pytest_nlgeval.core.evaluator.Evaluator` whose cache misses are scored on Ray.

    Takes the Evaluator's arguments plus ``address``, ``workers``, ``groups_per_task`` and ``progress``
    (see :class:`RayBoolQAScorer`). ``device`` defaults to ``cpu`` here: every worker must run the provider
    the driver plans.
    """

    def __init__(
        self,
        model=None,
        *,
        address: str | None = None,
        workers: int | None = None,
        groups_per_task: int = 4,
        progress: bool = True,
        device: str = "cpu",
        **options,
    ) -> None:
        require_ray()
        super().__init__(model, device=device, **options)
        self.address = address
        self.workers = workers
        self.groups_per_task = groups_per_task
        self.ray_progress = progress  # its own line of Ray progress (Evaluator.progress is a stream)

    def __repr__(self) -> str:
        return super().__repr__()[:-1] + f", engine='ray', address={self.address!r}, workers={self.workers!r})"

    @property
    def scorer(self):
        """The Ray scorer; created (cluster connection, shipped folder) on the first cache miss."""
        if self._scorer is None:
            kwargs = {} if self.batch_size is None else {"max_batch_size": self.batch_size}
            self._scorer = RayBoolQAScorer(
                self.folder,
                self.model_ref,
                device=self.device,
                precision=self.precision,
                threads=self.threads,
                address=self.address,
                workers=self.workers,
                groups_per_task=self.groups_per_task,
                progress=self.ray_progress,
                **kwargs,
            )
            self.stats["sessions"] += self._scorer.sessions
            # The planned fingerprint, which every actor checks its session against.
            self._adopt(self._scorer.fingerprint)
            if self.cache is not None:
                self.cache.put_meta(self._request_key(), {"fingerprint": dict(self._scorer.fingerprint)})
        return self._scorer

    def _graph_scorer(self, graph: str):
        """The Ray scorer of the sub-folder model ``graph`` (the dimensions the folder routes to it)."""
        if graph not in self._graph_scorers:
            from nlgeval_runtime.modelfolder import ModelFolder

            self.scorer  # the main scorer joins (or starts) the cluster and fixes the fingerprint first
            kwargs = {} if self.batch_size is None else {"max_batch_size": self.batch_size}
            self._graph_scorers[graph] = RayBoolQAScorer(
                ModelFolder.open(self.folder.path / graph),
                str(self.folder.path / graph),
                device=self.device,
                precision=self.precision,
                threads=self.threads,
                address=self.address,
                workers=self.workers,
                groups_per_task=self.groups_per_task,
                progress=self.ray_progress,
                **kwargs,
            )
            self.stats["sessions"] += self._graph_scorers[graph].sessions
        return self._graph_scorers[graph]

    def _embedder(self, folder: str):
        """The sentence encoder of the sub-folder ``folder``, run on Ray."""
        key = ("embedding", folder)
        if key not in self._graph_scorers:
            from nlgeval_runtime.modelfolder import ModelFolder

            self.scorer  # joins (or starts) the cluster first, so that the main scorer owns it
            self._graph_scorers[key] = RayEmbedder(
                ModelFolder.open(self.folder.path / folder),
                str(self.folder.path / folder),
                device=self.device,
                precision=self.precision,
                threads=self.threads,
                address=self.address,
                workers=self.workers,
                groups_per_task=self.groups_per_task,
            )
            self.stats["sessions"] += self._graph_scorers[key].workers
        return self._graph_scorers[key]

    def close(self) -> None:
        for scorer in list(self._graph_scorers.values()):  # before the main scorer, which may own the cluster
            scorer.close()
        self._graph_scorers.clear()
        if self._scorer is not None:
            self._scorer.close()
        super().close()
