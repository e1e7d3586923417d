"""LLM judges generated from labelled examples (AutoMetrics "Generate" step), written as DSPy signatures.

Ryan et al. (2025), Section 3.1 and Appendix E.2:

* single-criterion judges: the LLM sees the task, the target, 5 high-scored and 5 low-scored examples and
  proposes axes of variation; each axis becomes a judge that outputs an integer score 1-5;
* rubric judges: for an axis, the LLM also writes what an output at each score level 1-5 looks like;
* an example-based judge: scored examples are sampled uniformly from the label quintiles; several sets
  are tried and the set with the smallest mean absolute error on training rows is kept;
* optionally a prompt-optimised judge (DSPy MIPROv2 or GEPA).

Every judge is a :class:`JudgeSpec` (plain data saved in the metric artifact) run through one DSPy
signature whose ``score`` output is ``Literal[1, 2, 3, 4, 5]`` (DSPy enforces a Literal; it does not enforce
``ge``/``le`` bounds on an int). An output that does not parse is asked for once more; if it still does not
parse, the row gets no score (``nan``) and the failure is counted and reported, never turned into a number.

Example::

    >>> from pytest_nlgeval.induction.judges import JudgeSpec, run_judge      # doctest: +SKIP
    >>> spec = JudgeSpec(kind="criterion", name="judge_concise", task="Answer questions",
    ...                  target="helpfulness", criterion="The answer is concise.")  # doctest: +SKIP
    >>> run_judge(spec, lm, ["Paris."], inputs=["Capital of France?"])[0].value  # doctest: +SKIP
    5.0
"""
from __future__ import annotations

import math
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Literal, Sequence  # Literal: resolved by name in the signatures below

from pytest_nlgeval.induction.llmcache import require_dspy

__all__ = ["JudgeSpec", "JudgeResult", "JudgeRun", "run_judge", "propose_axes", "criterion_judges",
           "rubric_judges", "example_judge", "optimized_judge", "judge_card", "high_low_examples"]

_MAX_TEXT = 1500  # characters of one example shown in a generation prompt
NONE = "(none)"


@dataclass
class JudgeSpec:
    """A generated judge as data: everything needed to rebuild its prompt.

    ``kind`` is ``criterion`` | ``rubric`` | ``examples`` | ``optimized``; ``rubric`` maps ``"1"``..``"5"``
    to level descriptions; ``examples`` are ``{"input", "output", "references", "score"}`` dicts with the
    score on the 1-5 scale; ``instructions``/``demos`` hold what an optimiser produced.
    """

    kind: str
    name: str
    task: str
    target: str
    criterion: str
    rubric: dict[str, str] | None = None
    examples: list[dict] | None = None
    instructions: str | None = None
    demos: list[dict] | None = None
    uses_input: bool = True
    uses_references: bool = False
    signature: str = "JudgeOutput(task, criterion, rubric, examples, input, references, output -> rationale, score: Literal[1,2,3,4,5])"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "JudgeSpec":
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class JudgeResult:
    """One judgment: ``value`` (1-5, or ``nan`` when the output never parsed), the judge's rationale, and
    the parse error when there was one."""

    value: float
    rationale: str | None = None
    error: str | None = None


@dataclass
class JudgeRun:
    """Judgments of one judge on many outputs, with the count of outputs that could not be parsed."""

    name: str
    results: list[JudgeResult]
    retries: int = 0

    @property
    def values(self) -> list[float]:
        return [r.value for r in self.results]

    @property
    def failures(self) -> int:
        return sum(1 for r in self.results if r.error is not None)


# -- signatures (built on first use so that importing this module does not import dspy) -----------------

_SIGS: dict[str, type] = {}


