"""Criterion judges: ``assert_judged(output, criterion)``, an LLM judge from a criterion alone.

The judge follows G-Eval (Liu et al., "G-Eval: NLG Evaluation using GPT-4 with Better Human Alignment",
EMNLP 2023):

1. **Evaluation steps.** The LLM writes the steps a careful rater follows for the criterion (G-Eval's
   "auto chain-of-thought"). They are generated once per criterion and scale, at the judge's temperature,
   and cached like every other request, so every later run (and every other process) reuses them.
2. **Form filling.** The LLM sees the criterion, the steps, the texts (input, retrieved context, reference,
   output) and answers in a fixed form, the score first::

       Score: 4
       Reason: the answer is short but leaves out the date.

3. **The score.** Where the server returns log-probabilities, the score is G-Eval's probability-weighted
   mean over the scale's tokens at the position of the score, ``sum_s p(s) * s / sum_s p(s)`` (Liu et
   al., Section 2, "Scoring Function"; normalised over the scale's tokens among the top log-probabilities).
   Otherwise it is the integer the judge wrote. With ``samples=n`` the judge answers ``n`` times
   (each sample a separate cached request) and the score is the mean; the spread is in ``details``.

An answer without a score in the scale is asked for once more (a different cache entry, sampled); when the
second answer does not parse either, the check is a :class:`JudgedParseError`, or a skipped test with
``--nlgeval-judge-on-parse-failure skip``. It is never a number. Parse failures and retries are counted
per run; the terminal summary and the results file show them with the LLM calls and tokens.

Every request goes through :func:`pytest_nlgeval.llm.cache.cached_lm`: the disk cache keyed on the
model, every request parameter and the full prompt, with the named server errors of
:mod:`~pytest_nlgeval.llm.cache`. The judge's identity (model and parameters, criterion, steps,
scale, samples, prompt version) is the check's evaluator fingerprint, so a baseline never compares two
different judges.

    >>> from pytest_nlgeval import assert_judged                                  # doctest: +SKIP
    >>> assert_judged(answer, "The answer names the date of the event.", input=question) >= 4   # doctest: +SKIP
"""

from __future__ import annotations

import math
import re
import statistics
import threading
from dataclasses import dataclass, field
from typing import Any, Sequence

from pytest_nlgeval.errors import NLGEvalError
from pytest_nlgeval.llm.errors import JudgeParseError
from pytest_nlgeval.llm.prompts import clip
from pytest_nlgeval.llm.cache import SCALE_TOKENS, _over_scale, _plain, scale_distribution

__all__ = [
    "CriterionJudge",
    "JudgeNotConfigured",
    "JudgedParseError",
    "JudgeStats",
    "Judgment",
    "RAG_CRITERIA",
    "build_judge",
    "judge_options",
]

#: bump when a prompt changes: it is part of every judge's fingerprint
PROMPT_VERSION = 1
DEFAULT_SCALE = (1, 5)
#: the most alternatives OpenAI-compatible servers return per token
TOP_LOGPROBS = 20
PARSE_FAILURE_MODES = ("error", "skip")
_MAX_TEXT = 6000

#: The judge-based variants of the ``rag`` task's dimensions: ``assert_judged(answer, "rag/faithfulness",
#: input=question, context=contexts)``. Each names the texts it needs.
RAG_CRITERIA: dict[str, tuple[str, tuple[str, ...]]] = {
    "rag/faithfulness": (
        "Faithfulness: every statement of the output is supported by the retrieved context. The output adds no "
        "fact, number or name that the context does not state; a statement that contradicts the context or "
        "cannot be checked against it lowers the score.",
        ("context",),
    ),
    "rag/answer_relevance": (
        "Answer relevance: the output answers the question of the input directly and completely. Content that "
        "does not help answer the question, evasions and answers to a different question lower the score.",
        ("input",),
    ),
    "rag/context_relevance": (
        "Context relevance: the retrieved context holds the information needed to answer the question of the "
        "input. Judge the context, not the output; passages unrelated to the question lower the score.",
        ("input", "context"),
    ),
    "rag/context_recall": (
        "Context recall: every statement of the reference answer can be found in, or directly inferred from, "
        "the retrieved context. Judge the context against the reference, not the output; each reference "
        "statement the context does not support lowers the score.",
        ("context", "reference"),
    ),
}


