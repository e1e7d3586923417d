"""``nlgeval trajectory fit-bank|score``: reference banks of human continuations, and scoring against them.

``fit-bank HUMAN.jsonl -o bank.npz`` reads one human continuation per line (``{"prompt": ..., "continuation":
...}``; field names configurable), computes coherence and diversity trajectories with a causal LM (the
default LM unless ``--lm``) and writes the bank. ``score OUTPUTS.jsonl --bank bank.npz`` scores machine
continuations in the same format against it and writes one JSON line of scores per input (other fields of
the input row, such as ids and ratings, are kept). ``meta-eval SCORES.jsonl --rating R --prompt-id P``
correlates scores with human ratings (Spearman, prompt-cluster bootstrap). Example::

    nlgeval trajectory fit-bank refs/human_stories.jsonl -o refs/stories.npz --horizon 128
    nlgeval trajectory score outputs.jsonl --bank refs/stories.npz -o scores.jsonl
    nlgeval trajectory meta-eval scores.jsonl --rating quality --prompt-id prompt_id --pairs diversity_dtw:diversity_end
"""
from __future__ import annotations


def register(subparsers) -> None:
    p = subparsers.add_parser("trajectory", help="fit trajectory reference banks and score continuations",
                              description="Trajectory checks for open-ended generation (coherence and diversity "
                                          "per prefix, compared with human references).")
    sub = p.add_subparsers(dest="trajectory_command", metavar="ACTION")
    sub.required = True

    def common(q) -> None:
        q.add_argument("--prompt-field", default="prompt", help="JSON field of the prompt (default: prompt)")
        q.add_argument("--continuation-field", default="continuation",
                       help="JSON field of the continuation (default: continuation)")
        q.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
        q.add_argument("--threads", type=int, default=None, help="ONNX Runtime threads (default: all cores)")

    fit = sub.add_parser("fit-bank", help="compute human trajectories and fit the reference distributions")
    fit.add_argument("human", metavar="HUMAN.jsonl", help="human continuations, one JSON object per line")
    fit.add_argument("-o", "--output", required=True, metavar="BANK.npz")
    fit.add_argument("--lm", default=None, help="causal-LM model folder (default: the shipped default LM)")
    fit.add_argument("--horizon", type=int, default=128, help="tokens scored per continuation (default 128)")
    fit.add_argument("--seed", type=int, default=0, help="seed of the human-vs-human summary pairs")
    common(fit)
    fit.set_defaults(func=_fit_bank)

    score = sub.add_parser("score", help="score machine continuations against a reference bank")
    score.add_argument("outputs", metavar="OUTPUTS.jsonl", help="machine continuations, one JSON object per line")
    score.add_argument("--bank", required=True, metavar="BANK.npz")
    score.add_argument("-o", "--output", default=None, metavar="SCORES.jsonl", help="default: standard output")
    score.add_argument("--lm", default=None, help="causal-LM folder (default: the LM the bank was fitted with)")
    score.add_argument("--likelihood", default="gaussian", choices=("gaussian", "diagonal", "kde"))
    common(score)
    score.set_defaults(func=_score)

    meta = sub.add_parser("meta-eval", help="Spearman of scores with human ratings, prompt-cluster bootstrap")
    meta.add_argument("scores_file", metavar="SCORES.jsonl", help="output of `nlgeval trajectory score` with ratings")
    meta.add_argument("--rating", required=True, help="field holding the human rating of each row")
    meta.add_argument("--prompt-id", required=True, help="field naming each row's prompt (the bootstrap cluster)")
    meta.add_argument("--scores", default="diversity_dtw,coherence_dtw,summary_mean,likelihood_var,diversity_end",
                      help="comma-separated score fields (summary_* are re-standardised in every replicate)")
    meta.add_argument("--pairs", default="", help="paired differences to report, e.g. diversity_dtw:diversity_end")
    meta.add_argument("--resamples", type=int, default=3000)
    meta.add_argument("--seed", type=int, default=20260907)
    meta.set_defaults(func=_meta_eval)


