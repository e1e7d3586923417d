"""The induced metric as a versioned JSON artifact, and the callable that a test or an optimiser loads.

The file holds everything needed to recompute a score and to judge whether to trust it:

* ``components``: bank metrics (registry name, constructor parameters, the metric's signature string) and
  generated judges (their :class:`~pytest_nlgeval.induction.judges.JudgeSpec`: signature, criterion,
  rubric, examples) with the judge LM's id and parameters (never its API key);
* the composition: scaler mean and scale, PLS weights, coefficients and intercept
  (``score = intercept + sum_j coef_j * (x_j - mean_j) / scale_j``);
* ``provenance``: package versions, seed, the dataset's sha256 and sizes, held-out Kendall tau and its
  p-value and interval, sensitivity and stability, LLM usage;
* ``report``: what the report card shows (selection steps, correlations, example judgments);
* ``sha256``: the content hash of everything else, over its canonical JSON (keys sorted, no spaces, UTF-8).

Loading verifies the hash (a changed coefficient moves every score, so a hand edit or a corrupted copy is
refused with :class:`ArtifactIntegrityError`, naming the file), the type of every field the score depends on
(:class:`ArtifactError` naming the field; every number finite), and the options of every bank component (a
registered metric, options its constructor takes, a model folder that exists). After a deliberate hand edit,
re-seal the file with ``nlgeval metrics seal FILE`` or load it with ``trust=True``
(``assert_metric(..., trust=True)``).

Scores are on the scale of the labels (``label_range``, e.g. 1 to 5). A linear composition extrapolates: an
output unlike the training outputs (one identical to its reference, an empty one) can score beyond the labels,
and the shipped example reaches -2.2 and 8.4 on its 1-5 scale with every component at its bound. A score is
therefore reported as the composition computes it (never clipped: clipping would tie outputs that the metric
ranks apart, and the stored fit predictions would no longer reproduce), as long as it lies within
:data:`RANGE_TOLERANCE` label spans of the range (-3 to 9 for labels 1 to 5). A score further out is refused
with :class:`ScoreOutOfRangeError` naming the artifact: its intercept or coefficients are out of range (an
edited file), or the output is so far from what the metric was fitted on that the number means nothing.

Example::

    >>> from pytest_nlgeval.induction import InducedMetric                     # doctest: +SKIP
    >>> helpful = InducedMetric.load("metrics/helpful.json")                  # doctest: +SKIP
    >>> helpful("Paris is the capital of France.", input="Capital of France?")  # doctest: +SKIP
    4.12
"""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from pytest_nlgeval.errors import NLGEvalError
from pytest_nlgeval.llm.errors import JudgeParseError

__all__ = [
    "ARTIFACT_SCHEMA",
    "ARTIFACT_VERSION",
    "ArtifactError",
    "ArtifactIntegrityError",
    "Component",
    "InducedMetric",
    "MetricEvaluation",
    "JudgeParseError",
    "RANGE_TOLERANCE",
    "ScoreOutOfRangeError",
    "content_hash",
    "seal",
]

ARTIFACT_SCHEMA = "pytest-nlgeval/induced-metric"
ARTIFACT_VERSION = 1
#: how far beyond its label range a score may lie, in spans of the range (1.0: labels 1 to 5 allow -3 to 9)
RANGE_TOLERANCE = 1.0


class ArtifactError(NLGEvalError, ValueError):
    """An induced-metric file is missing, not an artifact, of an unsupported version, or has a field of the
    wrong type or a bank component with unknown options."""