class JudgeNotConfigured(NLGEvalError):
    """No judge LM: ``assert_judged`` needs ``--nlgeval-judge-lm`` (or its ini key / environment variable) or
    ``lm=``."""


class JudgedParseError(JudgeParseError):
    """The judge's answer held no score in the scale, twice; the check has no number.

    ``answers`` are the raw answers, ``criterion`` the criterion judged."""

    def __init__(self, message: str, *, criterion: str = "", answers: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.criterion = criterion
        self.answers = list(answers)


@dataclass
class JudgeStats:
    """Counts of one run's criterion judging: judgments made, answers asked for again, checks left without
    a score (parse failures), steps generated."""

    judged: int = 0
    retries: int = 0
    parse_failures: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, name: str, k: int = 1) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + k)

    def to_dict(self) -> dict:
        return {"judged": self.judged, "retries": self.retries, "parse_failures": self.parse_failures}


@dataclass
class Sample:
    """One answer of the judge: the score it wrote, the logprob-weighted score where logprobs came, the
    rationale."""

    written: int
    value: float
    rationale: str | None
    method: str  # "completion" / "scale" (read from a distribution over the scale), "logprobs" or "written"
    distribution: dict[str, float] | None = None
    mass: float | None = None
    retried: bool = False


@dataclass
class Judgment:
    """The judge's verdict on one output: ``value`` on the scale, the samples it came from, the rationale."""

    value: float
    samples: list[Sample]
    criterion: str
    steps: list[str]
    scale: tuple[int, int]

    @property
    def rationale(self) -> str | None:
        return self.samples[0].rationale if self.samples else None

    @property
    def method(self) -> str:
        methods = {s.method for s in self.samples}
        return methods.pop() if len(methods) == 1 else "mixed"

    @property
    def spread(self) -> float:
        values = [s.value for s in self.samples]
        return statistics.pstdev(values) if len(values) > 1 else 0.0


# -- prompts -----------------------------------------------------------------------------------------------


def steps_prompt(criterion: str, scale: tuple[int, int]) -> str:
    lo, hi = scale
    return (
        f"You write the evaluation steps a careful rater follows to judge the output of an LLM application "
        f"on one criterion, on a scale from {lo} (worst) to {hi} (best).\n\n"
        f"Criterion:\n{criterion}\n\n"
        "Write three to five short numbered steps, one per line, and nothing else."
    )


def form_prompt(
    criterion: str,
    steps: Sequence[str],
    scale: tuple[int, int],
    output: str,
    *,
    input: str | None = None,
    context: Sequence[str] | None = None,
    reference: str | None = None,
    completion: bool = False,
) -> str:
    lo, hi = scale
    parts = [
        "You judge the output of an LLM application on one criterion.",
        "",
        f"Criterion:\n{criterion}",
        "",
        "Evaluation steps:",
    ]
    parts += [f"{i}. {step}" for i, step in enumerate(steps, 1)]
    parts.append("")
    if input is not None:
        parts += [f"Input:\n{clip(input, _MAX_TEXT)}", ""]
    if context:
        parts.append("Retrieved context:")
        parts += [f"[{i}] {clip(c, 3000)}" for i, c in enumerate(context, 1)]
        parts.append("")
    if reference is not None:
        parts += [f"Reference answer:\n{clip(reference, _MAX_TEXT)}", ""]
    if completion:
        # a raw continuation: no template to echo ("<an integer ...>"), and the prompt ends just before the digit
        parts += [
            f"Output:\n{clip(output, _MAX_TEXT)}",
            "",
            f"Rate the output on the criterion with one integer N from {lo} (worst) to {hi} (best), written as "
            "\"Score: N\".",
            "",
            "Score: ",
        ]
        return "\n".join(parts)
    parts += [
        f"Output:\n{clip(output, _MAX_TEXT)}",
        "",
        f"Rate the output on the criterion with one integer from {lo} (worst) to {hi} (best). Answer in "
        f"this form, the score first: a line \"Score: <an integer from {lo} to {hi}>\", then a line "
        "\"Reason: <one or two sentences>\".",
        "",
        # G-Eval's form ends where the score goes, so that even a model that only continues text writes it
        "Score:",
    ]
    return "\n".join(parts)


