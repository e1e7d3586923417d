"""``nlgeval induce``: induce a metric from human labels and write its artifact and report card.

    nlgeval induce answers.jsonl --task "Answer household how-to questions" --target helpfulness -o helpful.json
    nlgeval induce answers.jsonl --task "..." --target helpfulness -o helpful.json \\
        --lm openai/qwen2.5-7b-instruct --api-base http://localhost:8000/v1

A server that cannot be reached, does not answer within ``--timeout`` or answers with an HTTP error ends
the command with exit status 2 and a message naming the error (``JudgeServerUnreachable``,
``JudgeServerTimeout``, ``JudgeServerHTTPError``).

Without ``--lm`` the metric is induced from bank metrics alone (offline), and its report says so.
"""

from __future__ import annotations

import sys
import time


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "induce",
        help="induce a metric from human labels (AutoMetrics)",
        description="Induce a metric from labelled outputs: generate LLM judges (with --lm), retrieve bank "
        "metrics by their cards, compose them by PLS regression, and report held-out Kendall tau, "
        "sensitivity and stability. Writes a JSON artifact and an HTML report card.",
    )
    p.add_argument("data", help="labelled dataset (.jsonl or .csv) with output, optional input/references, labels")
    p.add_argument("--task", required=True, help="what the system does, in a sentence")
    p.add_argument("--target", required=True, help="the label column to predict")
    p.add_argument("-o", "--output", required=True, help="where to write the metric artifact (JSON)")
    p.add_argument("--report", default=None, help="HTML report card path (default: OUTPUT with .html)")
    p.add_argument("--name", default=None, help="metric name (default: the target column)")
    g = p.add_argument_group("LLM judges (need pytest-nlgeval[judges])")
    g.add_argument("--lm", default=None, help="LiteLLM model id, e.g. openai/<model> for an OpenAI-compatible server")
    g.add_argument("--api-base", default=None, help="base URL of the server, e.g. http://localhost:8000/v1")
    g.add_argument(
        "--api-key-env",
        default=None,
        help="environment variable holding the API key (default: the provider's usual variable)",
    )
    g.add_argument(
        "--timeout", type=float, default=120.0, help="seconds to wait for one answer of the server (default 120)"
    )
    g.add_argument(
        "--num-retries", type=int, default=2, help="retries, with backoff, of a request the server failed (default 2)"
    )
    g.add_argument(
        "--lm-engine",
        choices=("litellm", "auto", "lm15"),
        default="litellm",
        help="DSPy's request engine: litellm (default) or DSPy's own lm15 (auto)",
    )
    g.add_argument("--temperature", type=float, default=0.0)
    g.add_argument("--max-tokens", type=int, default=1000)
    g.add_argument("--n-criteria", type=int, default=10, help="single-criterion judges (default 10)")
    g.add_argument("--n-rubrics", type=int, default=5, help="rubric judges (default 5)")
    g.add_argument("--no-example-judge", action="store_true", help="skip the example-based judge")
    g.add_argument("--optimizer", choices=("mipro", "gepa"), default=None, help="add a prompt-optimised judge")
    g.add_argument(
        "--judge-read",
        choices=("form", "completion"),
        default="form",
        help="form: the judge writes a rationale and a score (default); completion: its distribution over 1-5 "
        "after 'Score: ' on the server's completions endpoint (llama.cpp, vLLM; a small base model scores every "
        "row)",
    )
    g.add_argument(
        "--criterion",
        action="append",
        dest="criteria",
        default=None,
        help="a criterion judge written by you (repeat for more), instead of criteria proposed by the LLM",
    )
    g.add_argument("--rerank", action="store_true", help="let the LLM rerank the retrieved bank metrics")
    g.add_argument("--threads", type=int, default=4, help="parallel LLM calls (default 4)")
    g.add_argument("--cache-dir", default=None, help="LLM response cache (default: the user cache dir)")
    b = p.add_argument_group("bank metrics and regression")
    b.add_argument(
        "--bank",
        choices=("auto", "yes", "no"),
        default="auto",
        help="use bank metrics: auto = always without --lm, with --lm only from 80 labelled rows",
    )
    b.add_argument("--metrics", default=None, help="comma-separated bank metrics to use instead of retrieval")
    b.add_argument("--exclude-metrics", default="", help="comma-separated bank metrics never to use")
    b.add_argument("-k", type=int, default=30, help="bank metrics kept by retrieval (default 30)")
    b.add_argument("--keep", type=int, default=5, help="components kept by the regression (default 5)")
    b.add_argument("--test-fraction", type=float, default=0.3, help="held-out share (default 0.3)")
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--no-robustness", action="store_true", help="skip sensitivity/stability")
    p.set_defaults(func=run)