def _signatures() -> dict[str, Any]:
    if _SIGS:
        return _SIGS
    dspy: Any = require_dspy()  # imported on first use: the [judges] extra

    class JudgeOutput(dspy.Signature):
        """Judge one output of a text-generation task against the criterion, on a scale from 1 (worst) to
        5 (best). Use the rubric and the scored examples when they are given. Give a short rationale
        first, then the score."""

        task: str = dspy.InputField(desc="what the system was asked to do")
        criterion: str = dspy.InputField(desc="the quality to judge")
        rubric: str = dspy.InputField(desc="what each score level means, or (none)")
        examples: str = dspy.InputField(desc="outputs scored by human raters on the same 1-5 scale, or (none)")
        input: str = dspy.InputField(desc="the input the system was given, or (none)")
        references: str = dspy.InputField(desc="reference outputs, or (none)")
        output: str = dspy.InputField(desc="the system output to judge")
        rationale: str = dspy.OutputField(desc="one to three sentences: why this score")
        score: Literal[1, 2, 3, 4, 5] = dspy.OutputField(desc="integer from 1 (worst) to 5 (best)")

    class ProposeAxes(dspy.Signature):
        """Human raters scored outputs of a text-generation task on a target quality. Compare the
        high-scored outputs with the low-scored ones and propose distinct axes of variation: concrete,
        checkable qualities that separate them. Write each axis as one sentence that names the quality
        and says what a good output does."""

        task: str = dspy.InputField()
        target: str = dspy.InputField(desc="the human label being explained")
        high_scored: str = dspy.InputField(desc="outputs with high human scores")
        low_scored: str = dspy.InputField(desc="outputs with low human scores")
        num_axes: int = dspy.InputField(desc="how many axes to propose")
        axes: list[str] = dspy.OutputField(desc="the axes, one sentence each, most important first")

    class WriteRubric(dspy.Signature):
        """Write a five-level scoring rubric for one criterion of a text-generation task: for each score
        from 1 (worst) to 5 (best), describe what an output at that level looks like."""

        task: str = dspy.InputField()
        target: str = dspy.InputField(desc="the human label the criterion helps predict")
        criterion: str = dspy.InputField()
        score_1: str = dspy.OutputField(desc="an output that deserves 1")
        score_2: str = dspy.OutputField(desc="an output that deserves 2")
        score_3: str = dspy.OutputField(desc="an output that deserves 3")
        score_4: str = dspy.OutputField(desc="an output that deserves 4")
        score_5: str = dspy.OutputField(desc="an output that deserves 5")

    _SIGS.update(JudgeOutput=JudgeOutput, ProposeAxes=ProposeAxes, WriteRubric=WriteRubric)
    return _SIGS


def _adapter():
    dspy = require_dspy()
    # No silent second call through the JSON adapter: a parse failure is retried exactly once, here.
    return dspy.ChatAdapter(use_json_adapter_fallback=False)


def _parse_errors():
    from dspy.utils.exceptions import AdapterParseError

    return (AdapterParseError,)


# -- running a judge -------------------------------------------------------------------------------------


def _clip(text: str | None, limit: int = _MAX_TEXT) -> str:
    if text is None:
        return NONE
    text = str(text).strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _format_rubric(rubric: dict[str, str] | None) -> str:
    if not rubric:
        return NONE
    return "\n".join(f"{level}: {rubric[str(level)]}" for level in range(1, 6) if str(level) in rubric)


def _format_examples(examples: list[dict] | None) -> str:
    if not examples:
        return NONE
    blocks = []
    for i, ex in enumerate(examples, 1):
        parts = [f"Example {i} (human score {ex['score']:.1f} of 5)"]
        if ex.get("input"):
            parts.append(f"Input: {_clip(ex['input'], 600)}")
        if ex.get("references"):
            parts.append(f"Reference: {_clip(ex['references'][0], 400)}")
        parts.append(f"Output: {_clip(ex['output'], 800)}")
        blocks.append("\n".join(parts))
    return "\n\n".join(blocks)


def _judge_predictor(spec: JudgeSpec):
    dspy = require_dspy()
    sig = _signatures()["JudgeOutput"]
    if spec.instructions:
        sig = sig.with_instructions(spec.instructions)
    predictor = dspy.Predict(sig)
    if spec.demos:
        predictor.demos = [dspy.Example(**d) for d in spec.demos]
    return predictor


def _judge_inputs(spec: JudgeSpec, output: str, input: str | None, references) -> dict:
    refs = references if not isinstance(references, str) else [references]
    return {
        "task": spec.task,
        "criterion": spec.criterion,
        "rubric": _format_rubric(spec.rubric),
        "examples": _format_examples(spec.examples),
        "input": _clip(input) if spec.uses_input and input is not None else NONE,
        "references": "\n---\n".join(_clip(r, 800) for r in refs) if spec.uses_references and refs else NONE,
        "output": _clip(output, 4000),
    }


def _retry_config(lm) -> dict:
    # A different rollout id is a different cache entry, so the retry really asks the model again; at
    # temperature 0 the server would repeat itself, so the retry samples.
    config: dict[str, Any] = {"rollout_id": 1}
    temperature = (getattr(lm, "kwargs", {}) or {}).get("temperature")
    if not temperature:
        config["temperature"] = 0.7
    return config