_STEP_LINE = re.compile(r"^\s*(?:\d+[.)]|[-*\u2022])\s*(.+?)\s*$")
_SCORE = re.compile(r"\bscore\b\**\s*[:=\-]?\s*\**\s*(\d+)", re.I)
# a number opening the answer ("4", "4/5", "4 - clear"); not "1. Read the output" (an echoed list)
_LEADING = re.compile(r"^\W{0,3}(\d+)[ \t]*(?:/[ \t]*\d+)?(?=[ \t]*(?:\n|$|[-:,;(]|out of\b))")
_REASON = re.compile(r"\breason\b\**\s*[:=\-]\s*\**\s*(.+)", re.I | re.S)


def parse_steps(text: str) -> list[str]:
    """Numbered or bulleted lines of a steps answer (at most eight); empty when there are none."""
    steps = []
    for line in str(text or "").splitlines():
        m = _STEP_LINE.match(line)
        if m and len(m.group(1)) > 2:
            steps.append(" ".join(m.group(1).split()))
    return steps[:8]


def parse_score(text: str, scale: tuple[int, int]) -> tuple[int, int, str | None] | None:
    """``(score, offset of its digits in text, rationale)`` of a form answer; None when no score in the
    scale is written (``Score: N`` anywhere, or a number opening the answer)."""
    text = str(text or "")
    m = _SCORE.search(text) or _LEADING.match(text)
    if m is None:
        return None
    value = int(m.group(1))
    if not scale[0] <= value <= scale[1]:
        return None
    reason = _REASON.search(text, m.end(1))
    rationale = reason.group(1) if reason else text[m.end(1) :]
    rationale = " ".join(rationale.split()).strip(" .:*") or None
    return value, m.start(1), (rationale[:500] if rationale else None)


def weighted_score(
    logprobs, text: str, digits_at: int, written: int, scale: tuple[int, int]
) -> tuple[float, dict[str, float], float] | None:
    """G-Eval's probability-weighted score from the top log-probabilities at the score's token.

    Returns ``(score, distribution over the scale normalised to 1, probability mass on the scale's tokens)``
    or None when the answer's log-probabilities do not cover the score token (or the scale has values of
    more than one digit, whose tokens are ambiguous).
    """
    lo, hi = scale
    if lo < 0 or hi > 9:
        return None
    content = (_plain(logprobs) or {}).get("content") if logprobs else None
    if not content:
        return None
    tokens = [str(t.get("token") or "") for t in content]
    index = None
    if "".join(tokens) == text:
        offset = 0
        for i, token in enumerate(tokens):
            if offset <= digits_at < offset + len(token):
                index = i
                break
            offset += len(token)
    if index is None or tokens[index].strip() != str(written):
        # Servers that drop or merge whitespace tokens: the first token that is the written score.
        index = next((i for i, t in enumerate(tokens) if t.strip() == str(written)), None)
        if index is None:
            return None
    return _over_scale(content[index], scale)


#: how a judge's answer becomes a score (see :class:`CriterionJudge`)
READ_MODES = ("form", "scale", "completion")


def _read_sample(read: tuple[float, dict[str, float], float], method: str) -> Sample:
    """A sample read off a distribution over the scale: no written answer, so the most likely digit stands
    for the written score and there is no rationale."""
    value, distribution, mass = read
    return Sample(int(max(distribution, key=lambda k: distribution[k])), value, None, method, distribution, mass)


# -- the judge ---------------------------------------------------------------------------------------------


def _check_scale(scale) -> tuple[int, int]:
    try:
        lo, hi = scale
    except (TypeError, ValueError):
        raise ValueError(f"scale must be a pair of integers (low, high) such as (1, 5), got {scale!r}") from None
    if isinstance(lo, bool) or isinstance(hi, bool) or not (isinstance(lo, int) and isinstance(hi, int)) or lo >= hi:
        raise ValueError(f"scale must be a pair of integers (low, high) with low < high, such as (1, 5); got {scale!r}")
    return int(lo), int(hi)


def _texts(value, what: str) -> list[str] | None:
    if value is None:
        return None
    items = [value] if isinstance(value, str) else list(value) if isinstance(value, Sequence) else None
    if items is None or not items or not all(isinstance(v, str) and v.strip() for v in items):
        raise TypeError(
            f"assert_judged: {what}= must be a non-empty string or a list of non-empty strings, got {value!r:.80}"
        )
    return items