class _Progress:
    """One line per stage on stderr, with the elapsed time."""

    def __init__(self, stream=None) -> None:
        self.stream = stream or sys.stderr
        self.start = time.time()

    def __call__(self, message: str) -> None:
        print(f"[{time.time() - self.start:7.1f}s] {message}", file=self.stream, flush=True)


def _split(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [t.strip() for t in text.split(",") if t.strip()]


def run(args) -> int:
    import os
    import warnings
    from pathlib import Path

    from pytest_nlgeval.errors import UsageError
    from pytest_nlgeval.induction.dataset import DatasetError, load_dataset
    from pytest_nlgeval.llm.cache import JudgeServerError
    from pytest_nlgeval.induction.pipeline import InductionError, InductionWarning, induce
    from pytest_nlgeval.induction.report_card import render_report_card

    if args.judge_read == "completion" and args.optimizer:
        raise UsageError(
            "--judge-read completion reads the scale, and --optimizer tunes a written answer: drop one of them"
        )
    if (args.judge_read != "form" or args.criteria) and not args.lm:
        raise UsageError("--judge-read and --criterion choose LLM judges: give the judge's model with --lm")
    progress = _Progress()
    try:
        data = load_dataset(args.data, target=args.target)
    except DatasetError as exc:
        raise UsageError(str(exc)) from None
    progress(
        f"read {len(data)} labelled rows from {args.data} (target {args.target!r}, {data.label_kind(args.target)})"
    )
    lm = None
    if args.lm:
        from pytest_nlgeval.llm.cache import JudgesUnavailable, make_lm

        api_key = None
        if args.api_key_env:
            api_key = os.environ.get(args.api_key_env)
            if not api_key:
                raise UsageError(f"--api-key-env {args.api_key_env}: the variable is not set")
        try:
            lm = make_lm(
                args.lm,
                api_base=args.api_base,
                api_key=api_key,
                temperature=args.temperature,
                max_tokens=args.max_tokens,
                cache_dir=args.cache_dir,
                timeout=args.timeout,
                num_retries=args.num_retries,
                engine=args.lm_engine,
            )
        except (JudgesUnavailable, ValueError) as exc:
            raise UsageError(str(exc)) from None
        from pytest_nlgeval.llm.secrets import public_url

        progress(f"judge LM: {args.lm}" + (f" at {public_url(args.api_base)}" if args.api_base else ""))
    else:
        progress("no --lm given: inducing from bank metrics alone (offline)")
    use_bank = {"auto": None, "yes": True, "no": False}[args.bank]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", InductionWarning)
        try:
            metric = induce(
                data,
                task=args.task,
                target=args.target,
                lm=lm,
                name=args.name,
                n_criteria=args.n_criteria,
                n_rubrics=args.n_rubrics,
                example_judge=not args.no_example_judge,
                optimizer=args.optimizer,
                use_bank=use_bank,
                metrics=_split(args.metrics),
                exclude_metrics=_split(args.exclude_metrics) or (),
                k=args.k,
                rerank=args.rerank,
                n_keep=args.keep,
                test_fraction=args.test_fraction,
                seed=args.seed,
                robustness=not args.no_robustness,
                num_threads=args.threads,
                progress=progress,
                judge_read=args.judge_read,
                criteria=args.criteria,
            )
        except (InductionError, DatasetError, JudgeServerError) as exc:
            raise UsageError(str(exc)) from None
    for w in caught:
        if issubclass(w.category, InductionWarning):
            print(f"warning: {w.message}", file=sys.stderr)
    out = metric.save(args.output)
    report = Path(args.report) if args.report else out.with_suffix(".html")
    render_report_card(metric, report)
    prov = metric.provenance
    h = prov["heldout"]
    print(f"wrote {out} ({len(metric.components)} components: {', '.join(c.name for c in metric.components)})")
    print(
        f"held-out Kendall tau {h['tau']:.3f} (p={h['p_value']:.3g}, 95% CI {h['ci_low']:.3f}..{h['ci_high']:.3f}, "
        f"n={h['n']})"
    )
    if prov.get("robustness"):
        print(f"sensitivity {prov['sensitivity']:.3f}, stability {prov['stability']:.3f}")
    failed = {k: v for k, v in (prov.get("judge_parse_failures") or {}).items() if v}
    retried = sum((prov.get("judge_retries") or {}).values())
    if failed or retried:
        print(
            f"judge outputs asked for again: {retried}; left unscored: "
            + (", ".join(f"{k} {v}" for k, v in failed.items()) or "none")
        )
    if prov.get("llm_usage"):
        u = prov["llm_usage"]
        print(
            f"LLM: {u['calls']} calls ({u['cache_hits']} from cache), {u['prompt_tokens']} prompt + "
            f"{u['completion_tokens']} completion tokens"
        )
    for note in metric.report.get("notes", []):
        print(f"note: {note}")
    print(f"report card: {report}")
    return 0