def run_judge(spec: JudgeSpec, lm, outputs: Sequence[str], inputs: Sequence[str | None] | None = None,
              references: Sequence | None = None, *, num_threads: int = 1) -> JudgeRun:
    """Score ``outputs`` with one judge; ``lm`` is any ``dspy.BaseLM`` (wrap it with ``cached_lm``).

    Rows whose output cannot be parsed after one retry get ``nan`` and an ``error``; see
    :attr:`JudgeRun.failures`.
    """
    dspy = require_dspy()
    n = len(outputs)
    inputs = list(inputs) if inputs is not None else [None] * n
    references = list(references) if references is not None else [None] * n
    predictor = _judge_predictor(spec)
    errors = _parse_errors()
    retries = [0]
    lock = threading.Lock()

    def one(i: int) -> JudgeResult:
        fields = _judge_inputs(spec, outputs[i], inputs[i], references[i])
        with dspy.context(lm=lm, adapter=_adapter()):
            try:
                pred = predictor(**fields)
            except errors:
                with lock:
                    retries[0] += 1
                try:
                    pred = predictor(**fields, config=_retry_config(lm))
                except errors as exc:
                    return JudgeResult(math.nan, None, _short_error(exc))
        return JudgeResult(float(pred.score), str(pred.rationale or "").strip() or None)

    if num_threads > 1 and n > 1:
        pool = ThreadPoolExecutor(max_workers=num_threads)
        try:
            results = list(pool.map(one, range(n)))
        finally:
            # On a server error the rows not yet started are dropped instead of each waiting for a time-out.
            pool.shutdown(wait=True, cancel_futures=True)
    else:
        results = [one(i) for i in range(n)]
    return JudgeRun(spec.name, results, retries[0])