def _text(value, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise TypeError(f"assert_judged: {what} must be a non-empty string, got {value!r:.80}")
    return value


def _needed_text(value, what: str) -> str:
    text = _text(value, what)
    if text is None:
        raise TypeError(f"assert_judged: {what} is required")
    return text


def _slug(criterion: str) -> str:
    head = criterion.split(":")[0] if ":" in criterion[:40] else criterion
    words = re.findall(r"[a-z0-9]+", head.lower())[:6] or ["criterion"]
    return "_".join(words)


class CriterionJudge:
    """A G-Eval criterion judge over one (cached) LM.

    ``lm``: a ``dspy.BaseLM``; it is wrapped with the disk cache (``cache_dir``; an LM already wrapped is
    used as it is). ``samples``: answers per judgment (more than one needs a temperature above 0).
    ``logprobs``: ask for log-probabilities and weight the score by them where the server returns them.
    ``on_parse_failure``: ``error`` (raise :class:`JudgedParseError`) or ``skip`` (the pytest plugin turns
    the error into a skipped test). ``stats``: where judgments, retries and parse failures are counted.

    Calling the judge scores one output and returns a :class:`~pytest_nlgeval.core.score.Score` (kind
    ``judged``) that asserts when compared with a threshold; :meth:`judge` returns the bare
    :class:`Judgment`.
    """

    def __init__(
        self,
        lm,
        *,
        samples: int = 1,
        logprobs: bool = True,
        on_parse_failure: str = "error",
        cache_dir=None,
        stats: JudgeStats | None = None,
        cache: bool = True,
        read: str = "form",
    ) -> None:
        if read not in READ_MODES:
            raise ValueError(f"read must be one of {', '.join(READ_MODES)}, got {read!r}")
        #: ``form``: the judge writes "Score: N" and a reason, logprob-weighted where the server returns them;
        #: ``scale``: the score is read from the first generated tokens' distribution over the scale (two
        #: decoding steps); ``completion``: from the one token after "Score: " on the server's completions
        #: endpoint. Both fall back to the written form where no scale token is among the alternatives.
        self.read = read
        from pytest_nlgeval.llm.cache import cached_lm

        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise ValueError(f"samples must be a positive integer, got {samples!r}")
        if on_parse_failure not in PARSE_FAILURE_MODES:
            raise ValueError(
                f"on_parse_failure must be one of {', '.join(PARSE_FAILURE_MODES)}, got {on_parse_failure!r}"
            )
        temperature = float((getattr(lm, "kwargs", {}) or {}).get("temperature") or 0.0)
        if samples > 1 and temperature == 0.0:
            raise ValueError(
                f"samples={samples} at temperature 0 would be one answer {samples} times; give the "
                "judge LM a temperature above 0 (--nlgeval-judge-temperature) or use samples=1"
            )
        if cache:
            lm = cached_lm(lm, cache_dir)
        self.lm = lm
        self.samples = samples
        self.logprobs = bool(logprobs)
        self.on_parse_failure = on_parse_failure
        self.temperature = temperature
        self.stats = stats or JudgeStats()
        #: where scores record their comparisons when a call names no recorder: a recorder, a function that
        #: gives one (a pytest run's judge), or None (nothing is recorded)
        self.recorder = None
        self._steps: dict[tuple[str, tuple[int, int]], list[str]] = {}
        self._lock = threading.Lock()

    @property
    def usage(self):
        """The LLM calls, cache hits and tokens of this judge's LM (``None`` for an LM without the cache)."""
        return getattr(self.lm, "usage", None)

    def _identity(self) -> dict:
        from pytest_nlgeval.llm.cache import lm_identity

        inner = getattr(self.lm, "inner", self.lm)
        return lm_identity(inner)

    # -- requests ------------------------------------------------------------------------------------------
    def _ask(
        self,
        prompt: str,
        *,
        rollout: int = 0,
        retry: bool = False,
        logprobs: bool = False,
        max_tokens: int | None = None,
        keep=None,
    ) -> tuple[str, Any]:
        """The judge LM's answer text and log-probabilities. ``keep(text, logprobs)``: whether the answer may
        stay in the disk cache; an answer it refuses (no score in the scale, no distribution) is forgotten, so
        a run after the server or the model is fixed asks again instead of replaying it."""
        params: dict[str, Any] = {}
        if logprobs:
            params.update(logprobs=True, top_logprobs=TOP_LOGPROBS)
        if max_tokens is not None:
            params["max_tokens"] = max_tokens
        if rollout:
            params["rollout_id"] = rollout
        if retry:
            # A different rollout id is a different cache entry, so the retry asks the model again; at
            # temperature 0 the server would repeat itself, so the retry samples.
            params["rollout_id"] = 1_000_000 + rollout
            if not self.temperature:
                params["temperature"] = 0.7
        import warnings

        from pytest_nlgeval.core.cache import CacheWarning

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # dspy warns about rollout ids at temperature 0
            warnings.simplefilter("always", CacheWarning)  # a set-aside cache entry is the user's to know
            outputs = self.lm(messages=[{"role": "user", "content": prompt}], **params)
        first = outputs[0] if outputs else ""
        if isinstance(first, dict):
            text, read = str(first.get("text") or ""), first.get("logprobs")
        else:
            text, read = str(first or ""), None
        forget = getattr(self.lm, "forget", None)
        if keep is not None and forget is not None and not keep(text, read):
            forget(messages=[{"role": "user", "content": prompt}], **params)
        return text, read

    def _complete(self, prompt: str) -> dict | None:
        """Top log-probabilities of the one token after ``prompt`` (see
        :func:`~pytest_nlgeval.llm.cache.complete_next_token`)."""
        from pytest_nlgeval.llm.cache import complete_next_token

        return complete_next_token(self.lm, prompt, TOP_LOGPROBS, identity=self._identity())

    def steps(self, criterion: str, scale: tuple[int, int] = DEFAULT_SCALE) -> list[str]:
        """The evaluation steps for ``criterion`` (generated once, then from memory and the disk cache)."""
        scale = _check_scale(scale)
        key = (criterion, scale)
        with self._lock:
            known = self._steps.get(key)
        if known is not None:
            return list(known)
        prompt = steps_prompt(criterion, scale)

        # steps stay cached even when they hold no list: the fallback below is then this judge's steps, and
        # asking again would change the judge's fingerprint from run to run
        text, _ = self._ask(prompt)
        steps = parse_steps(text)
        if not steps:
            self.stats.add("retries")
            text, _ = self._ask(prompt, retry=True)
            steps = parse_steps(text)
        if not steps:
            # A model that writes no list still gets a judge: the criterion itself is its only step.
            steps = [f"Read the output and judge it on the criterion: {criterion}"]
        with self._lock:
            self._steps[key] = steps
        return list(steps)

    def _sample(
        self,
        prompt: str,
        scale: tuple[int, int],
        rollout: int,
        answers: list[str],
        completion_prompt: str | None = None,
    ) -> Sample | None:
        if self.read == "completion" and completion_prompt is not None:
            # The completions endpoint, one token: the prompt ends where the digit goes, so the next token's
            # distribution is the judge's distribution over the scale. A server without that endpoint, or
            # without log-probabilities there, falls back to the answer form.
            read = scale_distribution(self._complete(completion_prompt), scale)
            if read is not None:
                return _read_sample(read, "completion")
        if self.logprobs and self.read == "scale":
            # Read the scale, not the prose: the form ends where the score goes, so the first tokens' log-
            # probabilities hold the judge's distribution over the scale (G-Eval's weighting). One or two
            # decoding steps instead of a written answer; any model that returns tokens yields a score.
            text, logprobs = self._ask(
                prompt,
                rollout=rollout,
                logprobs=True,
                max_tokens=SCALE_TOKENS,
                keep=lambda _, lp: scale_distribution(lp, scale) is not None,
            )
            read = scale_distribution(logprobs, scale)
            if read is not None:
                return _read_sample(read, "scale")

        def scored(text: str, _logprobs) -> bool:
            return parse_score(text, scale) is not None

        text, logprobs = self._ask(prompt, rollout=rollout, logprobs=self.logprobs, keep=scored)
        answers.append(text)
        parsed = parse_score(text, scale)
        retried = False
        if parsed is None:
            self.stats.add("retries")
            retried = True
            text, logprobs = self._ask(prompt, rollout=rollout, retry=True, logprobs=self.logprobs, keep=scored)
            answers.append(text)
            parsed = parse_score(text, scale)
            if parsed is None:
                return None
        written, at, rationale = parsed
        weighted = weighted_score(logprobs, text, at, written, scale) if self.logprobs else None
        if weighted is None:
            return Sample(written, float(written), rationale, "written", retried=retried)
        value, distribution, mass = weighted
        return Sample(written, value, rationale, "logprobs", distribution, mass, retried)

    def judge(
        self,
        output: str,
        criterion: str,
        *,
        input: str | None = None,
        context=None,
        reference: str | None = None,
        scale=DEFAULT_SCALE,
    ) -> Judgment:
        """Judge one output; raises :class:`JudgedParseError` when an answer does not parse twice."""
        scale = _check_scale(scale)
        output = _needed_text(output, "output")
        criterion = _needed_text(criterion, "criterion")
        steps = self.steps(criterion, scale)
        given_input, given_context = _text(input, "input="), _texts(context, "context")
        given_reference = _text(reference, "reference=")

        def prompt_for(completion: bool) -> str:
            return form_prompt(
                criterion,
                steps,
                scale,
                output,
                input=given_input,
                context=given_context,
                reference=given_reference,
                completion=completion,
            )

        prompt = prompt_for(False)
        completion_prompt = prompt_for(True) if self.read == "completion" else None
        samples: list[Sample] = []
        answers: list[str] = []
        for k in range(self.samples):
            sample = self._sample(prompt, scale, k, answers, completion_prompt)
            if sample is None:
                self.stats.add("parse_failures")
                shown = " | ".join(repr(" ".join(a.split())[:120]) for a in answers[-2:])
                raise JudgedParseError(
                    f"the judge {self._identity()['model']} gave no score from {scale[0]} to {scale[1]} for the "
                    f"criterion {criterion[:80]!r}, asked twice; its answers: {shown}. Use a model that follows "
                    "the answer form, or --nlgeval-judge-on-parse-failure skip to skip such checks",
                    criterion=criterion,
                    answers=answers[-2:],
                )
            samples.append(sample)
        self.stats.add("judged")
        value = sum(s.value for s in samples) / len(samples)
        return Judgment(value, samples, criterion, steps, scale)

    # -- fingerprint and scores ----------------------------------------------------------------------------
    def fingerprint(self, criterion: str, steps: Sequence[str], scale: tuple[int, int]) -> dict:
        """What makes this judge this judge: model and parameters, criterion, steps, scale, sampling."""
        ident = self._identity()
        return {
            "kind": "judge",
            "model": ident["model"],
            "model_type": ident["model_type"],
            "params": ident["params"],
            "criterion": criterion,
            "steps": list(steps),
            "scale": list(scale),
            "samples": self.samples,
            "logprobs": self.logprobs,
            **({"read": self.read} if self.read != "form" else {}),
            "prompt_version": PROMPT_VERSION,
        }

    def score(
        self,
        output: str,
        criterion: str,
        *,
        input: str | None = None,
        context=None,
        reference: str | None = None,
        scale=DEFAULT_SCALE,
        name: str | None = None,
        task: str | None = None,
        recorder=None,
    ):
        """Judge ``output`` and return a :class:`~pytest_nlgeval.core.score.Score` (kind ``judged``)."""
        from nlgeval_runtime.fingerprint import fingerprint_id

        from pytest_nlgeval.core.score import Score

        if recorder is None:
            recorder = self.recorder() if callable(self.recorder) else self.recorder
        criterion, needs, name, task = _named_criterion(criterion, name, task)
        missing = [n for n in needs if {"input": input, "context": context, "reference": reference}[n] is None]
        if missing:
            raise TypeError(f"assert_judged: the criterion {name!r} needs " + ", ".join(f"{m}=" for m in missing))
        judgment = self.judge(output, criterion, input=input, context=context, reference=reference, scale=scale)
        fingerprint = self.fingerprint(criterion, judgment.steps, judgment.scale)
        inputs: dict[str, Any] = {"output": output}
        for key, value in (("input", input), ("context", context), ("reference", reference)):
            if value is not None:
                inputs[key] = (
                    [value]
                    if key == "context" and isinstance(value, str)
                    else (list(value) if key == "context" else value)
                )
        details = {
            "inputs": inputs,
            "criterion": criterion,
            "steps": judgment.steps,
            "scale": list(judgment.scale),
            "method": judgment.method,
            "rationale": judgment.rationale,
            "samples": [
                {
                    "score": s.written,
                    "value": s.value,
                    "rationale": s.rationale,
                    "method": s.method,
                    **({"distribution": s.distribution, "mass": s.mass} if s.distribution else {}),
                    **({"retried": True} if s.retried else {}),
                }
                for s in judgment.samples
            ],
            "spread": judgment.spread,
            "model": fingerprint["model"],
        }

        def explain(score, op, threshold, judgment=judgment):
            lines = [
                f"criterion: {criterion[:200]!r}",
                f"judge: {fingerprint['model']}, scale {judgment.scale[0]}-{judgment.scale[1]}, "
                f"{len(judgment.samples)} sample(s), {judgment.method}",
            ]
            for i, s in enumerate(judgment.samples, 1):
                dist = ""
                if s.distribution:
                    dist = " (p: " + ", ".join(f"{k}={v:.2f}" for k, v in s.distribution.items()) + ")"
                lines.append(f"  sample {i}: wrote {s.written}, value {s.value:.3f}{dist}")
            if judgment.rationale:
                lines.append(f"rationale: {judgment.rationale[:300]}")
            lines.append(f"output: {' '.join(output.split())[:120]!r}")
            return lines

        return Score(
            judgment.value,
            name=name,
            kind="judged",
            task=task,
            details=details,
            evaluator_id=fingerprint_id(fingerprint),
            evaluator_fingerprint=fingerprint,
            explain=explain,
            recorder=recorder,
        )

    __call__ = score


def _named_criterion(criterion, name, task):
    """A built-in criterion name (``rag/faithfulness``) expands to its text; others name themselves."""
    if not isinstance(criterion, str) or not criterion.strip():
        raise TypeError(f"assert_judged: criterion must be a non-empty string, got {criterion!r:.80}")
    if criterion in RAG_CRITERIA:
        text, needs = RAG_CRITERIA[criterion]
        return text, needs, name or criterion.split("/", 1)[1], task or "rag"
    return criterion, (), name or _slug(criterion), task


# -- configuration -----------------------------------------------------------------------------------------

#: judge settings: option name -> (default, environment variable)
OPTIONS = {
    "judge_lm": (None, "NLGEVAL_JUDGE_LM"),
    "judge_api_base": (None, "NLGEVAL_JUDGE_API_BASE"),
    "judge_temperature": ("0", "NLGEVAL_JUDGE_TEMPERATURE"),
    "judge_samples": ("1", "NLGEVAL_JUDGE_SAMPLES"),
    "judge_max_tokens": ("256", "NLGEVAL_JUDGE_MAX_TOKENS"),
    "judge_timeout": ("60", "NLGEVAL_JUDGE_TIMEOUT"),
    "judge_logprobs": ("on", "NLGEVAL_JUDGE_LOGPROBS"),
    "judge_on_parse_failure": ("error", "NLGEVAL_JUDGE_ON_PARSE_FAILURE"),
    "judge_read": ("form", "NLGEVAL_JUDGE_READ"),
}


def judge_options(values: dict[str, Any]) -> dict[str, Any]:
    """Checked judge settings from raw option values (strings, or None for the default)."""
    out: dict[str, Any] = {}
    for name, (default, _) in OPTIONS.items():
        raw = values.get(name)
        out[name] = default if raw in (None, "") else raw
    flag = lambda n: "--nlgeval-" + n.replace("_", "-")  # noqa: E731

    def number(name, kind, low):
        try:
            value = kind(out[name])
        except (TypeError, ValueError):
            value = None
        if value is None or not value >= low or (kind is float and not math.isfinite(value)):
            raise NLGEvalError(
                f"{flag(name)} / nlgeval_{name} must be a {'positive integer' if kind is int else 'number'}"
                f"{'' if kind is int else f' >= {low}'}, got {out[name]!r}"
            )
        return value

    out["judge_temperature"] = number("judge_temperature", float, 0.0)
    out["judge_samples"] = number("judge_samples", int, 1)
    out["judge_max_tokens"] = number("judge_max_tokens", int, 1)
    out["judge_timeout"] = number("judge_timeout", float, 0.001)
    if str(out["judge_logprobs"]).lower() not in ("on", "off"):
        raise NLGEvalError(
            f"{flag('judge_logprobs')} / nlgeval_judge_logprobs must be on or off, got {out['judge_logprobs']!r}"
        )
    out["judge_logprobs"] = str(out["judge_logprobs"]).lower() == "on"
    if out["judge_read"] not in READ_MODES:
        raise NLGEvalError(
            f"{flag('judge_read')} / nlgeval_judge_read must be one of {', '.join(READ_MODES)}, "
            f"got {out['judge_read']!r}"
        )
    if out["judge_on_parse_failure"] not in PARSE_FAILURE_MODES:
        raise NLGEvalError(
            f"{flag('judge_on_parse_failure')} / nlgeval_judge_on_parse_failure must be one of "
            f"{', '.join(PARSE_FAILURE_MODES)}, got {out['judge_on_parse_failure']!r}"
        )
    return out


def build_judge(
    settings: dict[str, Any],
    *,
    lm=None,
    cache_dir=None,
    cache: bool = True,
    stats: JudgeStats | None = None,
    usage=None,
) -> CriterionJudge:
    """A :class:`CriterionJudge` from checked settings (:func:`judge_options`); ``lm`` (a model id or a
    ``dspy.BaseLM``) replaces the configured one."""
    from pytest_nlgeval.llm.cache import JudgeServerTimeout, JudgeServerUnreachable, cached_lm, make_lm

    model = lm if lm is not None else settings.get("judge_lm")
    if model is None:
        raise JudgeNotConfigured(
            "assert_judged needs a judge LM: pass --nlgeval-judge-lm openai/MODEL with --nlgeval-judge-api-base "
            "http://HOST:PORT/v1 for an OpenAI-compatible server (or the ini keys nlgeval_judge_lm / "
            "nlgeval_judge_api_base, or the environment variables NLGEVAL_JUDGE_LM / NLGEVAL_JUDGE_API_BASE), "
            "or give lm= to the assertion"
        )
    where: Any = cache_dir if cache else False  # False: no disk cache
    if isinstance(model, str) and model.startswith("openai/") and settings.get("judge_api_base"):
        # An OpenAI-compatible server (llama.cpp, vLLM, Ollama): the project's own client, which imports
        # neither DSPy nor LiteLLM; one request, no retries, so a hung server fails within the time-out.
        from pytest_nlgeval.llm.client import OpenAIClient
        from pytest_nlgeval.llm.secrets import judge_api_key

        client = OpenAIClient(
            model,
            api_base=settings["judge_api_base"],
            api_key=judge_api_key(),  # NLGEVAL_JUDGE_API_KEY, else OPENAI_API_KEY
            temperature=settings["judge_temperature"],
            max_tokens=settings["judge_max_tokens"],
            timeout=settings["judge_timeout"],
        )
        model = cached_lm(client, where, usage)
    elif isinstance(model, str):
        # one request, no retries: a hung server fails the check within --nlgeval-judge-timeout
        model = make_lm(
            model,
            api_base=settings.get("judge_api_base"),
            temperature=settings["judge_temperature"],
            max_tokens=settings["judge_max_tokens"],
            timeout=settings["judge_timeout"],
            num_retries=0,
            cache_dir=where,
        )
        if usage is not None:
            model.usage = usage
    else:
        model = cached_lm(model, where, usage)
    model.advice = {
        JudgeServerTimeout: (
            f"raise --nlgeval-judge-timeout (now {settings['judge_timeout']:g} s; ini nlgeval_judge_timeout), lower "
            "--nlgeval-judge-max-tokens, or use a faster model"
        ),
        JudgeServerUnreachable: "is the server running, and is --nlgeval-judge-api-base right (scheme, host, port, "
        "the /v1 suffix)?",
    }
    return CriterionJudge(
        model,
        samples=settings["judge_samples"],
        logprobs=settings["judge_logprobs"],
        on_parse_failure=settings["judge_on_parse_failure"],
        stats=stats,
        cache=False,
        read=settings.get("judge_read", "form"),
    )
