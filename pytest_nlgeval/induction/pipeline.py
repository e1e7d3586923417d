"""Induce a metric from human labels: generate, retrieve, regress, report (Ryan et al., 2025, Section 3).

Example (offline, bank metrics only)::

    >>> from pytest_nlgeval.induction import induce, load_dataset                        # doctest: +SKIP
    >>> data = load_dataset("examples/induced_metric/answers.jsonl", target="helpfulness")  # doctest: +SKIP
    >>> metric = induce(data, task="Answer questions about home appliances", target="helpfulness")  # doctest: +SKIP
    >>> metric.provenance["heldout"]["tau"]                                              # doctest: +SKIP

With an LLM (``lm=make_lm("openai/<model>", api_base=...)``) the generated judges join the candidates; below
80 labelled rows only generated judges are used, as in the paper, unless ``use_bank=True``.
"""

from __future__ import annotations

import math
import platform
import sys
import time
import warnings
from typing import Any, Callable, Sequence

from pytest_nlgeval.errors import NLGEvalError
from pytest_nlgeval.induction.artifact import RANGE_TOLERANCE, Component, InducedMetric
from pytest_nlgeval.induction.dataset import LabelledDataset
from pytest_nlgeval.util.redact import local_paths_removed

__all__ = ["induce", "InductionWarning", "InductionError", "MIN_ROWS_FOR_BANK"]

MIN_ROWS_FOR_BANK = 80  # the paper: with fewer labels, generated judges alone generalise better


class InductionWarning(UserWarning):
    """Something the user should know about an induced metric (e.g. its held-out tau is not significant)."""


class InductionError(NLGEvalError, ValueError):
    """Induction cannot proceed; the message says what to change."""


def _packages(names: Sequence[str]) -> dict[str, str]:
    from importlib import metadata

    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def _usable(name: str, dataset: LabelledDataset, notes: list[str]):
    """Construct a bank metric if the dataset provides what it needs; ``None`` otherwise (with a note)."""
    from pytest_nlgeval.metrics import get_metric

    try:
        metric = get_metric(name)
    except Exception as exc:  # a metric whose model or library is missing is skipped, and the report says so
        notes.append(f"bank metric {name} skipped: {type(exc).__name__}: {str(exc)[:300]}")
        return None
    if getattr(metric, "needs_references", False) and not dataset.has_references:
        return None
    if getattr(metric, "needs_input", False) and not dataset.has_inputs:
        return None
    if getattr(metric, "needs_context", False):
        return None  # labelled datasets carry no separate context column
    return metric


def _bank_values(metric, dataset: LabelledDataset) -> list[float]:
    refs = dataset.references if dataset.has_references else None
    inputs = dataset.inputs if dataset.has_inputs else None
    return [float(v) for v in metric.score_batch(dataset.outputs, inputs, refs)]


def _drop_identical(names: list[str], generated: list[bool], columns: list[list[float]], notes: list[str]) -> None:
    """Leave out a candidate whose values equal an earlier candidate's on every training row (in place).

    Two bank metrics can be one signal under two names (a model folder may serve one dimension for two
    tasks); kept twice, the pair would take two of the ``n_keep`` places and double its weight in the fit.
    """
    import numpy as np

    seen: dict[bytes, str] = {}
    j = 0
    while j < len(names):
        key = np.nan_to_num(np.asarray(columns[j], dtype=float), nan=np.inf).tobytes()
        if key in seen:
            notes.append(f"{names[j]} gives the same value as {seen[key]} on every training output; left out")
            del names[j], generated[j], columns[j]
            continue
        seen[key] = names[j]
        j += 1


def _needs(component: Component, metric, what: str) -> bool:
    """Whether a kept component reads the row's ``what`` ("input" or "references") to score an output."""
    if component.kind == "judge":
        return bool((component.judge or {}).get(f"uses_{what}"))
    return bool(getattr(metric, f"needs_{what}", False))


def _kendall(x, y) -> float | None:
    import numpy as np

    from pytest_nlgeval.util.extras import require

    kendalltau = require("scipy.stats", "inducing a metric (Kendall tau)").kendalltau

    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 3 or np.std(x[ok]) == 0:
        return None
    tau = kendalltau(x[ok], y[ok]).statistic
    return float(tau) if math.isfinite(tau) else None


