"""``nlgeval judge``: judge every output of a file on one criterion with the criterion judge of ``assert_judged``.

    nlgeval judge answers.jsonl --criterion "The answer names the refund deadline." \\
        --lm openai/qwen2.5-7b-instruct --api-base http://localhost:8000/v1 --json judged.json

The file is JSON Lines (or a JSON list, gzip or not), one object per output: ``output`` (required), ``input``,
``context`` (a string or a list of retrieved passages) and ``reference`` (optional). The built-in criteria
``rag/faithfulness``, ``rag/answer_relevance``, ``rag/context_relevance`` and ``rag/context_recall`` are accepted by
name. ``--judge-read completion`` reads the score off the one token after "Score: " on the server's
completions endpoint (a base model that never fills the answer form still gives a score), as
``--nlgeval-judge-read`` does in the plugin. Each row's score and rationale are printed; a row whose answer held
no score (asked twice) is listed as a parse failure and left unscored. Exit status 0 when every row was judged,
1 when a row was not, 2 on a usage or server error.
"""

from __future__ import annotations

import json
import math
import sys

#: the readings of ``--judge-read``, those of the plugin's ``--nlgeval-judge-read``
#: (``pytest_nlgeval.judges.criterion.READ_MODES``, not imported here: the command line starts fast)
READ_MODES = ("form", "scale", "completion")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "judge",
        help="judge each output of a file on a criterion (G-Eval LLM judge)",
        description="Judge every output of a JSON Lines file on one criterion with the criterion judge of "
        "assert_judged: generated evaluation steps, a form-filling answer, the logprob-weighted "
        "score where the server returns log-probabilities. Answers are cached on disk.",
    )
    p.add_argument("data", help="JSON Lines file: output, and optional input, context, reference")
    p.add_argument(
        "--criterion",
        required=True,
        help="what a good output does, in a sentence; or rag/faithfulness, rag/answer_relevance, "
        "rag/context_relevance, rag/context_recall",
    )
    p.add_argument("--lm", default=None, help="LiteLLM model id, e.g. openai/<model> (env NLGEVAL_JUDGE_LM)")
    p.add_argument(
        "--api-base", default=None, help="base URL of the OpenAI-compatible server (env NLGEVAL_JUDGE_API_BASE)"
    )
    p.add_argument("--scale", default="1,5", help="the integer scale LOW,HIGH (default 1,5)")
    p.add_argument("--temperature", default=None, help="sampling temperature (default 0)")
    p.add_argument(
        "--samples", default=None, help="answers per output, averaged (default 1; above 1 needs a temperature above 0)"
    )
    p.add_argument("--max-tokens", default=None, help="most tokens of one answer (default 256)")
    p.add_argument("--timeout", default=None, help="seconds one request may take (default 120)")
    p.add_argument("--no-logprobs", action="store_true", help="use the written score, never log-probabilities")
    p.add_argument(
        "--judge-read",
        choices=READ_MODES,
        default=None,
        help="how an answer becomes a score, as --nlgeval-judge-read: form (default): the judge writes 'Score: N' "
        "and a reason; scale: the first two tokens' distribution over the scale; completion: the one token after "
        "'Score: ' on the server's completions endpoint (llama.cpp, vLLM), for base models that never fill the form "
        "(env NLGEVAL_JUDGE_READ)",
    )
    p.add_argument(
        "--cache-dir", default=None, help="LLM answer cache (default: the user cache dir, or $NLGEVAL_LLM_CACHE)"
    )
    p.add_argument("--json", default=None, help="write the scores, rationales and usage to this JSON file")
    p.set_defaults(func=run)


def _rows(path: str) -> list[dict]:
    from nlgeval_runtime.jsonlines import read_rows

    from pytest_nlgeval.errors import UsageError

    rows = []
    for number, row in read_rows(path, error=UsageError):
        if not isinstance(row, dict) or not isinstance(row.get("output"), str) or not row["output"].strip():
            raise UsageError(
                f"{path}:{number}: each line needs a non-empty string \"output\" (and may have "
                "\"input\", \"context\", \"reference\")"
            )
        rows.append({**row, "line": number})
    if not rows:
        raise UsageError(f"{path} holds no rows to judge")
    return rows