class ArtifactIntegrityError(ArtifactError):
    """An induced-metric file's content does not match its stored ``sha256`` (or it has none): it was edited
    or damaged after ``nlgeval induce`` wrote it. ``path``, ``expected`` and ``actual`` say which and how."""

    def __init__(self, path: str, expected: str | None, actual: str) -> None:
        self.path, self.expected, self.actual = path, expected, actual
        if expected is None:
            problem = "has no content hash (sha256), so whether it is the file `nlgeval induce` wrote cannot be checked"
        else:
            problem = (
                f"does not match its content hash: stored sha256 {expected[:12]}…, content {actual[:12]}…; "
                "it was edited or damaged after `nlgeval induce` wrote it (every score depends on its numbers)"
            )
        super().__init__(
            f"induced metric {path} {problem}. Re-create it with `nlgeval induce`, restore it from version control, "
            f"or, after reviewing a deliberate edit, re-seal it with `nlgeval metrics seal {path}` "
            "(or load it with trust=True: InducedMetric.load(path, trust=True), assert_metric(..., trust=True))"
        )


class ScoreOutOfRangeError(ArtifactError):
    """A composed score lies further outside the artifact's label range than :data:`RANGE_TOLERANCE` allows.

    ``where`` names the artifact, ``value`` is the score and ``allowed`` the (low, high) it had to lie in.
    """

    def __init__(self, where: str, value: float, label_range: tuple[float, float], allowed: tuple[float, float]):
        self.where, self.value, self.allowed = where, value, allowed
        low, high = label_range
        super().__init__(
            f"{where}: the composed score {value:.8g} is outside the label range {low:g} to {high:g} that the "
            f"artifact declares, beyond the {allowed[0]:g} to {allowed[1]:g} a linear composition may reach by "
            "extrapolating; its intercept or coefficients are out of range (an edited artifact?), or the output "
            "is far from every output it was fitted on. Restore the file from version control or re-induce it "
            "with `nlgeval induce`"
        )


@dataclass
class Component:
    """One input of the composition: ``kind`` ``"bank"`` (``name`` + ``params``) or ``"judge"`` (``judge``)."""

    kind: str
    name: str
    params: dict = field(default_factory=dict)
    signature: str = ""
    judge: dict | None = None
    card: str | None = None  # Markdown metric card (generated judges carry their own)

    def to_dict(self) -> dict:
        data = {"kind": self.kind, "name": self.name, "params": self.params, "signature": self.signature}
        if self.judge is not None:
            data["judge"] = self.judge
        if self.card is not None:
            data["card"] = self.card
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "Component":
        if data.get("kind") not in ("bank", "judge") or not data.get("name"):
            raise ArtifactError(f"component {data!r}: needs kind 'bank' or 'judge' and a name")
        return cls(
            kind=data["kind"],
            name=data["name"],
            params=dict(data.get("params") or {}),
            signature=data.get("signature", ""),
            judge=data.get("judge"),
            card=data.get("card"),
        )


