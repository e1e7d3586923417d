"""LLM judges generated from labelled examples (AutoMetrics "Generate" step), written as DSPy signatures.

Ryan et al. (2025), Section 3.1 and Appendix E.2:

* single-criterion judges: the LLM sees the task, the target, 5 high-scored and 5 low-scored examples and
  proposes axes of variation; each axis becomes a judge that outputs an integer score 1-5;
* rubric judges: for an axis, the LLM also writes what an output at each score level 1-5 looks like;
* an example-based judge: scored examples are sampled uniformly from the label quintiles; several sets
  are tried and the set with the smallest mean absolute error on training rows is kept;
* optionally a prompt-optimised judge (DSPy MIPROv2 or GEPA).

Each generated judge is a :class:`~pytest_nlgeval.induction.judges.JudgeSpec`, run by
:func:`~pytest_nlgeval.induction.judges.run_judge`; :func:`judge_card` describes it in a metric card.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from typing import Callable, Sequence

from pytest_nlgeval.induction.judges import (
    JudgeSpec,
    chat_adapter,
    clip,
    judge_inputs,
    judge_predictor,
    parse_errors,
    retry_config,
    run_judge,
    short_error,
    signatures,
)
from pytest_nlgeval.llm.cache import require_dspy

__all__ = [
    "ExampleSelection",
    "criterion_judges",
    "example_judge",
    "generate_judges",
    "high_low_examples",
    "judge_card",
    "optimized_judge",
    "propose_axes",
    "rubric_judges",
    "to_five_point",
]


# -- generation ---------------------------------------------------------------------------------------


def high_low_examples(labels: Sequence[float], n: int = 5, seed: int = 0) -> tuple[list[int], list[int]]:
    """Indices of the ``n`` highest- and ``n`` lowest-labelled rows (ties broken by a seeded shuffle)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(labels))
    order = sorted(idx.tolist(), key=lambda i: labels[i])
    n = min(n, len(order) // 2)
    return list(reversed(order[-n:])), order[:n]


def _example_block(dataset, indices: list[int], target: str) -> str:
    blocks = []
    for k, i in enumerate(indices, 1):
        ex = dataset.examples[i]
        parts = [f"Example {k} ({target} = {ex.labels[target]:g})"]
        if ex.input is not None:
            parts.append(f"Input: {clip(ex.input, 800)}")
        parts.append(f"Output: {clip(ex.output, 1000)}")
        blocks.append("\n".join(parts))
    return "\n\n".join(blocks)


def _slug(text: str, taken: set[str]) -> str:
    head = text.split(":")[0] if ":" in text[:60] else " ".join(text.split()[:4])
    words = re.findall(r"[a-z0-9]+", head.lower())[:4] or ["criterion"]
    base = "judge_" + "_".join(words)
    name, k = base, 2
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    taken.add(name)
    return name


def propose_axes(dataset, *, task: str, target: str, lm, n_axes: int = 15, seed: int = 0) -> list[str]:
    """Ask the LLM for axes of variation between the 5 highest- and 5 lowest-labelled training rows."""
    dspy = require_dspy()
    labels = [e.labels[target] for e in dataset.examples]
    high, low = high_low_examples(labels, 5, seed)
    predictor = dspy.Predict(signatures()["ProposeAxes"])
    fields = dict(
        task=task,
        target=target,
        high_scored=_example_block(dataset, high, target),
        low_scored=_example_block(dataset, low, target),
        num_axes=n_axes,
    )
    with dspy.context(lm=lm, adapter=chat_adapter()):
        try:
            pred = predictor(**fields)
        except parse_errors():
            pred = predictor(**fields, config=retry_config(lm))
    axes = [" ".join(str(a).split()) for a in (pred.axes or []) if str(a).strip()]
    seen, unique = set(), []
    for axis in axes:
        if axis.lower() not in seen:
            seen.add(axis.lower())
            unique.append(axis)
    if not unique:
        raise ValueError("the LLM proposed no axes of variation; check the model and the task description")
    return unique[:n_axes]


def criterion_judges(
    axes: Sequence[str],
    *,
    task: str,
    target: str,
    uses_input: bool,
    uses_references: bool,
    taken: set[str] | None = None,
) -> list[JudgeSpec]:
    """One single-criterion judge per axis."""
    taken = taken if taken is not None else set()
    return [
        JudgeSpec(
            kind="criterion",
            name=_slug(axis, taken),
            task=task,
            target=target,
            criterion=axis,
            uses_input=uses_input,
            uses_references=uses_references,
        )
        for axis in axes
    ]


def rubric_judges(
    axes: Sequence[str],
    *,
    task: str,
    target: str,
    lm,
    uses_input: bool,
    uses_references: bool,
    taken: set[str] | None = None,
) -> list[JudgeSpec]:
    """One rubric judge per axis; the LLM writes a description of each score level 1-5."""
    dspy = require_dspy()
    taken = taken if taken is not None else set()
    predictor = dspy.Predict(signatures()["WriteRubric"])
    specs = []
    for axis in axes:
        with dspy.context(lm=lm, adapter=chat_adapter()):
            try:
                pred = predictor(task=task, target=target, criterion=axis)
            except parse_errors():
                try:
                    pred = predictor(task=task, target=target, criterion=axis, config=retry_config(lm))
                except parse_errors():
                    continue  # no rubric for this axis: its criterion judge still runs
        rubric = {str(k): " ".join(str(getattr(pred, f"score_{k}") or "").split()) for k in range(1, 6)}
        name = _slug(axis, taken).replace("judge_", "rubric_", 1)
        specs.append(
            JudgeSpec(
                kind="rubric",
                name=name,
                task=task,
                target=target,
                criterion=axis,
                rubric=rubric,
                uses_input=uses_input,
                uses_references=uses_references,
            )
        )
    return specs


def to_five_point(values, low: float, high: float) -> list[float]:
    """Map labels linearly from ``[low, high]`` onto the judges' 1-5 scale."""
    span = (high - low) or 1.0
    return [1.0 + 4.0 * (float(v) - low) / span for v in values]


@dataclass
class ExampleSelection:
    """What the example-based judge tried: per candidate set, the mean absolute error on the rows scored."""

    errors: list[float] = field(default_factory=list)
    failures: list[int] = field(default_factory=list)
    chosen: int = 0


def example_judge(
    dataset,
    *,
    task: str,
    target: str,
    lm,
    per_quintile: int = 1,
    n_sets: int = 5,
    eval_rows: int = 20,
    seed: int = 0,
    uses_input: bool = True,
    uses_references: bool = False,
    num_threads: int = 1,
    read: str = "form",
) -> tuple[JudgeSpec, ExampleSelection]:
    """The example-based judge: ``n_sets`` candidate sets, each with ``per_quintile`` rows from each label
    quintile; the set whose judgments have the lowest mean absolute error (on the 1-5 scale) against the
    labels of ``eval_rows`` other training rows is kept.

    The error is computed here directly; the reference toolkit read it from DSPy's ``Evaluate``, whose
    return value became an object in DSPy 3.x, and silently ended up with no examples.
    """
    import numpy as np

    labels = np.array([e.labels[target] for e in dataset.examples], dtype=float)
    lo, hi = float(labels.min()), float(labels.max())
    scaled = to_five_point(labels, lo, hi)
    rng = np.random.default_rng(seed)
    order = np.argsort(labels, kind="stable")
    quintiles = [q for q in np.array_split(order, 5) if len(q)]
    selection = ExampleSelection()
    best: tuple[float, list[int]] | None = None
    candidates: list[list[int]] = []
    for _ in range(n_sets):
        chosen: list[int] = []
        for q in quintiles:
            take = min(per_quintile, len(q))
            chosen.extend(int(i) for i in rng.choice(q, size=take, replace=False))
        candidates.append(sorted(chosen, key=lambda i: labels[i]))
    for k, chosen in enumerate(candidates):
        rest = [i for i in range(len(labels)) if i not in set(chosen)]
        eval_idx = sorted(rng.choice(rest, size=min(eval_rows, len(rest)), replace=False).tolist())
        spec = _examples_spec(dataset, chosen, scaled, task, target, uses_input, uses_references, "judge_examples")
        spec.read = read
        run = run_judge(
            spec,
            lm,
            [dataset.examples[i].output for i in eval_idx],
            [dataset.examples[i].input for i in eval_idx],
            [dataset.examples[i].references for i in eval_idx],
            num_threads=num_threads,
        )
        errs = [abs(v - scaled[i]) for v, i in zip(run.values, eval_idx) if math.isfinite(v)]
        err = float(np.mean(errs)) if errs else math.inf
        selection.errors.append(err)
        selection.failures.append(run.failures)
        if best is None or err < best[0]:
            best = (err, chosen)
            selection.chosen = k
    assert best is not None
    spec = _examples_spec(dataset, best[1], scaled, task, target, uses_input, uses_references, "judge_examples")
    spec.read = read
    return spec, selection


def _examples_spec(dataset, chosen, scaled, task, target, uses_input, uses_references, name) -> JudgeSpec:
    examples = []
    for i in chosen:
        ex = dataset.examples[i]
        examples.append(
            {
                "input": ex.input if uses_input else None,
                "references": list(ex.references) if (uses_references and ex.references) else None,
                "output": ex.output,
                "score": round(float(scaled[i]), 2),
            }
        )
    return JudgeSpec(
        kind="examples",
        name=name,
        task=task,
        target=target,
        criterion=f"Overall {target}, judged like the human raters of the scored examples.",
        examples=examples,
        uses_input=uses_input,
        uses_references=uses_references,
    )


def optimized_judge(
    dataset,
    *,
    task: str,
    target: str,
    lm,
    optimizer: str = "mipro",
    seed: int = 0,
    uses_input: bool = True,
    uses_references: bool = False,
    reflection_lm=None,
    auto: str | None = "light",
    max_metric_calls: int | None = None,
    num_threads: int = 1,
    budget: dict | None = None,
) -> JudgeSpec:
    """A judge whose prompt an optimiser rewrote: ``optimizer="mipro"`` (MIPROv2) or ``"gepa"`` (GEPA).

    The training metric is ``1 - |score - label| / 4`` on the 1-5 scale. The optimised instructions and
    demonstrations are copied into the returned spec, so the artifact can rebuild the judge without DSPy's
    program files. ``max_metric_calls`` (GEPA) replaces the ``auto`` budget when given; for MIPROv2 with
    ``auto=None``, ``budget`` holds ``num_candidates`` and the compile options (``num_trials``, ...).
    """
    dspy = require_dspy()
    labels = [e.labels[target] for e in dataset.examples]
    scaled = to_five_point(labels, min(labels), max(labels))
    base = JudgeSpec(
        kind="optimized",
        name=f"judge_{optimizer}",
        task=task,
        target=target,
        criterion=f"Overall {target}.",
        uses_input=uses_input,
        uses_references=uses_references,
    )
    trainset = []
    for ex, y in zip(dataset.examples, scaled):
        fields = judge_inputs(base, ex.output, ex.input, ex.references)
        trainset.append(dspy.Example(**fields, gold=float(y)).with_inputs(*fields.keys()))

    def closeness(gold, pred, trace=None, pred_name=None, pred_trace=None):
        try:
            value = 1.0 - abs(float(pred.score) - gold.gold) / 4.0
        except (TypeError, ValueError):
            value = 0.0
        if optimizer == "gepa":
            return dspy.Prediction(score=value, feedback=f"human score {gold.gold:.1f}, judged {pred.score}")
        return value

    program = judge_predictor(base)
    with dspy.context(lm=lm, adapter=chat_adapter()):
        if optimizer == "mipro":
            extra = dict(budget or {})
            opt = dspy.MIPROv2(
                metric=closeness,
                auto=auto,
                num_threads=num_threads,
                seed=seed,
                num_candidates=extra.pop("num_candidates", None),
            )
            try:
                compiled = opt.compile(program, trainset=trainset, **extra)
            except ImportError as exc:  # DSPy's MIPROv2 searches with optuna, an extra of dspy
                raise ImportError(
                    f"the MIPROv2-optimised judge needs optuna: pip install \"dspy[optuna]\" "
                    f"(or use optimizer='gepa'); {exc}"
                ) from exc
        elif optimizer == "gepa":
            budget = {"max_metric_calls": max_metric_calls} if max_metric_calls else {"auto": auto}
            opt = dspy.GEPA(
                metric=closeness, reflection_lm=reflection_lm or lm, num_threads=num_threads, seed=seed, **budget
            )
            compiled = opt.compile(program, trainset=trainset)
        else:
            raise ValueError(f"optimizer must be 'mipro' or 'gepa', got {optimizer!r}")
    predictor = compiled.predictors()[0] if hasattr(compiled, "predictors") else compiled
    base.instructions = predictor.signature.instructions
    base.demos = [dict(d) if not hasattr(d, "toDict") else d.toDict() for d in (predictor.demos or [])]
    return base


# -- metric cards ----------------------------------------------------------------------------------------

_KIND_TEXT = {
    "criterion": "a single-criterion LLM judge: the criterion was proposed by an LLM as an axis of variation "
    "between high- and low-scored training outputs",
    "rubric": "a rubric LLM judge: an LLM-proposed criterion with a written description of each score level",
    "examples": "an example-based LLM judge: scored training outputs from each label quintile are shown to the "
    "judge; the example set with the lowest training error was kept",
    "optimized": "an LLM judge whose prompt was rewritten by a DSPy optimiser on the training rows",
}


def judge_card(spec: JudgeSpec, lm_identity: dict | None = None) -> str:
    """A metric card (the AutoMetrics sections, Markdown) describing a generated judge."""
    model = (lm_identity or {}).get("model", "the configured LLM")
    lines = [
        f"# {spec.name}",
        "",
        f"{spec.criterion}",
        "",
        "## Metric Details",
        "",
        f"- Kind: {_KIND_TEXT.get(spec.kind, spec.kind)}.",
        f"- Task: {spec.task}",
        f"- Target quality: {spec.target}",
        "- Range: integers 1 to 5; higher is better.",
        f"- Input-required: {'yes' if spec.uses_input else 'no'}; "
        f"reference-based: {'yes' if spec.uses_references else 'no'}.",
        f"- Signature: `{spec.signature}`",
    ]
    if spec.rubric:
        lines += ["", "Rubric:"] + [f"- {k}: {spec.rubric[k]}" for k in sorted(spec.rubric)]
    if spec.examples:
        lines += [
            "",
            f"Scored examples in the prompt: {len(spec.examples)} "
            f"(scores {', '.join(format(e['score'], 'g') for e in spec.examples)} on the 1-5 scale).",
        ]
    lines += [
        "",
        "## Intended Use",
        "",
        f"Scoring outputs of the task above for {spec.target}, as one component of an induced metric whose "
        "weights were fitted to human labels. On its own it is an uncalibrated LLM opinion.",
        "",
        "## Implementation and Cost",
        "",
        f"One call of {model} per output (cached on disk by model, parameters and prompt). Outputs that "
        "cannot be parsed into a score 1-5 are retried once and then left unscored.",
        "",
        "## Known Limitations",
        "",
        "LLM judges favour longer and more confident text, are sensitive to prompt wording and can drift "
        "when the model behind the API changes; the criterion was written from a handful of examples.",
        "",
        "## Related Metrics",
        "",
        "The other generated judges of the same induced metric.",
        "",
        "## Further Reading",
        "",
        "Ryan et al. (2025), AutoMetrics: approximate human judgments with automatically generated evaluators.",
        "",
    ]
    return "\n".join(lines)


def generate_judges(
    dataset,
    *,
    task: str,
    target: str,
    lm,
    n_criteria: int = 10,
    n_rubrics: int = 5,
    example_based: bool = True,
    optimizer: str | None = None,
    seed: int = 0,
    num_threads: int = 1,
    progress: Callable[[str], None] | None = None,
    read: str = "form",
    criteria: Sequence[str] | None = None,
) -> tuple[list[JudgeSpec], dict]:
    """All generated judges for ``dataset`` (the training rows); returns (specs, generation notes).

    ``read``: how every judge is read (see :class:`JudgeSpec`); ``completion`` takes no prompt-optimised
    judge (an optimiser tunes a written answer). ``criteria``: criteria written by the user, one judge each,
    instead of axes proposed by the LLM (a small or base model cannot propose them).
    """
    if read not in ("form", "completion"):
        raise ValueError(f"read must be 'form' or 'completion', got {read!r}")
    if read == "completion" and optimizer:
        raise ValueError("a prompt-optimised judge writes its answer: it cannot be read from the scale (read='form')")
    say = progress or (lambda msg: None)
    uses_input = dataset.has_inputs
    uses_refs = dataset.has_references
    specs: list[JudgeSpec] = []
    notes: dict = {}
    taken: set[str] = set()
    if criteria:
        given = [c.strip() for c in criteria if c and c.strip()]
        notes["criteria_given"] = given
        specs += criterion_judges(
            given, task=task, target=target, uses_input=uses_input, uses_references=uses_refs, taken=taken
        )
        n_criteria = 0
    if n_criteria or n_rubrics:
        say(f"proposing {n_criteria + n_rubrics} axes of variation")
        try:
            axes = propose_axes(dataset, task=task, target=target, lm=lm, n_axes=n_criteria + n_rubrics, seed=seed)
        except parse_errors() as exc:
            # A model too weak to follow the format gives no criteria; the other judges may still work.
            notes["axes_unparsed"] = short_error(exc)
            say("the LLM's axes of variation could not be parsed (asked twice): no criterion or rubric judges")
            axes = []
            n_criteria = n_rubrics = 0
        notes["axes"] = axes
        crit_axes = axes[:n_criteria]
        rub_axes = axes[n_criteria : n_criteria + n_rubrics] or axes[:n_rubrics]
        specs += criterion_judges(
            crit_axes, task=task, target=target, uses_input=uses_input, uses_references=uses_refs, taken=taken
        )
        if n_rubrics:
            say(f"writing {len(rub_axes)} rubrics")
            specs += rubric_judges(
                rub_axes, task=task, target=target, lm=lm, uses_input=uses_input, uses_references=uses_refs, taken=taken
            )
    if example_based:
        say("choosing examples for the example-based judge")
        spec, selection = example_judge(
            dataset,
            task=task,
            target=target,
            lm=lm,
            seed=seed,
            uses_input=uses_input,
            uses_references=uses_refs,
            num_threads=num_threads,
            read=read,
        )
        specs.append(spec)
        notes["example_selection"] = asdict(selection)
    if optimizer:
        say(f"optimising a judge with {optimizer}")
        specs.append(
            optimized_judge(
                dataset,
                task=task,
                target=target,
                lm=lm,
                optimizer=optimizer,
                seed=seed,
                uses_input=uses_input,
                uses_references=uses_refs,
                num_threads=num_threads,
            )
        )
    for spec in specs:
        spec.read = read
    return specs, notes
