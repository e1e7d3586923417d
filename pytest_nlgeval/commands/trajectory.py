"""``nlgeval trajectory fit-bank|score``: reference banks of human continuations, and scoring against them.

``fit-bank HUMAN.jsonl -o bank.npz`` reads one human continuation per line (``{"prompt": ..., "continuation":
...}``; field names configurable), computes coherence and diversity trajectories with a causal LM (the
default LM unless ``--lm``) and writes the bank. ``score OUTPUTS.jsonl --bank bank.npz`` scores machine
continuations in the same format against it and writes one JSON line of scores per input (other fields of
the input row, such as ids and ratings, are kept). ``meta-eval DATA.jsonl --bank bank.npz`` scores the
continuations of a human judgement file and reports every field against the judgements: Spearman with the
mean rating for per-text ratings, agreement with the majority vote for pairwise preferences, each with
prompt-cluster bootstrap intervals and the paired difference from a baseline field. Example::

    nlgeval trajectory fit-bank refs/human_stories.jsonl -o refs/stories.npz --horizon 128
    nlgeval trajectory score outputs.jsonl --bank refs/stories.npz -o scores.jsonl
    nlgeval trajectory meta-eval rated.jsonl --bank refs/stories.npz --rating quality --format markdown
    nlgeval trajectory meta-eval pairs.jsonl --bank refs/stories.npz --votes-field votes
"""

from __future__ import annotations