def _short_error(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return text[:300]


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
            parts.append(f"Input: {_clip(ex.input, 800)}")
        parts.append(f"Output: {_clip(ex.output, 1000)}")
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
    predictor = dspy.Predict(_signatures()["ProposeAxes"])
    fields = dict(task=task, target=target, high_scored=_example_block(dataset, high, target),
                  low_scored=_example_block(dataset, low, target), num_axes=n_axes)
    with dspy.context(lm=lm, adapter=_adapter()):
        try:
            pred = predictor(**fields)
        except _parse_errors():
            pred = predictor(**fields, config=_retry_config(lm))
    axes = [" ".join(str(a).split()) for a in (pred.axes or []) if str(a).strip()]
    seen, unique = set(), []
    for axis in axes:
        if axis.lower() not in seen:
            seen.add(axis.lower())
            unique.append(axis)
    if not unique:
        raise ValueError("the LLM proposed no axes of variation; check the model and the task description")
    return unique[:n_axes]


def criterion_judges(axes: Sequence[str], *, task: str, target: str, uses_input: bool, uses_references: bool,
                     taken: set[str] | None = None) -> list[JudgeSpec]:
    """One single-criterion judge per axis."""
    taken = taken if taken is not None else set()
    return [JudgeSpec(kind="criterion", name=_slug(axis, taken), task=task, target=target, criterion=axis,
                      uses_input=uses_input, uses_references=uses_references) for axis in axes]


def rubric_judges(axes: Sequence[str], *, task: str, target: str, lm, uses_input: bool, uses_references: bool,
                  taken: set[str] | None = None) -> list[JudgeSpec]:
    """One rubric judge per axis; the LLM writes a description of each score level 1-5."""
    dspy = require_dspy()
    taken = taken if taken is not None else set()
    predictor = dspy.Predict(_signatures()["WriteRubric"])
    specs = []
    for axis in axes:
        with dspy.context(lm=lm, adapter=_adapter()):
            try:
                pred = predictor(task=task, target=target, criterion=axis)
            except _parse_errors():
                try:
                    pred = predictor(task=task, target=target, criterion=axis, config=_retry_config(lm))
                except _parse_errors():
                    continue  # no rubric for this axis: its criterion judge still runs
        rubric = {str(k): " ".join(str(getattr(pred, f"score_{k}") or "").split()) for k in range(1, 6)}
        name = _slug(axis, taken).replace("judge_", "rubric_", 1)
        specs.append(JudgeSpec(kind="rubric", name=name, task=task, target=target, criterion=axis, rubric=rubric,
                               uses_input=uses_input, uses_references=uses_references))
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


def example_judge(dataset, *, task: str, target: str, lm, per_quintile: int = 1, n_sets: int = 5,
                  eval_rows: int = 20, seed: int = 0, uses_input: bool = True, uses_references: bool = False,
                  num_threads: int = 1) -> tuple[JudgeSpec, ExampleSelection]:
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
        run = run_judge(spec, lm, [dataset.examples[i].output for i in eval_idx],
                        [dataset.examples[i].input for i in eval_idx],
                        [dataset.examples[i].references for i in eval_idx], num_threads=num_threads)
        errs = [abs(v - scaled[i]) for v, i in zip(run.values, eval_idx) if math.isfinite(v)]
        err = float(np.mean(errs)) if errs else math.inf
        selection.errors.append(err)
        selection.failures.append(run.failures)
        if best is None or err < best[0]:
            best = (err, chosen)
            selection.chosen = k
    assert best is not None
    spec = _examples_spec(dataset, best[1], scaled, task, target, uses_input, uses_references, "judge_examples")
    return spec, selection


def _examples_spec(dataset, chosen, scaled, task, target, uses_input, uses_references, name) -> JudgeSpec:
    examples = []
    for i in chosen:
        ex = dataset.examples[i]
        examples.append({"input": ex.input if uses_input else None,
                         "references": list(ex.references) if (uses_references and ex.references) else None,
                         "output": ex.output, "score": round(float(scaled[i]), 2)})
    return JudgeSpec(kind="examples", name=name, task=task, target=target,
                     criterion=f"Overall {target}, judged like the human raters of the scored examples.",
                     examples=examples, uses_input=uses_input, uses_references=uses_references)


def optimized_judge(dataset, *, task: str, target: str, lm, optimizer: str = "mipro", seed: int = 0,
                    uses_input: bool = True, uses_references: bool = False, reflection_lm=None,
                    auto: str | None = "light", max_metric_calls: int | None = None,
                    num_threads: int = 1, budget: dict | None = None) -> JudgeSpec:
    """A judge whose prompt an optimiser rewrote: ``optimizer="mipro"`` (MIPROv2) or ``"gepa"`` (GEPA).

    The training metric is ``1 - |score - label| / 4`` on the 1-5 scale. The optimised instructions and
    demonstrations are copied into the returned spec, so the artifact can rebuild the judge without DSPy's
    program files. ``max_metric_calls`` (GEPA) replaces the ``auto`` budget when given; for MIPROv2 with
    ``auto=None``, ``budget`` holds ``num_candidates`` and the compile options (``num_trials``, ...).
    """
    dspy = require_dspy()
    labels = [e.labels[target] for e in dataset.examples]
    scaled = to_five_point(labels, min(labels), max(labels))
    base = JudgeSpec(kind="optimized", name=f"judge_{optimizer}", task=task, target=target,
                     criterion=f"Overall {target}.", uses_input=uses_input, uses_references=uses_references)
    trainset = []
    for ex, y in zip(dataset.examples, scaled):
        fields = _judge_inputs(base, ex.output, ex.input, ex.references)
        trainset.append(dspy.Example(**fields, gold=float(y)).with_inputs(*fields.keys()))

    def closeness(gold, pred, trace=None, pred_name=None, pred_trace=None):
        try:
            value = 1.0 - abs(float(pred.score) - gold.gold) / 4.0
        except (TypeError, ValueError):
            value = 0.0
        if optimizer == "gepa":
            return dspy.Prediction(score=value, feedback=f"human score {gold.gold:.1f}, judged {pred.score}")
        return value

    program = _judge_predictor(base)
    with dspy.context(lm=lm, adapter=_adapter()):
        if optimizer == "mipro":
            extra = dict(budget or {})
            opt = dspy.MIPROv2(metric=closeness, auto=auto, num_threads=num_threads, seed=seed,
                               num_candidates=extra.pop("num_candidates", None))
            try:
                compiled = opt.compile(program, trainset=trainset, **extra)
            except ImportError as exc:  # DSPy's MIPROv2 searches with optuna, an extra of dspy
                raise ImportError(f"the MIPROv2-optimised judge needs optuna: pip install \"dspy[optuna]\" "
                                  f"(or use optimizer='gepa'); {exc}") from exc
        elif optimizer == "gepa":
            budget = {"max_metric_calls": max_metric_calls} if max_metric_calls else {"auto": auto}
            opt = dspy.GEPA(metric=closeness, reflection_lm=reflection_lm or lm, num_threads=num_threads, seed=seed,
                            **budget)
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
    lines = [f"# {spec.name}", "", f"{spec.criterion}", "", "## Metric Details", "",
             f"- Kind: {_KIND_TEXT.get(spec.kind, spec.kind)}.",
             f"- Task: {spec.task}", f"- Target quality: {spec.target}",
             "- Range: integers 1 to 5; higher is better.",
             f"- Input-required: {'yes' if spec.uses_input else 'no'}; "
             f"reference-based: {'yes' if spec.uses_references else 'no'}.",
             f"- Signature: `{spec.signature}`"]
    if spec.rubric:
        lines += ["", "Rubric:"] + [f"- {k}: {spec.rubric[k]}" for k in sorted(spec.rubric)]
    if spec.examples:
        lines += ["", f"Scored examples in the prompt: {len(spec.examples)} "
                      f"(scores {', '.join(format(e['score'], 'g') for e in spec.examples)} on the 1-5 scale)."]
    lines += ["", "## Intended Use", "",
              f"Scoring outputs of the task above for {spec.target}, as one component of an induced metric whose "
              "weights were fitted to human labels. On its own it is an uncalibrated LLM opinion.",
              "", "## Implementation and Cost", "",
              f"One call of {model} per output (cached on disk by model, parameters and prompt). Outputs that "
              "cannot be parsed into a score 1-5 are retried once and then left unscored.",
              "", "## Known Limitations", "",
              "LLM judges favour longer and more confident text, are sensitive to prompt wording and can drift "
              "when the model behind the API changes; the criterion was written from a handful of examples.",
              "", "## Related Metrics", "", "The other generated judges of the same induced metric.",
              "", "## Further Reading", "",
              "Ryan et al. (2025), AutoMetrics: approximate human judgments with automatically generated "
              "evaluators.", ""]
    return "\n".join(lines)


def generate_judges(dataset, *, task: str, target: str, lm, n_criteria: int = 10, n_rubrics: int = 5,
                    example_based: bool = True, optimizer: str | None = None, seed: int = 0,
                    num_threads: int = 1, progress: Callable[[str], None] | None = None) -> tuple[list[JudgeSpec], dict]:
    """All generated judges for ``dataset`` (the training rows); returns (specs, generation notes)."""
    say = progress or (lambda msg: None)
    uses_input = dataset.has_inputs
    uses_refs = dataset.has_references
    specs: list[JudgeSpec] = []
    notes: dict = {}
    taken: set[str] = set()
    if n_criteria or n_rubrics:
        say(f"proposing {n_criteria + n_rubrics} axes of variation")
        try:
            axes = propose_axes(dataset, task=task, target=target, lm=lm, n_axes=n_criteria + n_rubrics, seed=seed)
        except _parse_errors() as exc:
            # A model too weak to follow the format gives no criteria; the other judges may still work.
            notes["axes_unparsed"] = _short_error(exc)
            say("the LLM's axes of variation could not be parsed (asked twice): no criterion or rubric judges")
            axes = []
            n_criteria = n_rubrics = 0
        notes["axes"] = axes
        crit_axes = axes[:n_criteria]
        rub_axes = axes[n_criteria:n_criteria + n_rubrics] or axes[:n_rubrics]
        specs += criterion_judges(crit_axes, task=task, target=target, uses_input=uses_input,
                                  uses_references=uses_refs, taken=taken)
        if n_rubrics:
            say(f"writing {len(rub_axes)} rubrics")
            specs += rubric_judges(rub_axes, task=task, target=target, lm=lm, uses_input=uses_input,
                                   uses_references=uses_refs, taken=taken)
    if example_based:
        say("choosing examples for the example-based judge")
        spec, selection = example_judge(dataset, task=task, target=target, lm=lm, seed=seed, uses_input=uses_input,
                                        uses_references=uses_refs, num_threads=num_threads)
        specs.append(spec)
        notes["example_selection"] = asdict(selection)
    if optimizer:
        say(f"optimising a judge with {optimizer}")
        specs.append(optimized_judge(dataset, task=task, target=target, lm=lm, optimizer=optimizer, seed=seed,
                                     uses_input=uses_input, uses_references=uses_refs, num_threads=num_threads))
    return specs, notes