@dataclass
class MetricEvaluation:
    """One scored output with its parts: component values, their contributions to the score and the
    judges' rationales (``errors`` names judges whose output could not be parsed)."""

    value: float
    components: dict[str, float]
    contributions: dict[str, float]
    rationales: dict[str, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    def feedback(self, limit: int = 3) -> str:
        """Text that says why: the components that pulled the score down most, with judges' rationales."""
        parts = []
        order = sorted(self.contributions, key=lambda n: self.contributions[n])
        for name in order[:limit]:
            line = f"{name}: contribution {self.contributions[name]:+.2f} (value {self.components[name]:.3g})"
            if name in self.rationales:
                line += f" - {self.rationales[name]}"
            parts.append(line)
        for name, err in self.errors.items():
            parts.append(f"{name}: no score ({err[:120]})")
        return "\n".join(parts)


class InducedMetric:
    """A metric induced from human labels: a linear composition of bank metrics and LLM judges.

    Call it like a bank metric: ``metric(output, input=..., references=...) -> float`` (on the scale of the
    human labels), ``metric.score_batch(outputs, inputs, references)``, or :meth:`evaluate` for the parts.
    Judge components need an LM: pass ``lm=`` to :meth:`load` or :meth:`set_lm`; otherwise one is built from
    the stored model id and parameters (the API key comes from the environment, as LiteLLM reads it).
    """

    higher_is_better = True

    def __init__(
        self,
        *,
        name: str,
        task: str,
        target: str,
        label_kind: str,
        label_range: tuple[float, float],
        components: Sequence[Component],
        mean: Sequence[float],
        scale: Sequence[float],
        weights: Sequence[float],
        coefficients: Sequence[float],
        intercept: float,
        provenance: dict | None = None,
        report: dict | None = None,
        lm_identity: dict | None = None,
        needs_input: bool = False,
        needs_references: bool = False,
    ) -> None:
        n = len(components)
        if not (len(mean) == len(scale) == len(weights) == len(coefficients) == n) or n == 0:
            raise ArtifactError(
                f"induced metric {name!r}: {n} components but {len(mean)} means, {len(scale)} scales, "
                f"{len(weights)} weights and {len(coefficients)} coefficients"
            )
        if any(not (_is_number(s) and s > 0) for s in scale):
            raise ArtifactError(f"induced metric {name!r}: every scaler scale must be a positive finite number")
        for what, values in (
            ("scaler mean", mean),
            ("PLS weight", weights),
            ("coefficient", coefficients),
            ("intercept", [intercept]),
            ("label range bound", label_range),
        ):
            bad = [v for v in values if not _is_number(v)]
            if bad:
                raise ArtifactError(f"induced metric {name!r}: every {what} must be a finite number, got {bad[0]!r}")
        if label_range[0] > label_range[1]:
            raise ArtifactError(f"induced metric {name!r}: label_range {tuple(label_range)!r} must be (low, high)")
        self.name = name
        self.task = task
        self.target = target
        self.label_kind = label_kind
        self.label_range = (float(label_range[0]), float(label_range[1]))
        self.components = list(components)
        self.mean = [float(v) for v in mean]
        self.scale = [float(v) for v in scale]
        self.weights = [float(v) for v in weights]
        self.coefficients = [float(v) for v in coefficients]
        self.intercept = float(intercept)
        self.provenance = dict(provenance or {})
        self.report = dict(report or {})
        self.lm_identity = dict(lm_identity) if lm_identity else None
        self.needs_input = needs_input
        self.needs_references = needs_references
        self.path: Path | None = None
        self._lm = None
        self._bank: dict[str, object] = {}

    # -- scoring --------------------------------------------------------------------------------------------
    @property
    def uses_judges(self) -> bool:
        return any(c.kind == "judge" for c in self.components)

    def set_lm(self, lm) -> None:
        """Use ``lm`` (any ``dspy.BaseLM``; wrapped in the disk cache) for the judge components."""
        from pytest_nlgeval.llm.cache import cached_lm

        self._lm = cached_lm(lm) if lm is not None else None

    def _judge_lm(self):
        if self._lm is None:
            from pytest_nlgeval.llm.cache import make_lm

            ident = self.lm_identity or {}
            if not ident.get("model"):
                raise ArtifactError(f"induced metric {self.name!r} has judge components but no LM id; pass lm=...")
            params = {k: v for k, v in (ident.get("params") or {}).items() if k not in ("temperature", "max_tokens")}
            p = ident.get("params") or {}
            self._lm = make_lm(
                ident["model"], temperature=p.get("temperature", 0.0), max_tokens=p.get("max_tokens", 1000), **params
            )
        return self._lm

    def _bank_metric(self, comp: Component):
        metric = self._bank.get(comp.name)
        if metric is None:
            from pytest_nlgeval.metrics import get_metric

            metric = get_metric(
                comp.params.get("metric", comp.name), **{k: v for k, v in comp.params.items() if k != "metric"}
            )
            if comp.signature and metric.signature != comp.signature:
                warnings.warn(
                    f"induced metric {self.name!r}: component {comp.name!r} now computes as "
                    f"{metric.signature!r} but was fitted as {comp.signature!r}; scores may differ from the "
                    "fitted ones (install the library versions in the artifact's provenance to reproduce them)",
                    stacklevel=3,
                )
            self._bank[comp.name] = metric
        return metric

    def component_values(
        self,
        outputs: Sequence[str],
        inputs: Sequence | None = None,
        references: Sequence | None = None,
        *,
        num_threads: int = 1,
    ):
        """Raw component values (rows x components; ``nan`` for unparsed judge outputs) plus per-row
        rationales and errors of the judges."""
        from pytest_nlgeval.induction.judges import JudgeSpec, run_judge

        outputs = _as_list(outputs, "outputs")
        n = len(outputs)
        inputs = list(inputs) if inputs is not None else [None] * n
        references = list(references) if references is not None else [None] * n
        if len(inputs) != n or len(references) != n:
            raise ValueError(
                f"got {n} outputs, {len(inputs)} inputs and {len(references)} references; pass one per output"
            )
        columns: list[list[float]] = []
        rationales: list[dict[str, str]] = [{} for _ in range(n)]
        errors: list[dict[str, str]] = [{} for _ in range(n)]
        for comp in self.components:
            if comp.kind == "bank":
                metric = self._bank_metric(comp)
                refs = (
                    references
                    if getattr(metric, "needs_references", False) or any(r is not None for r in references)
                    else None
                )
                columns.append([float(v) for v in metric.score_batch(outputs, inputs, refs)])
            else:
                spec = JudgeSpec.from_dict(comp.judge or {})
                run = run_judge(spec, self._judge_lm(), outputs, inputs, references, num_threads=num_threads)
                columns.append(run.values)
                for i, r in enumerate(run.results):
                    if r.rationale:
                        rationales[i][comp.name] = r.rationale
                    if r.error:
                        errors[i][comp.name] = r.error
        rows = [[col[i] for col in columns] for i in range(n)]
        return rows, rationales, errors

    def predict_rows(self, rows, *, check_range: bool = True) -> list[float]:
        """The composed score of raw component values (see :func:`~pytest_nlgeval.induction.regress.predict_linear`).

        A score further outside the label range than :data:`RANGE_TOLERANCE` allows is refused with
        :class:`ScoreOutOfRangeError` unless ``check_range`` is false (induction reads its own fit that way).
        """
        from pytest_nlgeval.induction.regress import predict_linear

        try:
            values = predict_linear(rows, self.mean, self.scale, self.coefficients, self.intercept)
        except (OverflowError, ValueError):  # ValueError: fsum met inf and -inf
            raise self._overflow("overflows") from None
        if check_range:
            low, high = self.allowed_range
            for value, row in zip(values, rows):
                if math.isnan(value) and any(not math.isfinite(float(x)) for x in row):
                    continue  # a judge gave no score: no score, not a wrong one
                if not math.isfinite(value):
                    raise self._overflow(f"is {value}")
                if not low <= value <= high:
                    raise ScoreOutOfRangeError(self._where(), value, self.label_range, (low, high))
        return values

    @property
    def allowed_range(self) -> tuple[float, float]:
        """The scores this metric gives: its label range widened by :data:`RANGE_TOLERANCE` spans each side."""
        low, high = self.label_range
        margin = RANGE_TOLERANCE * ((high - low) or 1.0)
        return (low - margin, high + margin)

    def _where(self) -> str:
        return str(self.path) if self.path else f"induced metric {self.name!r}"

    def _overflow(self, what: str) -> ArtifactError:
        return ArtifactError(
            f"{self._where()}: the composed score {what} although every component value is finite; its coefficients, "
            "means or scales are out of range (an edited artifact?). Re-induce it with `nlgeval induce`"
        )

    def score_batch(
        self, outputs: Sequence[str], inputs: Sequence | None = None, references: Sequence | None = None
    ) -> list[float]:
        """Scores of many outputs (``nan`` where a judge output could not be parsed)."""
        rows, _, _ = self.component_values(outputs, inputs, references)
        return self.predict_rows(rows)

    def evaluate(
        self, outputs: Sequence[str], inputs: Sequence | None = None, references: Sequence | None = None
    ) -> list[MetricEvaluation]:
        """Scores with their parts (component values, contributions, rationales)."""
        rows, rationales, errors = self.component_values(outputs, inputs, references)
        values = self.predict_rows(rows)
        out = []
        for row, value, rat, err in zip(rows, values, rationales, errors):
            contrib = {
                c.name: (coef * (x - m) / s if math.isfinite(x) else math.nan)
                for c, x, m, s, coef in zip(self.components, row, self.mean, self.scale, self.coefficients)
            }
            out.append(MetricEvaluation(value, {c.name: x for c, x in zip(self.components, row)}, contrib, rat, err))
        return out

    def score(self, output: str, input: str | None = None, references=None) -> float:
        """Score one output; raises :class:`JudgeParseError` when a judge's output could not be parsed."""
        ev = self.evaluate([output], [input], [references])[0]
        if ev.errors:
            raise JudgeParseError(
                f"induced metric {self.name!r}: no score, judge output could not be parsed after a retry: "
                + "; ".join(f"{k}: {v[:160]}" for k, v in ev.errors.items())
            )
        if not math.isfinite(ev.value) and all(math.isfinite(v) for v in ev.components.values()):
            # every component is a number, so the artifact's own numbers overflow: not a judge's fault
            raise self._overflow(f"is {ev.value}")
        return ev.value

    __call__ = score

    def verify(self, dataset) -> float:
        """Re-score the training rows of ``dataset`` and return the largest absolute difference from the
        predictions stored at fit time (0.0 when the metric reproduces its fit exactly).

        Raises :class:`ArtifactError` when the artifact holds no fit check or the dataset lacks its rows.
        """
        check = (self.report or {}).get("fit_check") or {}
        lines, stored = check.get("lines"), check.get("predictions")
        if not lines or stored is None:
            raise ArtifactError(f"induced metric {self.name!r} has no stored fit check to verify against")
        by_line = {e.line: e for e in dataset.examples}
        missing = [ln for ln in lines if ln not in by_line]
        if missing:
            raise ArtifactError(
                f"{dataset.source}: has no rows at lines {missing[:5]} used to fit {self.name!r}; "
                "verify with the dataset the metric was induced from"
            )
        rows = [by_line[ln] for ln in lines]
        components, _, _ = self.component_values(
            [r.output for r in rows],
            [r.input for r in rows] if all(r.input is not None for r in rows) else None,
            [list(r.references) if r.references else None for r in rows],
        )
        values = self.predict_rows(components, check_range=False)  # the difference is the answer, in any case

        def diff(now: float, then) -> float:
            if then is None:  # no prediction at fit time (a judge gave no score): must still have none
                return 0.0 if not math.isfinite(now) else math.inf
            return abs(now - then) if math.isfinite(now) else math.inf

        return max((diff(a, b) for a, b in zip(values, stored)), default=0.0)

    # -- files ----------------------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "schema": ARTIFACT_SCHEMA,
            "version": ARTIFACT_VERSION,
            "name": self.name,
            "task": self.task,
            "target": self.target,
            "label_kind": self.label_kind,
            "label_range": list(self.label_range),
            "needs_input": self.needs_input,
            "needs_references": self.needs_references,
            "components": [c.to_dict() for c in self.components],
            "scaler": {"mean": self.mean, "scale": self.scale},
            "pls": {
                "weights": self.weights,
                "coefficients": self.coefficients,
                "intercept": self.intercept,
                "n_components": 1,
            },
            "lm": self.lm_identity,
            "provenance": self.provenance,
            "report": self.report,
        }

    def save(self, path: str | Path) -> Path:
        """Write the artifact (UTF-8 JSON, keys sorted; floats written exactly by Python's repr) with its
        content hash (``sha256``)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_dumps(seal(_finite(self.to_dict()))), encoding="utf-8")
        self.path = path
        return path

    @classmethod
    def from_dict(cls, data: dict, source: str = "<dict>", *, trust: bool = True) -> "InducedMetric":
        """Build the metric from an artifact's JSON object. ``trust=False`` also verifies its ``sha256``
        (:meth:`load` does; a dict built in memory usually has none)."""
        if not isinstance(data, dict) or data.get("schema") != ARTIFACT_SCHEMA:
            raise ArtifactError(
                f"{source}: not an induced-metric artifact (expected \"schema\": \"{ARTIFACT_SCHEMA}\"); "
                "create one with `nlgeval induce`"
            )
        version = data.get("version")
        if version != ARTIFACT_VERSION:
            raise ArtifactError(
                f"{source}: artifact version {version!r} is not supported by this pytest-nlgeval "
                f"(supports {ARTIFACT_VERSION}); upgrade pytest-nlgeval or re-run `nlgeval induce`"
            )
        if not trust:
            actual = content_hash(data)
            if data.get("sha256") != actual:
                stored = data.get("sha256")
                raise ArtifactIntegrityError(source, stored if isinstance(stored, str) else None, actual)
        _validate_fields(data, source)
        try:
            return cls(
                name=data["name"],
                task=data.get("task", ""),
                target=data["target"],
                label_kind=data.get("label_kind", "numeric"),
                label_range=tuple(data["label_range"]),
                components=[Component.from_dict(c) for c in data["components"]],
                mean=data["scaler"]["mean"],
                scale=data["scaler"]["scale"],
                weights=data["pls"]["weights"],
                coefficients=data["pls"]["coefficients"],
                intercept=data["pls"]["intercept"],
                provenance=data.get("provenance"),
                report=data.get("report"),
                lm_identity=data.get("lm"),
                needs_input=bool(data.get("needs_input")),
                needs_references=bool(data.get("needs_references")),
            )
        except (KeyError, TypeError) as exc:
            raise ArtifactError(f"{source}: malformed induced-metric artifact (missing or bad field {exc})") from None

    def check_components(self, source: str | None = None) -> None:
        """Check every bank component's options now (a registered metric, options its constructor takes, a
        model folder that exists) instead of failing deep inside a library at the first score."""
        from pytest_nlgeval.metrics import UnknownMetricError, get_metric
        from pytest_nlgeval.metrics.base import MetricUnavailableError

        where = source or (str(self.path) if self.path else f"induced metric {self.name!r}")
        for i, comp in enumerate(self.components):
            if comp.kind != "bank":
                continue
            registered = comp.params.get("metric", comp.name)
            options = {k: v for k, v in comp.params.items() if k != "metric"}
            try:
                metric = get_metric(registered, **options)
                metric.check_options()
            except UnknownMetricError:
                raise ArtifactError(
                    f"{where}: components[{i}] ({comp.name!r}) names metric {registered!r}, which is "
                    "not registered; see `nlgeval metrics list`"
                ) from None
            except (TypeError, ValueError, MetricUnavailableError) as exc:
                raise ArtifactError(
                    f"{where}: components[{i}] ({comp.name!r}) has invalid params "
                    f"{json.dumps(options, sort_keys=True, default=str)}: {exc}"
                ) from None

    @classmethod
    def load(cls, path: str | Path, lm=None, *, trust: bool = False) -> "InducedMetric":
        """Read an artifact written by :meth:`save` / ``nlgeval induce``; ``lm`` serves its judges.

        The content hash is verified (:class:`ArtifactIntegrityError` on a mismatch) unless ``trust``, and the
        bank components' options are checked; every problem is an :class:`ArtifactError` naming the file.
        """
        path = Path(path)
        if not path.is_file():
            raise ArtifactError(
                f"induced metric file {str(path)!r} does not exist; create it with "
                "`nlgeval induce DATA --task ... --target COLUMN -o FILE`"
            )
        try:
            data = json.loads(path.read_text(encoding="utf-8"), parse_constant=_no_constant)
        except ValueError as exc:
            raise ArtifactError(f"{path}: not valid JSON ({exc})") from None
        metric = cls.from_dict(data, str(path), trust=trust)
        metric.path = path
        metric.check_components(str(path))
        if lm is not None:
            metric.set_lm(lm)
        return metric

    @property
    def fingerprint(self) -> dict:
        """What makes two scores of this metric comparable: the composition (components with their
        signatures and judge prompts, scaler, PLS numbers) and the judge LM. Used as the "evaluator" of
        metric checks, so a baseline is never compared silently with a re-induced metric."""
        import hashlib

        composition = {
            "components": [c.to_dict() | {"card": None} for c in self.components],
            "scaler": [self.mean, self.scale],
            "pls": [self.weights, self.coefficients, self.intercept],
        }
        blob = json.dumps(composition, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return {
            "model": f"induced-metric:{self.name}",
            "kind": "induced-metric",
            "files": {"composition": hashlib.sha256(blob.encode("utf-8")).hexdigest()},
            "components": [c.signature or c.name for c in self.components],
            # shown by the plugin's summary next to the evaluator id
            "provider": (
                f"LLM judges: {(self.lm_identity or {}).get('model')}" if self.uses_judges else "bank metrics"
            ),
            "precision": "float64",
        }

    @property
    def fingerprint_id(self) -> str:
        """A short stable id of :attr:`fingerprint`."""
        import hashlib

        blob = json.dumps(self.fingerprint, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]

    @property
    def signature(self) -> str:
        """``induced:NAME|composition:<sha256 prefix>``, like a bank metric's signature."""
        return f"induced:{self.name}|composition:{self.fingerprint['files']['composition'][:12]}"

    def card(self) -> dict:
        """A compact description for reports: components with weights, held-out agreement, robustness."""
        prov = self.provenance
        return {
            "name": self.name,
            "task": self.task,
            "target": self.target,
            "artifact": str(self.path) if self.path else None,
            "components": [
                {"name": c.name, "kind": c.kind, "weight": w, "coefficient": b}
                for c, w, b in zip(self.components, self.weights, self.coefficients)
            ],
            "intercept": self.intercept,
            "heldout": prov.get("heldout"),
            "robustness": prov.get("robustness"),
            "dataset": prov.get("dataset"),
            "mode": prov.get("mode"),
        }

    def __repr__(self) -> str:
        return f"<InducedMetric {self.name} ({len(self.components)} components) target={self.target!r}>"