def induce(
    dataset: LabelledDataset,
    *,
    task: str,
    target: str,
    lm=None,
    name: str | None = None,
    n_criteria: int = 10,
    n_rubrics: int = 5,
    example_judge: bool = True,
    optimizer: str | None = None,
    use_bank: bool | None = None,
    metrics: Sequence[str] | None = None,
    exclude_metrics: Sequence[str] = (),
    k: int = 30,
    rerank: bool = False,
    n_keep: int = 5,
    test_fraction: float = 0.3,
    seed: int = 0,
    robustness: bool = True,
    llm_perturbations: bool = True,
    n_boot: int = 1000,
    num_threads: int = 1,
    progress: Callable[[str], None] | None = None,
    judge_read: str = "form",
    criteria: Sequence[str] | None = None,
) -> InducedMetric:
    """Induce a metric for ``target`` from ``dataset`` and return it (save it with ``.save(path)``).

    ``dataset`` holds the labelled outputs (:func:`~pytest_nlgeval.induction.dataset.load_dataset`).
    ``task`` says what the system does, in a sentence (used in prompts and in the retrieval query), and
    ``target`` is the label column to predict; an empty task or a target that is no label column raises
    :class:`InductionError`. ``name`` is the metric's name (default: ``target``). ``lm`` is a ``dspy`` LM for
    the judges (wrapped in the disk cache); ``None`` means bank metrics only.

    ``n_criteria``, ``n_rubrics``, ``example_judge`` and ``optimizer`` choose which judges to generate
    (``optimizer`` is ``None``, ``"mipro"`` or ``"gepa"``); ``num_threads`` is how many threads the judge
    calls and the optimizer use. ``use_bank`` includes retrieved bank metrics; by default yes without an LM,
    and with an LM only from :data:`MIN_ROWS_FOR_BANK` labelled rows up. ``metrics`` are bank metrics to
    consider instead of retrieving them; ``exclude_metrics`` are never considered. ``k`` is how many bank
    metrics retrieval keeps, and ``rerank`` lets the LM reorder them. ``n_keep`` is how many candidates the
    regression keeps.

    ``test_fraction`` is the share of rows held out for Kendall's tau (its interval from ``n_boot`` bootstrap
    resamples); ``seed`` fixes the split and every sample. ``robustness`` measures sensitivity and stability
    on the held-out rows (LLM perturbations too when ``lm`` is given and ``llm_perturbations``).
    ``progress`` is called with a line of text at each stage. ``judge_read`` is how the judges are read:
    ``form`` (a written rationale and score) or ``completion`` (the distribution over 1-5 after "Score: " on
    the server's completions endpoint: a local base model such as Gemma 3 270M gives a score for every row).
    ``criteria`` are criterion judges written by the user, used instead of LLM-proposed axes.

        metric = induce(load_dataset("labels.jsonl"), task="Answer customer questions", target="helpful")
        metric.save("metrics/helpful.json")
    """
    import numpy as np

    from pytest_nlgeval.induction.regress import RegressionError, fit_pls, kendall_agreement

    say = progress or (lambda msg: None)
    started = time.time()
    if target not in dataset.label_kinds:
        raise InductionError(
            f"target {target!r} is not a label column of {dataset.source}; "
            f"label columns: {', '.join(dataset.label_kinds)}"
        )
    if not task or not task.strip():
        raise InductionError("task must describe what the system does, e.g. --task \"Answer customer questions\"")
    notes: list[str] = []
    usage = None
    if lm is not None:
        from pytest_nlgeval.llm.cache import cached_lm, lm_identity

        lm = cached_lm(lm)
        usage = lm.usage
    n_rows = len(dataset)
    if use_bank is None:
        use_bank = lm is None or n_rows >= MIN_ROWS_FOR_BANK
        if lm is not None and not use_bank:
            notes.append(
                f"{n_rows} labelled rows (< {MIN_ROWS_FOR_BANK}): generated judges only, as in AutoMetrics; "
                "pass use_bank=True to add bank metrics"
            )
    if lm is None:
        notes.append("No LLM was configured: the metric was induced from bank metrics alone (no generated judges).")
        if not use_bank:
            raise InductionError("without an LLM the bank metrics are the only candidates; do not disable them")

    train, test = dataset.split(test_fraction, seed)
    say(f"split {n_rows} rows: {len(train)} for fitting, {len(test)} held out")
    y_train = train.labels(target)

    names: list[str] = []
    generated: list[bool] = []
    columns: list[list[float]] = []
    components: dict[str, Component] = {}
    bank_metrics: dict[str, object] = {}  # bank component name -> its metric (what it reads)
    judge_runs: dict[str, object] = {}
    retrieved_report: list[dict] = []
    failures: dict[str, int] = {}
    retries: dict[str, int] = {}
    generation_notes: dict = {}

    # -- generate ---------------------------------------------------------------------------------------
    if lm is not None and (n_criteria or n_rubrics or example_judge or optimizer or criteria):
        from pytest_nlgeval.induction.judge_generation import generate_judges, judge_card
        from pytest_nlgeval.induction.judges import run_judge

        specs, generation_notes = generate_judges(
            train,
            task=task,
            target=target,
            lm=lm,
            n_criteria=n_criteria,
            n_rubrics=n_rubrics,
            example_based=example_judge,
            optimizer=optimizer,
            seed=seed,
            num_threads=num_threads,
            progress=say,
            read=judge_read,
            criteria=criteria,
        )
        ident = lm_identity(lm.inner)
        for i, spec in enumerate(specs, 1):
            say(f"[{i}/{len(specs)}] judging {len(train)} training outputs with {spec.name}  ({lm.usage.summary()})")
            run = run_judge(
                spec,
                lm,
                train.outputs,
                train.inputs,
                train.references,
                num_threads=num_threads,
                progress=sys.stderr if progress is not None else None,  # a bar over the rows of this judge
            )
            judge_runs[spec.name] = run
            failures[spec.name] = run.failures
            retries[spec.name] = run.retries
            if run.failures == len(run.results):
                # Not one parsed score: the column carries no information, and keeping it would drop every row.
                notes.append(f"{spec.name}: no output could be parsed on any training row; left out of the fit")
                continue
            names.append(spec.name)
            generated.append(True)
            columns.append(run.values)
            components[spec.name] = Component(
                kind="judge",
                name=spec.name,
                signature=spec.signature,
                judge=spec.to_dict(),
                card=judge_card(spec, ident),
            )
        bad = {k: v for k, v in failures.items() if v}
        if bad:
            notes.append(
                "judge outputs that could not be parsed (left unscored, rows left out of the fit): "
                + ", ".join(f"{k} {v}" for k, v in bad.items())
            )

    # -- retrieve -------------------------------------------------------------------------------------------
    if use_bank:
        from pytest_nlgeval.induction.retrieve import RetrievedMetric, retrieve_metrics

        excluded = set(exclude_metrics)
        usable: dict[str, Any] = {}

        def allowed(metric_name: str) -> bool:
            if metric_name in excluded:
                return False
            metric = _usable(metric_name, train, notes)
            if metric is None:
                return False
            usable[metric_name] = metric
            return True

        if metrics is not None:
            hits = [RetrievedMetric(m, math.nan, i) for i, m in enumerate(metrics) if allowed(m)]
            say(f"using {len(hits)} bank metrics given explicitly")
        else:
            hits = retrieve_metrics(task, target, k=k, allowed=allowed, rerank_lm=lm if rerank else None)
            say(f"retrieved {len(hits)} bank metrics by their cards (BM25, k={k}{', LLM rerank' if rerank else ''})")
        for h in hits:
            metric = usable[h.name]
            say(f"scoring {len(train)} training outputs with {h.name}")
            try:
                values = _bank_values(metric, train)
            except Exception as exc:
                notes.append(
                    f"bank metric {h.name} failed on the training rows and was skipped: "
                    f"{type(exc).__name__}: {str(exc)[:300]}"
                )
                continue
            retrieved_report.append(
                {
                    "name": h.name,
                    "bm25": None if math.isnan(h.score) else h.score,
                    "rank": h.rank,
                    "reranked": h.reranked,
                }
            )
            names.append(h.name)
            generated.append(False)
            columns.append(values)
            components[h.name] = Component(kind="bank", name=h.name, params={}, signature=metric.signature)
            bank_metrics[h.name] = metric

    if not names:
        raise InductionError(
            "no candidate metric could be computed for this dataset; see the notes: " + "; ".join(notes)
        )

    # -- regress --------------------------------------------------------------------------------------------
    # A row enters the fit only when every candidate scored it; judges that often failed to parse would leave
    # too few rows, so the sparsest judge is left out until at least half the training rows are complete.
    need = max(5, math.ceil(len(train) / 2))
    while True:
        defined = np.isfinite(np.array(columns, dtype=float))
        if int(defined.all(axis=0).sum()) >= need:
            break
        sparse = [(int((~defined[j]).sum()), j) for j in range(len(names)) if generated[j] and not defined[j].all()]
        if not sparse or len(names) == 1:
            break
        missing, j = max(sparse)
        notes.append(
            f"{names[j]}: {missing} of {len(train)} training outputs could not be parsed; left out of the "
            "fit so that enough rows have every candidate scored"
        )
        del names[j], generated[j], columns[j]
    _drop_identical(names, generated, columns, notes)
    X = np.array(columns, dtype=float).T
    say(f"regressing {len(names)} candidates (PLS, 1 component, keep {n_keep})")
    try:
        fit = fit_pls(X, y_train, names, generated=generated, n_keep=n_keep)
    except RegressionError as exc:
        raise InductionError(f"regression failed: {exc}") from None
    if fit.rows_dropped:
        notes.append(f"{fit.rows_dropped} training rows left out of the fit because a judge gave no score")
    if fit.constant_dropped:
        notes.append("constant on the training rows, left out: " + ", ".join(fit.constant_dropped))
    candidate_tau = {n: _kendall(col, y_train) for n, col in zip(names, columns)}

    lo, hi = float(dataset.labels(target).min()), float(dataset.labels(target).max())
    lm_ident = lm_identity(lm.inner) if lm is not None else None
    metric = InducedMetric(
        name=name or target,
        task=task,
        target=target,
        label_kind=dataset.label_kind(target),
        label_range=(lo, hi),
        components=[components[n] for n in fit.names],
        mean=fit.mean,
        scale=fit.scale,
        weights=fit.weights,
        coefficients=fit.coefficients,
        intercept=fit.intercept,
        lm_identity=lm_ident,
        needs_input=any(_needs(components[n], bank_metrics.get(n), "input") for n in fit.names),
        needs_references=any(_needs(components[n], bank_metrics.get(n), "references") for n in fit.names),
    )
    if lm is not None:
        metric._lm = lm
    train_pred = fit.predict(X[:, [names.index(n) for n in fit.names]])

    # -- report: held-out agreement ---------------------------------------------------------------------------
    say(f"scoring {len(test)} held-out outputs")
    rows, rationales, errors = metric.component_values(
        test.outputs,
        test.inputs if test.has_inputs else None,
        test.references if test.has_references else None,
        num_threads=num_threads,
    )
    test_pred = metric.predict_rows(rows, check_range=False)
    low, high = metric.allowed_range
    beyond = sum(1 for v in test_pred if math.isfinite(v) and not low <= v <= high)
    if beyond:
        notes.append(
            f"{beyond} held-out outputs score outside {low:g} to {high:g} (the label range widened by "
            f"{RANGE_TOLERANCE:g} spans each side); the metric refuses such scores when it is used, so label "
            "outputs like them and induce again"
        )
    y_test = test.labels(target)
    agreement = kendall_agreement(y_test, test_pred, n_boot=n_boot, seed=seed)
    if not agreement.significant:
        msg = (
            f"induced metric {metric.name!r}: held-out Kendall tau {agreement.tau:.3f} has p = {agreement.p_value:.3g} "
            f"> 0.05 on {agreement.n} rows; the metric is not shown to track the labels (label more outputs)"
        )
        warnings.warn(msg, InductionWarning, stacklevel=2)
        notes.append(msg)
    unscored_test = sum(1 for v in test_pred if not math.isfinite(v))
    if unscored_test:
        notes.append(f"{unscored_test} held-out rows have no score (judge output not parsed) and are left out of tau")

    robust = None
    if robustness:
        say(f"measuring sensitivity and stability on {len(test)} held-out outputs")
        from pytest_nlgeval.induction.robustness import measure_robustness

        robust = measure_robustness(
            lambda o, i, r: metric.predict_rows(
                metric.component_values(o, i if test.has_inputs else None, r if test.has_references else None)[0],
                check_range=False,
            ),
            test.outputs,
            test.inputs,
            test.references,
            seed=seed,
            lm=lm if (lm is not None and llm_perturbations) else None,
            task=task,
            target=target,
        )

    # -- provenance and report ------------------------------------------------------------------------------------
    components_report = []
    held_cols = list(zip(*rows)) if rows else []
    for j, comp_name in enumerate(fit.names):
        comp = components[comp_name]
        components_report.append(
            {
                "name": comp_name,
                "kind": comp.kind,
                "weight": fit.weights[j],
                "coefficient": fit.coefficients[j],
                "mean": fit.mean[j],
                "scale": fit.scale[j],
                "tau_train": candidate_tau.get(comp_name),
                "tau_heldout": _kendall(held_cols[j], y_test) if held_cols else None,
                "criterion": (comp.judge or {}).get("criterion"),
                "signature": comp.signature,
            }
        )
    examples = _example_judgments(test, target, test_pred, rows, rationales, errors, fit.names)
    report = {
        "notes": notes,
        "mode": "bank metrics only"
        if lm is None
        else ("judges and bank metrics" if use_bank else "generated judges only"),
        "steps": [s.__dict__ for s in fit.steps],
        "candidates": [
            {
                "name": n,
                "kind": "judge" if g else "bank",
                "tau_train": candidate_tau.get(n),
                "selected": n in fit.names,
                "parse_failures": failures.get(n, 0),
            }
            for n, g in zip(names, generated)
        ],
        "components": components_report,
        "retrieved": retrieved_report,
        "generation": generation_notes,
        "examples": examples,
        "train_fit_tau": _kendall(train_pred, y_train),
        # the fitted predictions of the training rows (by file line), for InducedMetric.verify()
        "fit_check": {"lines": [e.line for e in train.examples], "predictions": train_pred},
    }
    # Notes quote exception messages, which often name files: the artifact is committed and read on other
    # machines, so it never carries this machine's absolute paths.
    report["notes"] = [local_paths_removed(note) for note in _dedupe(notes)]
    pkgs = ["pytest-nlgeval", "numpy", "scipy", "scikit-learn", "rank-bm25", "sacrebleu", "rouge-score", "rapidfuzz"]
    if lm is not None:
        pkgs += ["dspy", "litellm"]
    metric.provenance = {
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "python": platform.python_version(),
        "packages": _packages(pkgs),
        "seed": seed,
        "dataset": {
            "source": dataset.source.replace("\\", "/").split("/")[-1],
            "sha256": dataset.sha256,
            "rows": n_rows,
            "train": len(train),
            "heldout": len(test),
            "target": target,
            "label_kind": dataset.label_kind(target),
            "label_range": [lo, hi],
        },
        "mode": report["mode"],
        "settings": {
            "n_keep": n_keep,
            "k": k,
            "rerank": rerank,
            "test_fraction": test_fraction,
            "n_criteria": n_criteria if lm is not None else 0,
            "n_rubrics": n_rubrics if lm is not None else 0,
            "example_judge": bool(example_judge and lm is not None),
            "optimizer": optimizer,
            "use_bank": use_bank,
        },
        "fit": {"rows_used": fit.rows_used, "rows_dropped": fit.rows_dropped},
        "heldout": agreement.to_dict(),
        "robustness": robust.to_dict() if robust is not None else None,
        "sensitivity": robust.sensitivity if robust is not None else None,
        "stability": robust.stability if robust is not None else None,
        "llm_usage": usage.to_dict() if usage is not None else None,
        "judge_parse_failures": failures,
        # first answers that did not parse and were asked for again (a failure above was retried and failed again)
        "judge_retries": retries,
        "seconds": round(time.time() - started, 1),
    }
    metric.report = report
    say(
        f"done: held-out Kendall tau {agreement.tau:.3f} (p={agreement.p_value:.3g}, "
        f"95% CI {agreement.ci_low:.3f}..{agreement.ci_high:.3f}, n={agreement.n})"
        + (f"; {usage.summary()}" if usage is not None else "")
    )
    return metric