def register(subparsers) -> None:
    from nlgeval_runtime.session import DEVICES

    p = subparsers.add_parser(
        "trajectory",
        help="fit trajectory reference banks and score continuations",
        description="Trajectory checks for open-ended generation (coherence and diversity "
        "per prefix, compared with human references).",
    )
    sub = p.add_subparsers(dest="trajectory_command", metavar="ACTION")
    sub.required = True

    def common(q) -> None:
        q.add_argument("--prompt-field", default="prompt", help="JSON field of the prompt (default: prompt)")
        q.add_argument(
            "--continuation-field",
            default="continuation",
            help="JSON field of the continuation (default: continuation)",
        )
        q.add_argument("--device", default="auto", choices=DEVICES)
        q.add_argument(
            "--threads", type=int, default=None, help="ONNX Runtime or llama.cpp threads (default: all cores)"
        )
        q.add_argument(
            "--cache-dir",
            default=".nlgeval-cache",
            help="folder of the cache of per-token log-probabilities (default .nlgeval-cache)",
        )
        q.add_argument("--no-cache", action="store_true", help="read and write no log-probability cache")

    fit = sub.add_parser("fit-bank", help="compute human trajectories and fit the reference distributions")
    fit.add_argument("human", metavar="HUMAN.jsonl", help="human continuations, one JSON object per line")
    fit.add_argument("-o", "--output", required=True, metavar="BANK.npz")
    fit.add_argument(
        "--lm",
        default=None,
        help="causal LM: a model folder, or gguf:PATH for a GGUF file read with llama.cpp (pip install "
        "\"pytest-nlgeval[llm]\"); default: the shipped default LM",
    )
    fit.add_argument(
        "--n-ctx", type=int, default=None, help="context of a GGUF LM in tokens (default 512); recorded in the bank"
    )
    fit.add_argument("--horizon", type=int, default=128, help="tokens scored per continuation (default 128)")
    fit.add_argument("--seed", type=int, default=0, help="seed of the human-vs-human summary pairs")
    common(fit)
    fit.set_defaults(func=_fit_bank)

    score = sub.add_parser("score", help="score machine continuations against a reference bank")
    score.add_argument("outputs", metavar="OUTPUTS.jsonl", help="machine continuations, one JSON object per line")
    score.add_argument("--bank", required=True, metavar="BANK.npz")
    score.add_argument("-o", "--output", default=None, metavar="SCORES.jsonl", help="default: standard output")
    score.add_argument(
        "--lm", default=None, help="causal-LM folder or gguf:PATH (default: the LM the bank was fitted with)"
    )
    score.add_argument("--likelihood", default="gaussian", choices=("gaussian", "diagonal", "kde"))
    score.add_argument(
        "--story-field",
        default=None,
        help="field of a whole story: its first sentence is the prompt, the rest the continuation",
    )
    common(score)
    score.set_defaults(func=_score)

    ppl = sub.add_parser(
        "perplexity",
        help="perplexity of a causal LM on human texts, per token and per word",
        description="Perplexity of a causal LM on texts, per token of the LM's tokenizer and per whitespace word "
        "(which compares LMs with different tokenizers). Each text is scored whole (BOS, then the "
        "whitespace-normalised prompt and continuation), or with --given-prompt only its continuation "
        "given BOS and the prompt, as the trajectories measure coherence (with --horizon 128 the "
        "log-probabilities of a bank fitted at that horizon come from the cache).",
    )
    ppl.add_argument("texts", metavar="TEXTS.jsonl", help="prompt/continuation rows (or --story-field)")
    ppl.add_argument(
        "--given-prompt", action="store_true", help="score each continuation given its prompt instead of the whole text"
    )
    ppl.add_argument(
        "--horizon",
        type=int,
        default=None,
        help="with --given-prompt: score the first N continuation tokens (default: all)",
    )
    ppl.add_argument("--lm", default=None, help="causal-LM folder or gguf:PATH (default: the shipped default LM)")
    ppl.add_argument("--n-ctx", type=int, default=None, help="context of a GGUF LM in tokens (default 512)")
    ppl.add_argument("--story-field", default=None, help="field of a whole text instead of prompt + continuation")
    ppl.add_argument("--format", default="text", choices=("text", "json"))
    common(ppl)
    ppl.set_defaults(func=_perplexity)

    meta = sub.add_parser(
        "meta-eval",
        help="every trajectory field against human ratings or pairwise preferences",
        description="Score the continuations of a human judgement file against a reference bank and report, for "
        "every field, Spearman with the mean rating (per-text ratings) or agreement with the majority "
        "vote (pairwise preferences), with prompt-cluster bootstrap intervals.",
    )
    meta.add_argument(
        "data",
        metavar="DATA.jsonl",
        help="per-text ratings ({prompt, continuation, rating}) or pairwise preferences ({prompt, "
        "continuation_a, continuation_b, votes}); also the output of `trajectory score`",
    )
    meta.add_argument(
        "--bank",
        default=None,
        metavar="BANK.npz",
        help="reference bank to score the texts against (not needed for `trajectory score` output)",
    )
    meta.add_argument(
        "--lm", default=None, help="causal-LM folder or gguf:PATH (default: the LM the bank was fitted with)"
    )
    meta.add_argument("--likelihood", default="gaussian", choices=("gaussian", "diagonal", "kde"))
    meta.add_argument(
        "--rating",
        default="rating",
        help="field of the human rating: a number or a list of judgements, averaged (default: rating)",
    )
    meta.add_argument(
        "--story-field",
        default=None,
        help="field of a whole story: its first sentence is the prompt, the rest the continuation",
    )
    meta.add_argument(
        "--pairwise",
        action="store_true",
        help="pairwise preferences (chosen automatically when rows hold --a-field and --b-field)",
    )
    meta.add_argument(
        "--a-field", default="continuation_a", help="pairwise: first continuation (default: continuation_a)"
    )
    meta.add_argument(
        "--b-field", default="continuation_b", help="pairwise: second continuation (default: continuation_b)"
    )
    meta.add_argument(
        "--votes-field",
        default="votes",
        help='pairwise: votes, a list of "a"/"b" or counts {"a": 2, "b": 1} (default: votes)',
    )
    meta.add_argument(
        "--prompt-id",
        default=None,
        help="field identifying each row's prompt, the bootstrap cluster (default: the prompt text)",
    )
    meta.add_argument(
        "--fields",
        default="all",
        help="comma-separated fields to report (default: all; *_refit are renormalised per replicate)",
    )
    meta.add_argument(
        "--baseline",
        default="diversity_end",
        help="report every field's paired difference from this one (default: diversity_end; '' for none)",
    )
    meta.add_argument("--resamples", type=int, default=3000, help="bootstrap replicates (default 3000)")
    meta.add_argument("--seed", type=int, default=20260907)
    meta.add_argument("--confidence", type=float, default=0.95, help="interval level (default 0.95)")
    meta.add_argument("--format", default="text", choices=("text", "markdown", "json"))
    meta.add_argument("-o", "--output", default=None, metavar="FILE", help="write the table here (default: stdout)")
    meta.add_argument(
        "--cache",
        default=None,
        metavar="SCORES.json",
        help="reuse the texts' scores from this file when it holds them for the same data, bank "
        "and options; otherwise score and write them there",
    )
    common(meta)
    meta.set_defaults(func=_meta_eval)