def _read_pairs(path: str, prompt_field: str, continuation_field: str) -> tuple[list[str], list[str], list[dict]]:
    import gzip
    import json
    from pathlib import Path

    from pytest_nlgeval.cli import UsageError

    file = Path(path)
    if not file.is_file():
        raise UsageError(f"{path} does not exist; pass a JSONL file with {prompt_field!r} and {continuation_field!r}")
    opener = gzip.open if file.suffix == ".gz" else open
    prompts, conts, rows = [], [], []
    with opener(file, "rt", encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise UsageError(f"{path}:{lineno} is not valid JSON ({exc.msg})") from None
            if not isinstance(row, dict) or continuation_field not in row:
                raise UsageError(f"{path}:{lineno} has no {continuation_field!r} field; pass --continuation-field")
            cont = row[continuation_field]
            if not isinstance(cont, str) or not cont.strip():
                raise UsageError(f"{path}:{lineno}: {continuation_field!r} must be a non-empty string")
            prompt = row.get(prompt_field, "")
            if not isinstance(prompt, str):
                raise UsageError(f"{path}:{lineno}: {prompt_field!r} must be a string")
            prompts.append(prompt)
            conts.append(cont)
            rows.append(row)
    if not conts:
        raise UsageError(f"{path} holds no continuations")
    return prompts, conts, rows


def _progress(label: str):
    import sys

    def report(done: int, total: int) -> None:
        print(f"\r{label}: {done}/{total}", end="" if done < total else "\n", file=sys.stderr, flush=True)

    return report


def _fit_bank(args) -> int:
    import hashlib
    import time
    from pathlib import Path

    from nlgeval_runtime.causal_lm import load_causal_lm
    from nlgeval_runtime.errors import NLGEvalRuntimeError

    from pytest_nlgeval.cli import UsageError
    from pytest_nlgeval.trajectory.bank import BankError, ReferenceBank

    prompts, conts, _ = _read_pairs(args.human, args.prompt_field, args.continuation_field)
    if args.horizon < 1:
        raise UsageError(f"--horizon must be >= 1, not {args.horizon}")
    started = time.time()
    try:
        lm = load_causal_lm(args.lm, device=args.device, threads=args.threads)
        source = Path(args.human)
        bank = ReferenceBank.fit(prompts, conts, lm, horizon=args.horizon, seed=args.seed,
                                 meta={"source": source.name,
                                       "source_sha256": hashlib.sha256(source.read_bytes()).hexdigest()},
                                 progress=_progress("scoring human continuations"))
    except (NLGEvalRuntimeError, BankError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    bank.save(args.output)
    short = int(sum(1 for d in bank.diversity if d.size < args.horizon))
    print(f"{args.output}: {bank.n_references} human continuations ({short} shorter than the horizon "
          f"{args.horizon}), LM {bank.lm['model_ref']} ({bank.lm['model_id']}), {time.time() - started:.1f} s")
    return 0


def _score(args) -> int:
    import json
    import sys
    import time

    from nlgeval_runtime.causal_lm import load_causal_lm
    from nlgeval_runtime.errors import NLGEvalRuntimeError

    from pytest_nlgeval.cli import UsageError
    from pytest_nlgeval.trajectory.bank import BankError, ReferenceBank
    from pytest_nlgeval.trajectory.scoring import score_continuations

    prompts, conts, rows = _read_pairs(args.outputs, args.prompt_field, args.continuation_field)
    started = time.time()
    try:
        bank = ReferenceBank.load(args.bank)
        ref = args.lm if args.lm is not None else bank.lm.get("model_ref")
        lm = load_causal_lm(None if ref in (None, "default-lm") else ref, device=args.device, threads=args.threads)
        scored = score_continuations(prompts, conts, bank, lm, likelihood_kind=args.likelihood,
                                     progress=_progress("scoring continuations"))
    except (NLGEvalRuntimeError, BankError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    try:
        for row, s in zip(rows, scored):
            # Keep the row's own fields (ids, ratings, prompt ids) but not the texts.
            record = {k: v for k, v in row.items() if k not in (args.prompt_field, args.continuation_field)}
            record.update({k: (None if v is None else round(v, 6)) for k, v in s.values.items()})
            record["tokens"] = s.trajectory.length
            record["summary_components"] = None if s.components is None else [float(c) for c in s.components]
            out.write(json.dumps(record, sort_keys=True) + "\n")
    finally:
        if out is not sys.stdout:
            out.close()
    print(f"scored {len(scored)} continuations against {bank.n_references} references in "
          f"{time.time() - started:.1f} s", file=sys.stderr)
    return 0


def _meta_eval(args) -> int:
    import json

    import numpy as np

    from pytest_nlgeval.cli import UsageError
    from pytest_nlgeval.trajectory.metaeval import bootstrap_spearman, refit_summary

    rows = []
    import os

    if not os.path.isfile(args.scores_file):
        raise UsageError(f"{args.scores_file} does not exist; write it with `nlgeval trajectory score ... -o FILE`")
    with open(args.scores_file, encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, start=1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise UsageError(f"{args.scores_file}:{lineno} is not valid JSON ({exc.msg})") from None
    if len(rows) < 3:
        raise UsageError(f"{args.scores_file} has {len(rows)} rows; correlations need at least 3")
    names = [n.strip() for n in args.scores.split(",") if n.strip()]
    for lineno, row in enumerate(rows, start=1):
        for field in [args.rating, args.prompt_id] + names:
            if row.get(field) is None and not (field.startswith("summary_") and row.get("summary_components")):
                raise UsageError(f"{args.scores_file} row {lineno} has no value for {field!r}")
    ratings = np.array([float(r[args.rating]) for r in rows])
    clusters = np.array([str(r[args.prompt_id]) for r in rows])
    specs = {}
    for name in names:
        if name in ("summary_mean", "summary_var", "summary_all") and all(r.get("summary_components") for r in rows):
            specs[name] = refit_summary(np.array([r["summary_components"] for r in rows]), name.split("_")[1])
        else:
            specs[name] = np.array([float(r[name]) for r in rows])
    result = bootstrap_spearman(specs, ratings, clusters, n_resamples=args.resamples, seed=args.seed)
    print(f"{len(rows)} outputs, {len(set(clusters))} prompts, {args.resamples} prompt-cluster replicates "
          f"(seed {args.seed}), percentile 95% intervals")
    for name in names:
        iv = result.interval(name)
        print(f"  {name:<22} rho {iv.statistic:+.3f}  [{iv.low:+.3f}, {iv.high:+.3f}]")
    for pair in filter(None, (p.strip() for p in args.pairs.split(","))):
        a, _, b = pair.partition(":")
        if a not in specs or b not in specs:
            raise UsageError(f"--pairs {pair!r}: both scores must be listed in --scores")
        iv = result.difference(a, b)
        print(f"  {a} - {b}: {iv.statistic:+.3f}  [{iv.low:+.3f}, {iv.high:+.3f}] (paired, same replicates)")
    return 0
