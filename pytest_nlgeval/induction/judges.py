"""Running LLM judges: a judge is a :class:`JudgeSpec` (plain data saved in a metric artifact) run through
one DSPy signature.

The signature's ``score`` output is ``Literal[1, 2, 3, 4, 5]`` (DSPy enforces a Literal; it does not enforce
``ge``/``le`` bounds on an int). An output that does not parse is asked for once more; if it still does not
parse, the row gets no score (``nan``) and the failure is counted and reported, never turned into a number.
How judges are generated from labelled examples is :mod:`pytest_nlgeval.induction.judge_generation`.

Example::

    >>> from pytest_nlgeval.induction.judges import JudgeSpec, run_judge      # doctest: +SKIP
    >>> spec = JudgeSpec(kind="criterion", name="judge_concise", task="Answer questions",
    ...                  target="helpfulness", criterion="The answer is concise.")  # doctest: +SKIP
    >>> run_judge(spec, lm, ["Paris."], inputs=["Capital of France?"])[0].value  # doctest: +SKIP
    5.0
"""

from __future__ import annotations

import math
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any, Literal, Sequence  # Literal: resolved by name in the signatures below

from pytest_nlgeval.llm.cache import require_dspy
from pytest_nlgeval.llm.prompts import NONE, clip

__all__ = [
    "JudgeResult",
    "JudgeRun",
    "JudgeSpec",
    "chat_adapter",
    "clip",
    "judge_inputs",
    "judge_predictor",
    "completion_prompt",
    "parse_errors",
    "retry_config",
    "run_judge",
    "short_error",
    "signatures",
]


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
    #: ``form``: the DSPy signature (a rationale, then the score; asked again once if it does not parse);
    #: ``completion``: the judge's distribution over 1-5 at the token after "Score: " on the server's
    #: completions endpoint (G-Eval's probability weighting; any model that returns tokens gives a score)
    read: str = "form"
    signature: str = (
        "JudgeOutput(task, criterion, rubric, examples, input, references, output "
        "-> rationale, score: Literal[1,2,3,4,5])"
    )

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


def signatures() -> dict[str, Any]:
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


def chat_adapter():
    dspy = require_dspy()
    # No silent second call through the JSON adapter: a parse failure is retried exactly once, here.
    return dspy.ChatAdapter(use_json_adapter_fallback=False)


def parse_errors():
    from dspy.utils.exceptions import AdapterParseError

    return (AdapterParseError,)


# -- running a judge -------------------------------------------------------------------------------------


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
            parts.append(f"Input: {clip(ex['input'], 600)}")
        if ex.get("references"):
            parts.append(f"Reference: {clip(ex['references'][0], 400)}")
        parts.append(f"Output: {clip(ex['output'], 800)}")
        blocks.append("\n".join(parts))
    return "\n\n".join(blocks)


def judge_predictor(spec: JudgeSpec):
    dspy = require_dspy()
    sig = signatures()["JudgeOutput"]
    if spec.instructions:
        sig = sig.with_instructions(spec.instructions)
    predictor = dspy.Predict(sig)
    if spec.demos:
        predictor.demos = [dspy.Example(**d) for d in spec.demos]
    return predictor


def judge_inputs(spec: JudgeSpec, output: str, input: str | None, references) -> dict:
    refs = references if not isinstance(references, str) else [references]
    return {
        "task": spec.task,
        "criterion": spec.criterion,
        "rubric": _format_rubric(spec.rubric),
        "examples": _format_examples(spec.examples),
        "input": clip(input) if spec.uses_input and input is not None else NONE,
        "references": "\n---\n".join(clip(r, 800) for r in refs) if spec.uses_references and refs else NONE,
        "output": clip(output, 4000),
    }


def completion_prompt(spec: JudgeSpec, output: str, input: str | None, references) -> str:
    """The judge's prompt as a raw continuation that ends where the score's digit goes. What all rows share
    (task, criterion, rubric, examples) comes first and the input before the output, so that a server that
    keeps the previous prompt decodes a shared article once for all of its outputs."""
    fields = judge_inputs(spec, output, input, references)
    parts = [
        "You judge one output of a text-generation task on one criterion, on a scale from 1 (worst) to 5 (best).",
        "",
        f"Task: {fields['task']}",
        f"Criterion: {fields['criterion']}",
        "",
    ]
    if fields["rubric"] != NONE:
        parts += ["Rubric:", fields["rubric"], ""]
    if fields["examples"] != NONE:
        parts += ["Outputs scored by human raters on the same scale:", fields["examples"], ""]
    if fields["input"] != NONE:
        parts += ["Input:", fields["input"], ""]
    if fields["references"] != NONE:
        parts += ["References:", fields["references"], ""]
    parts += [
        "Output:",
        fields["output"],
        "",
        'Rate the output on the criterion with one integer N from 1 (worst) to 5 (best), written as "Score: N".',
        "",
        "Score: ",
    ]
    return "\n".join(parts)