def content_hash(data: dict) -> str:
    """sha256 of an artifact's canonical JSON (keys sorted, no spaces, UTF-8), its ``sha256`` field left out.

    The object is first normalised through a JSON round trip, so the hash of what :meth:`InducedMetric.save`
    writes equals the hash of what :meth:`InducedMetric.load` reads.
    """
    import hashlib

    body = json.loads(json.dumps({k: v for k, v in data.items() if k != "sha256"}, allow_nan=False))
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def seal(data: dict) -> dict:
    """``data`` with its ``sha256`` set to its :func:`content_hash`."""
    return {**{k: v for k, v in data.items() if k != "sha256"}, "sha256": content_hash(data)}


def seal_file(path: str | Path) -> str:
    """Re-seal an artifact after a deliberate hand edit: validate it, then rewrite its ``sha256``.

    Returns the new hash. Raises :class:`ArtifactError` (naming the file and field) when the edit left it
    invalid, so a broken file is never sealed.
    """
    path = Path(path)
    metric = InducedMetric.load(path, trust=True)
    data = json.loads(path.read_text(encoding="utf-8"))
    del metric
    sealed = seal(data)
    path.write_text(_dumps(sealed), encoding="utf-8")
    return sealed["sha256"]


def _dumps(data: dict) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def _no_constant(token: str):
    raise ValueError(f"{token} is not a valid number in an induced-metric artifact")


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _describe(value) -> str:
    return f"{value!r} (a {type(value).__name__})"


