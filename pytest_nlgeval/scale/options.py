"""The ``--engine`` options that ``nlgeval score`` and ``nlgeval meta-eval`` share (imports nothing heavy).

nlgeval score outputs.jsonl -d fluency --engine ray --ray-address auto --ray-workers 8
"""

from __future__ import annotations

from typing import Any

ENGINES = ("local", "ray")
RAY_CHUNK = 1_000_000  # rows per scoring call of `nlgeval score` under --engine ray


def add_engine_arguments(parser) -> None:
    """Register ``--engine``, ``--ray-address`` and ``--ray-workers`` on a subcommand's parser."""
    g = parser.add_argument_group("scoring beyond one machine (--engine ray needs pytest-nlgeval[ray])")
    g.add_argument(
        "--engine",
        choices=ENGINES,
        default="local",
        help="local: one ONNX Runtime session here (default); ray: cache misses scored as Ray Data "
        "batches, one session per actor",
    )
    g.add_argument(
        "--ray-address",
        default=None,
        metavar="ADDRESS",
        help="Ray cluster to join ('auto', 'ray://head:10001', ...); default: $RAY_ADDRESS, else a "
        "local cluster started for the run",
    )
    g.add_argument(
        "--ray-workers",
        type=int,
        default=None,
        metavar="N",
        help="Ray actors, one model session each (default: one per CPU of the cluster)",
    )


def evaluator_factory(args) -> tuple[Any, dict[str, Any]]:
    """``(Evaluator class, extra keyword arguments)`` for the engine the command line asked for."""
    from pytest_nlgeval.errors import UsageError

    engine = getattr(args, "engine", "local")
    if engine == "local":
        if getattr(args, "ray_address", None) or getattr(args, "ray_workers", None):
            raise UsageError("--ray-address and --ray-workers need --engine ray")
        import sys

        from pytest_nlgeval.core.evaluator import Evaluator

        return Evaluator, {"progress": sys.stderr}  # long batches draw their progress on standard error
    if args.ray_workers is not None and args.ray_workers < 1:
        raise UsageError(f"--ray-workers must be >= 1, got {args.ray_workers}")
    from pytest_nlgeval.scale.ray_engine import RayEvaluator, RayUnavailable, connect, require_ray

    try:
        require_ray()
    except RayUnavailable as exc:
        raise UsageError(str(exc)) from None
    # One connection for the whole command (meta-eval builds an evaluator per model and window mode); a local
    # cluster started here ends with the process.
    connect(args.ray_address)
    if getattr(args, "chunk", None) is not None:
        # Every scoring call is one Ray job that starts its actors and their sessions; score a file in one call
        # per dimension (the Ray progress line replaces the chunk progress).
        args.chunk = max(args.chunk, RAY_CHUNK)
    return RayEvaluator, {"address": args.ray_address, "workers": args.ray_workers}