def run(args) -> int:
    import os

    from pytest_nlgeval.errors import NLGEvalError, UsageError
    from pytest_nlgeval.llm.cache import JudgeServerError, LLMUsage
    from pytest_nlgeval.judges.criterion import JudgedParseError, JudgeStats, build_judge, judge_options

    try:
        low, high = (int(v) for v in args.scale.split(","))
    except ValueError:
        raise UsageError(f"--scale must be two integers LOW,HIGH such as 1,5; got {args.scale!r}") from None
    raw = {
        "judge_lm": args.lm or os.environ.get("NLGEVAL_JUDGE_LM"),
        "judge_api_base": args.api_base or os.environ.get("NLGEVAL_JUDGE_API_BASE"),
        "judge_temperature": args.temperature,
        "judge_samples": args.samples,
        "judge_max_tokens": args.max_tokens,
        "judge_timeout": args.timeout,
        "judge_logprobs": "off" if args.no_logprobs else None,
        "judge_read": args.judge_read or os.environ.get("NLGEVAL_JUDGE_READ"),
    }
    rows = _rows(args.data)
    usage, stats = LLMUsage(), JudgeStats()
    try:
        settings = judge_options(raw)
        if settings["judge_lm"] is None:
            raise UsageError(
                "--lm (or NLGEVAL_JUDGE_LM) names the judge LM, e.g. --lm openai/MODEL --api-base http://HOST:PORT/v1"
            )
        judge = build_judge(settings, cache_dir=args.cache_dir, stats=stats, usage=usage)
    except (NLGEvalError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    results, failed = [], 0
    for row in rows:
        try:
            score = judge.score(
                row["output"],
                args.criterion,
                input=row.get("input"),
                context=row.get("context"),
                reference=row.get("reference"),
                scale=(low, high),
                recorder=None,
            )
        except JudgedParseError as exc:
            failed += 1
            results.append({"line": row["line"], "score": None, "error": str(exc), "answers": exc.answers})
            print(f"line {row['line']:>4}: no score (parse failure, asked twice)")
            continue
        except JudgeServerError as exc:
            raise UsageError(str(exc)) from None
        except (TypeError, ValueError) as exc:
            raise UsageError(f"{args.data}:{row['line']}: {exc}") from None
        details = score.details
        results.append(
            {
                "line": row["line"],
                "score": float(score),
                "rationale": details["rationale"],
                "method": details["method"],
                "samples": details["samples"],
            }
        )
        why = f"  {details['rationale'][:100]}" if details["rationale"] else ""
        print(f"line {row['line']:>4}: {float(score):.3f}{why}")
    scored = [r["score"] for r in results if r["score"] is not None]
    mean = sum(scored) / len(scored) if scored else math.nan
    print(
        f"{len(scored)} of {len(rows)} outputs judged on {args.criterion[:60]!r} (scale {low}-{high}), "
        f"mean {mean:.3f}; {failed} parse failures, {stats.retries} answers asked again"
    )
    print(f"LLM: {usage.summary()}")
    if args.json:
        from pytest_nlgeval.util.files import write_text_atomic

        first = next((r for r in results if r["score"] is not None), None)
        steps = judge.steps(_criterion_text(args.criterion), (low, high)) if first is not None else None
        report = {
            "criterion": args.criterion,
            "scale": [low, high],
            "steps": steps,
            "judge": judge.fingerprint(_criterion_text(args.criterion), steps or [], (low, high)),
            "rows": results,
            "mean": mean if scored else None,
            "usage": {**usage.to_dict(), **stats.to_dict()},
        }
        write_text_atomic(args.json, json.dumps(report, indent=2, allow_nan=False) + "\n")
        print(f"results: {args.json}", file=sys.stderr)
    return 1 if failed else 0


def _criterion_text(criterion: str) -> str:
    from pytest_nlgeval.judges.criterion import RAG_CRITERIA

    return RAG_CRITERIA[criterion][0] if criterion in RAG_CRITERIA else criterion