def _read_pairs(
    path: str, prompt_field: str, continuation_field: str, story_field: str | None = None
) -> tuple[list[str], list[str], list[dict]]:
    from pytest_nlgeval.errors import UsageError
    from pytest_nlgeval.trajectory.humandata import HumanDataError, read_jsonl, split_story

    prompts, conts, rows = [], [], []
    try:
        for lineno, row in read_jsonl(path):
            if story_field is not None:
                story = row.get(story_field)
                if not isinstance(story, str) or not story.strip():
                    raise UsageError(f"{path}:{lineno} has no non-empty {story_field!r} field; pass --story-field")
                try:
                    prompt, cont = split_story(story)
                except ValueError as exc:
                    raise UsageError(
                        f"{path}:{lineno}: {exc}; pass --prompt-field and --continuation-field instead of --story-field"
                    ) from None
            else:
                if continuation_field not in row:
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
    except HumanDataError as exc:
        raise UsageError(str(exc)) from None
    if not conts:
        raise UsageError(f"{path} holds no continuations")
    return prompts, conts, rows


def _progress(label: str):
    """A ``report(done, total)`` callback drawing a progress bar (:mod:`pytest_nlgeval.core.progress`)."""
    from pytest_nlgeval.core.progress import progress

    bar = None

    def report(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = progress(total, label, unit="text")
        bar.update(done - bar.n)
        if done >= total:
            bar.close()

    return report


def _cache_dir(args):
    return None if args.no_cache else args.cache_dir


def _load_lm(args, ref, n_ctx=None):
    """The LM ``ref`` names (default, folder or gguf:PATH) behind the log-probability cache of ``--cache-dir``."""
    from pytest_nlgeval.errors import UsageError
    from pytest_nlgeval.trajectory.lm import is_gguf, load_trajectory_lm

    if n_ctx is not None and not is_gguf(ref):
        raise UsageError("--n-ctx applies to a GGUF LM (--lm gguf:PATH); a model folder fixes its own context")
    return load_trajectory_lm(ref, device=args.device, threads=args.threads, n_ctx=n_ctx, cache_dir=_cache_dir(args))


def _bank_lm(args, bank):
    """The LM to score against ``bank``: ``--lm`` or the bank's, refused when it is not the bank's."""
    from pytest_nlgeval.trajectory.lm import lm_for_bank

    return lm_for_bank(bank, args.lm, device=args.device, threads=args.threads, cache_dir=_cache_dir(args))


def _fit_bank(args) -> int:
    import hashlib
    import time
    from pathlib import Path

    from nlgeval_runtime.errors import NLGEvalRuntimeError

    from pytest_nlgeval.errors import UsageError
    from pytest_nlgeval.trajectory.bank import BankError, ReferenceBank

    prompts, conts, _ = _read_pairs(args.human, args.prompt_field, args.continuation_field)
    if args.horizon < 1:
        raise UsageError(f"--horizon must be >= 1, not {args.horizon}")
    started = time.time()
    try:
        lm = _load_lm(args, args.lm, n_ctx=args.n_ctx)
        source = Path(args.human)
        bank = ReferenceBank.fit(
            prompts,
            conts,
            lm,
            horizon=args.horizon,
            seed=args.seed,
            meta={"source": source.name, "source_sha256": hashlib.sha256(source.read_bytes()).hexdigest()},
            progress=_progress("scoring human continuations"),
        )
    except (NLGEvalRuntimeError, BankError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    bank.save(args.output)
    short = int(sum(1 for d in bank.diversity if d.size < args.horizon))
    tokens = int(sum(d.size for d in bank.diversity))
    elapsed = time.time() - started
    cached = f", {lm.hits} from the cache" if getattr(lm, "hits", 0) else ""
    print(
        f"{args.output}: {bank.n_references} human continuations ({short} shorter than the horizon "
        f"{args.horizon}; {tokens} tokens{cached}), LM {bank.lm['model_ref']} ({bank.lm['model_id']}), "
        f"{elapsed:.1f} s ({tokens / max(elapsed, 1e-9):.0f} tokens/s)"
    )
    return 0


def _score(args) -> int:
    import json
    import sys
    import time

    from nlgeval_runtime.errors import NLGEvalRuntimeError

    from pytest_nlgeval.errors import UsageError
    from pytest_nlgeval.trajectory.bank import BankError, ReferenceBank
    from pytest_nlgeval.trajectory.scoring import score_continuations

    prompts, conts, rows = _read_pairs(args.outputs, args.prompt_field, args.continuation_field, args.story_field)
    started = time.time()
    try:
        bank = ReferenceBank.load(args.bank)
        lm = _bank_lm(args, bank)
        scored = score_continuations(
            prompts, conts, bank, lm, likelihood_kind=args.likelihood, progress=_progress("scoring continuations")
        )
    except (NLGEvalRuntimeError, BankError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    try:
        for row, prompt, s in zip(rows, prompts, scored):
            # Keep the row's own fields (ids, ratings) and the prompt (the bootstrap cluster), not the texts.
            drop = (args.continuation_field, args.story_field)
            record = {k: v for k, v in row.items() if k not in drop}
            record[args.prompt_field] = prompt
            record.update(s.as_record())
            out.write(json.dumps(record, sort_keys=True) + "\n")
    finally:
        if out is not sys.stdout:
            out.close()
    print(
        f"scored {len(scored)} continuations against {bank.n_references} references in {time.time() - started:.1f} s",
        file=sys.stderr,
    )
    return 0


def _perplexity(args) -> int:
    import json
    import math
    import time

    from nlgeval_runtime.errors import NLGEvalRuntimeError

    from pytest_nlgeval.errors import UsageError

    prompts, conts, _ = _read_pairs(args.texts, args.prompt_field, args.continuation_field, args.story_field)
    if args.horizon is not None and (args.horizon < 1 or not args.given_prompt):
        raise UsageError(f"--horizon {args.horizon}: give a positive number of tokens, with --given-prompt")
    started = time.time()
    try:
        lm = _load_lm(args, args.lm, n_ctx=args.n_ctx)
        if args.given_prompt:
            texts = conts
            res = lm.score(conts, prompts, max_tokens=args.horizon, progress=_progress("scoring continuations"))
        else:
            # Each text whole, as the default LM's training report measures stories: prompt and continuation
            # joined, whitespace normalised, one BOS in front.
            texts = [" ".join(f"{p} {c}".split()) for p, c in zip(prompts, conts)]
            res = lm.score(texts, None, progress=_progress("scoring texts"))
    except (NLGEvalRuntimeError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    nll = -float(sum(lp.sum() for lp in res.logprobs))
    tokens = int(sum(lp.size for lp in res.logprobs))
    if args.horizon is not None:  # the words of the scored tokens only
        texts = [lm.tokenizer.decode([int(t) for t in ids]) for ids in res.token_ids]
    words = sum(len(t.split()) for t in texts)
    cut = int(sum(1 for n, ids in zip(res.n_tokens, res.token_ids) if n > ids.size))
    figures = {
        "texts": len(texts),
        "tokens": tokens,
        "words": words,
        "texts_cut": cut,
        "scored": "continuation given prompt" if args.given_prompt else "whole text",
        "perplexity_per_token": round(math.exp(nll / tokens), 3),
        "perplexity_per_word": round(math.exp(nll / words), 3),
        "lm": lm.model_ref,
        "lm_id": lm.model_id,
        "seconds": round(time.time() - started, 1),
    }
    if args.format == "json":
        print(json.dumps(figures, indent=2, sort_keys=True))
    else:
        print(f"{args.texts}: {len(texts)} texts ({figures['scored']}), LM {lm.model_ref} ({lm.model_id})")
        print(f"  per token: {figures['perplexity_per_token']:.2f} ({tokens} tokens)")
        print(f"  per word:  {figures['perplexity_per_word']:.2f} ({words} whitespace words)")
        if cut:
            print(f"  {cut} texts were cut to the context or the horizon")
    return 0


#: Modules whose code determines the cached scores of `meta-eval --cache`.
_SCORING_CODE = ("signals.py", "dtw.py", "summary.py", "likelihood.py", "bank.py", "baselines.py", "scoring.py")


def _sha256(path: str) -> str:
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _scored_records(args, prompts: list[str], conts: list[str], key: dict) -> list[dict]:
    """Scores of the texts against ``args.bank``, reused from ``args.cache`` when its key matches."""
    import json
    import sys
    from pathlib import Path

    from nlgeval_runtime.errors import NLGEvalRuntimeError

    from pytest_nlgeval.util.files import write_text_atomic
    from pytest_nlgeval.errors import UsageError
    from pytest_nlgeval.trajectory.bank import BankError, ReferenceBank
    from pytest_nlgeval.trajectory.scoring import SCORE_NAMES, score_continuations

    import pytest_nlgeval.trajectory as package

    # The scores depend on the data, the bank, the options and the scoring code: all are in the key.
    code = sorted(Path(package.__file__).parent.glob("*.py"))
    key = dict(
        key,
        bank_sha256=_sha256(args.bank),
        likelihood=args.likelihood,
        lm=args.lm,
        fields=list(SCORE_NAMES),
        texts=len(conts),
        code_sha256=[_sha256(str(f)) for f in code if f.name in _SCORING_CODE],
    )
    if args.cache and Path(args.cache).is_file():
        try:
            cached = json.loads(Path(args.cache).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            cached = None
        if isinstance(cached, dict) and cached.get("key") == key and len(cached.get("records", [])) == len(conts):
            print(f"reusing the scores in {args.cache}", file=sys.stderr)
            return cached["records"]
        print(f"{args.cache} holds scores of other data, bank or options; rescoring", file=sys.stderr)
    try:
        bank = ReferenceBank.load(args.bank)
        lm = _bank_lm(args, bank)
        scored = score_continuations(
            prompts, conts, bank, lm, likelihood_kind=args.likelihood, progress=_progress("scoring continuations")
        )
    except (NLGEvalRuntimeError, BankError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    records = [s.as_record() for s in scored]
    if args.cache:
        Path(args.cache).parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(args.cache, json.dumps({"key": key, "records": records}))
    return records


def _fields(args) -> list[str]:
    from pytest_nlgeval.errors import UsageError
    from pytest_nlgeval.trajectory.metaeval import DEFAULT_FIELDS, REFIT_FIELDS
    from pytest_nlgeval.trajectory.scoring import SCORE_NAMES

    if args.fields.strip() == "all":
        return list(DEFAULT_FIELDS)
    names = [n.strip() for n in args.fields.split(",") if n.strip()]
    known = set(SCORE_NAMES) | set(REFIT_FIELDS) | {"length"}
    bad = [n for n in names if n not in known]
    if bad or not names:
        raise UsageError(f"--fields {args.fields!r}: unknown field(s) {bad}; choose from {sorted(known)} or 'all'")
    baseline = args.baseline.strip()
    if baseline and baseline not in names:
        names.append(baseline)
    return names


def _keep_complete(
    records: list[dict], fields: list[str], what: str, minimum: int = 3
) -> tuple[list[int], dict[str, int]]:
    """Indices of the records with every field, and how many lack each field."""
    from pytest_nlgeval.trajectory.metaeval import missing_fields

    keep: list[int] = []
    lacking: dict[str, int] = {}
    for i, rec in enumerate(records):
        missing = missing_fields(rec, fields)
        for name in missing:
            lacking[name] = lacking.get(name, 0) + 1
        if not missing:
            keep.append(i)
    if len(keep) < minimum:
        from pytest_nlgeval.errors import UsageError

        raise UsageError(
            f"only {len(keep)} {what} have every field; fields without values: {lacking}. Leave those "
            "fields out with --fields (summary_* and *_paired need a human continuation of the same "
            "prompt in the bank)"
        )
    return keep, lacking


def _meta_eval(args) -> int:
    import sys

    import numpy as np

    from pytest_nlgeval.util.files import write_text_atomic
    from pytest_nlgeval.errors import UsageError
    from pytest_nlgeval.trajectory.humandata import HumanDataError, mean_rating, read_jsonl, read_pairwise, read_ratings
    from pytest_nlgeval.trajectory.metaeval import bootstrap_spearman, score_specs
    from pytest_nlgeval.trajectory.pairwise import pairwise_agreement
    from pytest_nlgeval.trajectory.tables import pairwise_table, ratings_table, render

    if args.resamples < 1:
        raise UsageError(f"--resamples must be >= 1, not {args.resamples}")
    if not 0.0 < args.confidence < 1.0:
        raise UsageError(f"--confidence must be between 0 and 1 (e.g. 0.95), not {args.confidence}")
    fields = _fields(args)
    baseline = args.baseline.strip() or None
    try:
        first = next(read_jsonl(args.data), (0, {}))[1]
        pairwise = args.pairwise or (args.a_field in first and args.b_field in first)
        prescored = "diversity_dtw" in first and args.bank is None
        if args.bank is None and not prescored:
            raise UsageError(
                f"{args.data} holds texts, not scores; pass --bank BANK.npz to score them "
                "(fit one with `nlgeval trajectory fit-bank HUMAN.jsonl -o BANK.npz`)"
            )
        if pairwise and prescored:
            raise UsageError("pairwise preferences need --bank: both continuations of each pair are scored")
        key = {
            "data_sha256": _sha256(args.data),
            "story_field": args.story_field,
            "prompt_field": args.prompt_field,
            "continuation_field": args.continuation_field,
        }
        if pairwise:
            data = read_pairwise(
                args.data,
                a_field=args.a_field,
                b_field=args.b_field,
                votes_field=args.votes_field,
                prompt_field=args.prompt_field,
                prompt_id_field=args.prompt_id,
            )
            key.update(a_field=args.a_field, b_field=args.b_field)
            n = len(data)
            records = _scored_records(args, data.prompts * 2, data.a + data.b, key)
            keep_a, lacking = _keep_complete(records[:n], fields, "pairs", minimum=2)
            keep_b, lacking_b = _keep_complete(records[n:], fields, "pairs", minimum=2)
            keep = sorted(set(keep_a) & set(keep_b))
            kept = [records[i] for i in keep] + [records[n + i] for i in keep]
            result = pairwise_agreement(
                score_specs(kept, fields),
                data.votes_a[keep],
                data.votes_b[keep],
                data.clusters[keep],
                n_resamples=args.resamples,
                seed=args.seed,
                confidence=args.confidence,
            )
            info = {"data": args.data, "bank": args.bank, "dropped_pairs": n - len(keep)}
            for name, count in lacking_b.items():
                lacking[name] = lacking.get(name, 0) + count
            if lacking:
                info["without_values"] = ", ".join(f"{k} ({v})" for k, v in sorted(lacking.items()))
            table = pairwise_table(result, fields, baseline=baseline, info=info)
        else:
            if prescored:
                rows = [row for _, row in read_jsonl(args.data)]
                for lineno, row in enumerate(rows, start=1):
                    if args.rating not in row:
                        raise UsageError(
                            f"{args.data} row {lineno} has no {args.rating!r} field; name the rating "
                            "field with --rating"
                        )
                ratings = np.array([mean_rating(r[args.rating]) for r in rows])
                id_field = args.prompt_id or args.prompt_field
                if any(r.get(id_field) is None for r in rows):
                    raise UsageError(
                        f"{args.data}: some rows have no {id_field!r} field to group them by prompt; "
                        "pass --prompt-id FIELD"
                    )
                clusters = np.array([" ".join(str(r[id_field]).split()) for r in rows])
                records = rows
            else:
                rated = read_ratings(
                    args.data,
                    rating_field=args.rating,
                    prompt_field=args.prompt_field,
                    continuation_field=args.continuation_field,
                    story_field=args.story_field,
                    prompt_id_field=args.prompt_id,
                )
                ratings, clusters = rated.ratings, rated.clusters
                records = _scored_records(args, rated.prompts, rated.continuations, key)
            keep, lacking = _keep_complete(records, fields, "texts")
            kept = [records[i] for i in keep]
            spearman_result = bootstrap_spearman(
                score_specs(kept, fields),
                ratings[keep],
                clusters[keep],
                n_resamples=args.resamples,
                seed=args.seed,
                confidence=args.confidence,
            )
            info = {
                "data": args.data,
                "bank": args.bank,
                "texts": len(keep),
                "prompts": int(np.unique(clusters[keep]).size),
                "dropped_texts": len(records) - len(keep),
            }
            if lacking:
                info["without_values"] = ", ".join(f"{k} ({v})" for k, v in sorted(lacking.items()))
            table = ratings_table(spearman_result, fields, baseline=baseline, info=info)
    except (HumanDataError, ValueError, KeyError) as exc:
        raise UsageError(str(exc)) from None
    text = render(table, args.format)
    if args.output:
        write_text_atomic(args.output, text + "\n")
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        print(text)
    return 0