def _dedupe(notes: list[str]) -> list[str]:
    """Collapse notes that repeat one message for many metrics (e.g. a missing model) into one line."""
    out: list[str] = []
    groups: dict[str, list[str]] = {}
    for note in notes:
        if note.startswith("bank metric ") and ": " in note:
            head, _, reason = note.partition(": ")
            name = head.split()[2]
            what = " ".join(head.split()[3:])
            groups.setdefault(f"{what}: {reason}", []).append(name)
        else:
            out.append(note)
    for key, names in groups.items():
        what, _, reason = key.partition(": ")
        plural = len(names) > 1
        out.append(
            f"bank metric{'s' if plural else ''} {', '.join(names)} "
            f"{what.replace(' was ', ' were ') if plural else what}: {reason}"
        )
    return out


def _example_judgments(test, target, preds, rows, rationales, errors, names, n: int = 6) -> list[dict]:
    """Held-out rows spread over the predicted range (highest, lowest, middle) for the report card."""
    order = sorted((i for i in range(len(preds)) if math.isfinite(preds[i])), key=lambda i: preds[i])
    if not order:
        return []
    picks: list[int] = []
    for pos in (len(order) - 1, 0, len(order) // 2, len(order) - 2, 1, len(order) // 2 + 1):
        if 0 <= pos < len(order) and order[pos] not in picks:
            picks.append(order[pos])
        if len(picks) >= n:
            break
    out = []
    for i in picks:
        ex = test.examples[i]
        out.append(
            {
                "input": ex.input,
                "output": ex.output,
                "label": ex.labels[target],
                "prediction": preds[i],
                "components": {nm: rows[i][j] for j, nm in enumerate(names)},
                "rationales": rationales[i],
                "errors": errors[i],
            }
        )
    return out