def _validate_fields(data: dict, source: str) -> None:
    """Check the type of every field the score depends on; the error names the field and the file."""

    def fail(field_name: str, expected: str, value) -> None:
        raise ArtifactError(
            f"{source}: field {field_name} must be {expected}, got {_describe(value)}; "
            "re-create the file with `nlgeval induce` or fix the field"
        )

    def need(obj: dict, key: str, where: str, check, expected: str, required: bool = True, default=None):
        if key not in obj:
            if required:
                raise ArtifactError(f"{source}: field {where} is missing; re-create the file with `nlgeval induce`")
            return default
        if not check(obj[key]):
            fail(where, expected, obj[key])
        return obj[key]

    def numbers(value) -> bool:
        return isinstance(value, list) and all(_is_number(v) for v in value)

    is_str = lambda v: isinstance(v, str)  # noqa: E731
    need(data, "name", "name", lambda v: isinstance(v, str) and v != "", "a non-empty string")
    need(data, "target", "target", lambda v: isinstance(v, str) and v != "", "a non-empty string")
    need(data, "task", "task", is_str, "a string", required=False)
    need(data, "label_kind", "label_kind", is_str, "a string", required=False)
    need(
        data,
        "label_range",
        "label_range",
        lambda v: numbers(v) and len(v) == 2 and v[0] <= v[1],
        "two finite numbers [low, high]",
    )
    for key in ("needs_input", "needs_references"):
        need(data, key, key, lambda v: isinstance(v, bool), "true or false", required=False)
    for key in ("provenance", "report", "lm"):
        need(data, key, key, lambda v: v is None or isinstance(v, dict), "an object or null", required=False)
    components = need(
        data, "components", "components", lambda v: isinstance(v, list) and len(v) > 0, "a non-empty list"
    )
    for i, comp in enumerate(components):
        where = f"components[{i}]"
        if not isinstance(comp, dict):
            fail(where, "an object", comp)
        need(comp, "kind", f"{where}.kind", lambda v: v in ("bank", "judge"), "'bank' or 'judge'")
        need(comp, "name", f"{where}.name", lambda v: isinstance(v, str) and v != "", "a non-empty string")
        need(comp, "params", f"{where}.params", lambda v: v is None or isinstance(v, dict), "an object", required=False)
        need(comp, "signature", f"{where}.signature", is_str, "a string", required=False)
        need(
            comp, "card", f"{where}.card", lambda v: v is None or isinstance(v, str), "a string or null", required=False
        )
        need(
            comp,
            "judge",
            f"{where}.judge",
            lambda v: isinstance(v, dict) if comp["kind"] == "judge" else v is None or isinstance(v, dict),
            "an object (the judge's spec)",
            required=comp["kind"] == "judge",
        )
    scaler = need(data, "scaler", "scaler", lambda v: isinstance(v, dict), "an object")
    need(scaler, "mean", "scaler.mean", numbers, "a list of finite numbers")
    need(
        scaler,
        "scale",
        "scaler.scale",
        lambda v: numbers(v) and all(x > 0 for x in v),
        "a list of positive finite numbers",
    )
    pls = need(data, "pls", "pls", lambda v: isinstance(v, dict), "an object")
    need(pls, "weights", "pls.weights", numbers, "a list of finite numbers")
    need(pls, "coefficients", "pls.coefficients", numbers, "a list of finite numbers")
    need(pls, "intercept", "pls.intercept", _is_number, "a finite number")
    need(
        pls,
        "n_components",
        "pls.n_components",
        lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
        "a positive integer",
        required=False,
    )
    n = len(components)
    lengths = {
        "scaler.mean": len(scaler["mean"]),
        "scaler.scale": len(scaler["scale"]),
        "pls.weights": len(pls["weights"]),
        "pls.coefficients": len(pls["coefficients"]),
    }
    wrong = {k: v for k, v in lengths.items() if v != n}
    if wrong:
        raise ArtifactError(
            f"{source}: {n} components but "
            + ", ".join(f"{v} values in {k}" for k, v in wrong.items())
            + "; every list of the composition has one value per component"
        )


def _as_list(values, what: str) -> list:
    if isinstance(values, str):
        raise TypeError(f"{what} must be a list of strings, got one string")
    return list(values)


def _finite(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value