def retry_config(lm) -> dict:
    # A different rollout id is a different cache entry, so the retry really asks the model again; at
    # temperature 0 the server would repeat itself, so the retry samples.
    config: dict[str, Any] = {"rollout_id": 1}
    temperature = (getattr(lm, "kwargs", {}) or {}).get("temperature")
    if not temperature:
        config["temperature"] = 0.7
    return config


def run_judge(
    spec: JudgeSpec,
    lm,
    outputs: Sequence[str],
    inputs: Sequence[str | None] | None = None,
    references: Sequence | None = None,
    *,
    num_threads: int = 1,
    progress=None,
) -> JudgeRun:
    """Score ``outputs`` with one judge; ``lm`` is any ``dspy.BaseLM`` (wrap it with ``cached_lm``).

    Rows whose output cannot be parsed after one retry get ``nan`` and an ``error``; see
    :attr:`JudgeRun.failures`. ``progress``: a stream where a long run draws its progress
    (:mod:`pytest_nlgeval.core.progress`), or None.
    """
    from pytest_nlgeval.core.progress import progress as progress_bar

    dspy = require_dspy()
    n = len(outputs)
    inputs = list(inputs) if inputs is not None else [None] * n
    references = list(references) if references is not None else [None] * n
    if spec.read not in ("form", "completion"):
        raise ValueError(f"judge {spec.name!r}: read must be 'form' or 'completion', got {spec.read!r}")
    predictor = judge_predictor(spec)
    errors = parse_errors()
    retries = [0]
    lock = threading.Lock()
    # Rows that share an input are asked one after the other: a server that keeps the previous prompt
    # (llama.cpp) then decodes the shared input once. Results come back in the rows' order.
    order = sorted(range(n), key=lambda i: (str(inputs[i]) if inputs[i] is not None else "", i))

    def read(i: int) -> JudgeResult:
        from pytest_nlgeval.llm.cache import complete_next_token, scale_distribution

        prompt = completion_prompt(spec, outputs[i], inputs[i], references[i])
        found = scale_distribution(complete_next_token(lm, prompt), (1, 5))
        if found is None:
            return JudgeResult(
                math.nan,
                None,
                "no distribution over 1-5 after 'Score: ' (read 'completion' needs an OpenAI-compatible server "
                "with a completions endpoint that returns log-probabilities, e.g. llama.cpp or vLLM)",
            )
        value, distribution, _ = found
        shown = ", ".join(f"{k}: {p:.2f}" for k, p in distribution.items())
        return JudgeResult(value, f"read from the judge's distribution over the scale ({shown})")

    def one(i: int) -> JudgeResult:
        if spec.read == "completion":
            return read(i)
        fields = judge_inputs(spec, outputs[i], inputs[i], references[i])
        with dspy.context(lm=lm, adapter=chat_adapter()):
            try:
                pred = predictor(**fields)
            except errors:
                with lock:
                    retries[0] += 1
                try:
                    pred = predictor(**fields, config=retry_config(lm))
                except errors as exc:
                    return JudgeResult(math.nan, None, short_error(exc))
        return JudgeResult(float(pred.score), str(pred.rationale or "").strip() or None)

    found: dict[int, JudgeResult] = {}
    with progress_bar(n, f"judge {spec.name}", unit="output", enabled=progress is not None, stream=progress) as bar:
        if num_threads > 1 and n > 1:
            pool = ThreadPoolExecutor(max_workers=num_threads)
            try:
                for i, result in zip(order, pool.map(one, order)):
                    found[i] = result
                    bar.update(1)
            finally:
                # On a server error the rows not yet started are dropped instead of each waiting for a time-out.
                pool.shutdown(wait=True, cancel_futures=True)
        else:
            for i in order:
                found[i] = one(i)
                bar.update(1)
    return JudgeRun(spec.name, [found[i] for i in range(n)], retries[0])


def short_error(exc: Exception) -> str:
    """The message of ``exc`` on one line, at most 300 characters, without this machine's absolute paths
    (it is written into the artifact)."""
    from pytest_nlgeval.util.redact import local_paths_removed

    text = " ".join(local_paths_removed(str(exc)).split())
    return text[:300]
