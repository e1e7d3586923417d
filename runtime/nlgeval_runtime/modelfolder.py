"""The model folder: ``model.onnx`` (+ external data), ``tokenizer.json``, ``nlgeval.json``.

The contract is documented in docs/model-folder.md. This module reads and validates the manifest,
picks the graph for a precision and verifies file hashes; it never creates an ONNX session.

Example::

    folder = ModelFolder.open("models/unieval-sum")
    folder.verify()                      # raises ModelIntegrityError on a tampered file
    graph = folder.graph_for("int8")     # Path of the int8 variant
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nlgeval_runtime.errors import ModelFormatError, ModelIntegrityError
from nlgeval_runtime.hashing import sha256_file

MANIFEST = "nlgeval.json"
FORMAT = "nlgeval-model"
FORMAT_VERSION = 1
KINDS = ("boolqa", "causal-lm", "embedding", "claim-support")
PRECISIONS = ("fp32", "fp16", "int8")


@dataclass(frozen=True)
class ModelFolder:
    path: Path
    manifest: dict[str, Any]

    # -- loading -----------------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | Path) -> "ModelFolder":
        """Read and validate ``path/nlgeval.json``; no file hashing happens here (see :meth:`verify`)."""
        folder = Path(path).expanduser()
        if not folder.is_dir():
            raise ModelFormatError(f"model folder {str(folder)!r} does not exist or is not a directory")
        manifest_path = folder / MANIFEST
        if not manifest_path.is_file():
            raise ModelFormatError(
                f"{str(folder)!r} has no {MANIFEST}: it is not an exported model folder. "
                f"Export a checkpoint with `nlgeval export CHECKPOINT {folder}`."
            )
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"), object_pairs_hook=_unique_keys)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ModelFormatError(f"{manifest_path} is not valid JSON ({exc}); re-export the model") from exc
        except _DuplicateKey as exc:
            # JSON readers keep the last of two equal keys; a dimension declared twice would be read silently
            raise ModelFormatError(
                f"{manifest_path} names {exc.args[0]!r} twice in one object; keep one entry (re-export or "
                "`nlgeval-train declare` the folder)"
            ) from None
        _validate_manifest(manifest, manifest_path)
        return cls(folder, manifest)

    # -- accessors ---------------------------------------------------------------------------
    @property
    def kind(self) -> str:
        return self.manifest["kind"]

    @property
    def architecture(self) -> str:
        return self.manifest.get("architecture", "unknown")

    @property
    def input_conventions(self) -> dict[str, Any]:
        return self.manifest.get("input", {})

    @property
    def max_length(self) -> int:
        return int(self.input_conventions.get("max_length", 512))

    @property
    def variants(self) -> dict[str, str]:
        return dict(self.manifest.get("variants") or {"fp32": "model.onnx"})

    @property
    def tokenizer_path(self) -> Path:
        return self.path / self.manifest.get("tokenizer", "tokenizer.json")

    @property
    def source(self) -> dict[str, Any]:
        return dict(self.manifest.get("source") or {})

    @property
    def dimensions(self) -> dict[str, Any] | None:
        """The folder's declaration of the dimensions it answers, or None (it answers every question).

        ``{"serves": {"task/dimension": {"scorer": "boolqa", "source_units": "windows"}, ...},
        "refuses": {"task/dimension": {"reason": str, "use": str}, ...}, "zero_shot": bool}``: a
        dimension listed under ``refuses``, or any dimension missing from ``serves``, is never answered
        (docs/model-folder.md). The declaration is part of the fingerprint.
        """
        declared = self.manifest.get("dimensions")
        return None if declared is None else dict(declared)

    @property
    def subfolders(self) -> list[str]:
        """The sub-folder models that the declaration names (each a model folder of its own), those of
        ``discourse`` readings included."""
        serves = (self.manifest.get("dimensions") or {}).get("serves", {})
        names = {spec["folder"] for spec in serves.values() if spec.get("folder")}
        names |= {
            spec["discourse"]["folder"]
            for spec in serves.values()
            if isinstance(spec.get("discourse"), dict) and spec["discourse"].get("folder")
        }
        return sorted(names)

    @property
    def dimensions_digest(self) -> str | None:
        """sha256 of the canonical JSON of :attr:`dimensions` and of the file hashes of every sub-folder
        model it names (None without a declaration): a changed declaration or sub-model changes it."""
        declared = self.manifest.get("dimensions")
        if declared is None:
            return None
        import hashlib

        subs = {name: ModelFolder.open(self.path / name).manifest["files"] for name in self.subfolders}
        canonical = json.dumps({"declared": declared, "subfolders": subs}, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()

    def graph_for(self, precision: str) -> Path:
        """The ONNX file that serves ``precision``; a clear error when the folder lacks it."""
        variants = self.variants
        if precision not in variants:
            have = ", ".join(sorted(variants)) or "none"
            raise ModelFormatError(
                f"model folder {str(self.path)!r} has no {precision} graph (it has: {have}). "
                f"Re-export with `nlgeval export {self.source.get('checkpoint', 'CHECKPOINT')} {self.path} "
                f"--{precision}` or choose one of the precisions it has."
            )
        return self.path / variants[precision]

    def quantization(self, precision: str) -> str | None:
        """How the graph of ``precision`` is quantised: ``"dynamic"``, ``"weight-only"`` or None (float)."""
        declared = (self.manifest.get("quantization") or {}).get(precision)
        if declared is None and precision == "int8":
            return "dynamic"  # what an int8 graph without a declaration most likely is: assume the safe case
        return declared

    def batch_invariant(self, precision: str) -> bool:
        """Whether a score depends on the input alone, not on the other inputs of its batch."""
        return self.quantization(precision) != "dynamic"

    def files_for(self, precision: str) -> dict[str, str]:
        """Manifest hashes of the files one evaluator at ``precision`` reads (graph, its data, tokenizer)."""
        hashes = self.manifest["files"]
        wanted = {self.tokenizer_path.name}
        graph = self.variants.get(precision)
        if graph is not None:
            wanted.add(graph)
            wanted.update(self.manifest.get("external_data", {}).get(graph, []))
        return {name: hashes[name] for name in sorted(wanted) if name in hashes}

    # -- integrity ---------------------------------------------------------------------------
    def verify(self, names: list[str] | None = None) -> None:
        """Check the sha256 of the listed files (default: every file in the manifest)."""
        hashes = self.manifest["files"]
        for name in names if names is not None else sorted(hashes):
            expected = hashes.get(name)
            if expected is None:
                raise ModelIntegrityError(
                    f"{self.path / MANIFEST} lists no sha256 for {name!r}; re-export the model folder"
                )
            file = self.path / name
            if not file.is_file():
                raise ModelIntegrityError(
                    f"model file {str(file)!r} is missing; the folder is incomplete. Re-download or re-export it."
                )
            actual = sha256_file(file)
            if actual != expected:
                raise ModelIntegrityError(
                    f"model file {str(file)!r} does not match its sha256 in {MANIFEST} "
                    f"(expected {expected[:16]}..., got {actual[:16]}...): the file was modified or truncated. "
                    "Re-download or re-export the model folder; never edit it by hand."
                )


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _DuplicateKey(key)
        seen[key] = value
    return seen


def _validate_manifest(manifest: Any, where: Path) -> None:
    def fail(msg: str) -> None:
        raise ModelFormatError(f"{where}: {msg}; re-export the model folder with `nlgeval export`")

    if not isinstance(manifest, dict):
        fail("the manifest must be a JSON object")
    if manifest.get("format") != FORMAT:
        fail(f"'format' must be {FORMAT!r}")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        fail(f"'format_version' {version!r} is not supported by this runtime (supports {FORMAT_VERSION})")
    if not isinstance(manifest.get("kind"), str) or manifest["kind"] not in KINDS:
        fail(f"'kind' must be one of {KINDS}, not {manifest.get('kind')!r}")
    # every field the runtime reads has its type checked here, so a wrong one is this error, not a crash later
    for key in ("input", "source", "quantization", "external_data", "variants", "reading", "export"):
        if key in manifest and manifest[key] is not None and not isinstance(manifest[key], dict):
            fail(f"'{key}' must be a JSON object, not {_kind(manifest[key])}")
    for key in ("tokenizer", "architecture"):
        if key in manifest and (not isinstance(manifest[key], str) or not manifest[key]):
            fail(f"'{key}' must be a non-empty string, not {_kind(manifest[key])}")
    for precision, method in (manifest.get("quantization") or {}).items():
        if precision not in PRECISIONS or not isinstance(method, str):
            fail(f"'quantization' maps a precision ({', '.join(PRECISIONS)}) to how it is quantised (a string)")
    for graph, data in (manifest.get("external_data") or {}).items():
        if not isinstance(data, list) or not all(isinstance(name, str) for name in data):
            fail(f"'external_data'[{graph!r}] must be a list of file names")
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        fail("'files' must map every file name to its sha256")
    for name, digest in files.items():
        if not isinstance(digest, str) or len(digest) != 64:
            fail(f"'files'[{name!r}] is not a sha256 hex digest")
        if "/" in name or "\\" in name or name.startswith("."):
            fail(f"'files' entry {name!r} must be a plain file name inside the folder")
    variants = manifest.get("variants", {"fp32": "model.onnx"})
    if not isinstance(variants, dict) or not variants:
        fail("'variants' must map precisions to ONNX file names")
    for precision, name in variants.items():
        if not isinstance(name, str):
            fail(f"'variants'[{precision!r}] must be an ONNX file name, not {_kind(name)}")
        if precision not in PRECISIONS:
            fail(f"unknown precision {precision!r} in 'variants' (known: {PRECISIONS})")
        if name not in files:
            fail(f"variant file {name!r} has no sha256 in 'files'")
    tokenizer = manifest.get("tokenizer", "tokenizer.json")
    if tokenizer not in files:
        fail(f"tokenizer file {tokenizer!r} has no sha256 in 'files'")
    if "dimensions" in manifest:
        _validate_dimensions(manifest["dimensions"], fail)
    if manifest["kind"] == "boolqa":
        conventions = manifest.get("input")
        if not isinstance(conventions, dict):
            fail("'input' (separator, separator_token, max_length, pad_token_id) is required")
        for key in ("separator", "separator_token", "max_length", "pad_token_id"):
            if key not in conventions:
                fail(f"'input' lacks {key!r}")
        if not isinstance(conventions["max_length"], int) or conventions["max_length"] < 8:
            fail("'input.max_length' must be an integer >= 8")
    if manifest["kind"] == "claim-support":
        _validate_reading(manifest, fail)


def _validate_reading(manifest: dict, fail) -> None:
    """A fact checker's ``reading`` (nlgeval_runtime.claim_support): how its authors read a (document, claim) pair."""
    reading = manifest.get("reading")
    if not isinstance(reading, dict):
        fail("a claim-support folder needs a 'reading' (checker, template, eos_token, chunk, max_length)")
        return
    for key in ("checker", "template", "eos_token"):
        if not isinstance(reading.get(key), str) or not reading[key]:
            fail(f"'reading.{key}' must be a non-empty string")
    fields = _template_fields(reading["template"])
    if fields != {"document", "claim"}:
        fail(
            "'reading.template' must hold {document} and {claim} and no other placeholder (no attribute, index, "
            f"conversion or format spec; a literal brace is written {{{{ or }}}}), got {reading['template'][:120]!r}"
        )
    chunk = reading.get("chunk")
    if chunk is not None and (
        not isinstance(chunk, dict)
        or isinstance(chunk.get("size"), bool)
        or not isinstance(chunk.get("size"), int)
        or chunk["size"] < 1
        or chunk.get("count") not in ("tokens", "words")
    ):
        fail("'reading.chunk' must be null or {'size': a positive integer, 'count': 'tokens' or 'words'}")
    for key in ("max_length", "max_tokens"):
        value = reading.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 8):
            fail(f"'reading.{key}' must be null or an integer >= 8")
    if not _finite(reading.get("supported_from", 0.5), 0.0, 1.0):
        fail("'reading.supported_from' must be a number in [0, 1]")
    pad = (manifest.get("input") or {}).get("pad_token_id")
    if isinstance(pad, bool) or not isinstance(pad, int):
        fail("'input.pad_token_id' must be an integer")


#: the scorers a folder may declare for a dimension (``dimensions.serves``)
#: ``boolqa``: P(Yes) of the dimension's question; ``similarity``: the calibrated cosine of the output (or each
#: passage) and the question under a sentence encoder in the sub-folder the entry names (kind ``embedding``)
#: ``informative``: per sentence, the best calibrated cosine against the texts ``against`` names, times how much the
#: sentence says (dialogue engagingness); ``related``: the mean calibrated cosine against the texts ``against`` names
#: that a call gives (summarization relevance against the reference and the document)
#: a scorer a plugin registers is named ``package.name`` (pytest_nlgeval_register_scorers); the evaluator looks it up
SCORERS = ("boolqa", "similarity", "informative", "related")
SOURCE_UNITS = ("windows", "sentences", "both")


def _kind(value: Any) -> str:
    """What a JSON value is, for a message: ``the string 'int8'``, ``a list``."""
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    if isinstance(value, bool) or value is None or isinstance(value, (int, float)):
        return json.dumps(value)
    return "a list" if isinstance(value, list) else "an object" if isinstance(value, dict) else type(value).__name__


def _template_fields(template: str) -> set[str] | None:
    """The placeholders of a ``str.format`` template when each is a bare name (``{document}``), else None."""
    import string

    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError:  # an unmatched brace
        return None
    names: set[str] = set()
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if not name.isidentifier() or spec or conversion:
            return None
        names.add(name)
    return names


def _finite(value: Any, low: float, high: float) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and low <= value <= high


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _plugin_scorer(name: Any) -> bool:
    """Whether ``name`` reads ``package.name``: a scorer a plugin registers, which only the evaluator knows."""
    return isinstance(name, str) and re.fullmatch(r"[A-Za-z_][\w-]*(\.[A-Za-z_][\w-]*)+", name) is not None


def _plain_name(name: Any) -> bool:
    """Whether ``name`` names an entry of the model folder itself: no separator, no ``..``, not hidden."""
    return isinstance(name, str) and bool(name) and "/" not in name and "\\" not in name and not name.startswith(".")


def _validate_checks(name: str, checks: Any, fail) -> None:
    """A fact dimension's ``checks`` (runtime/nlgeval_runtime/factcheck.py ``FactChecks``), key by key."""
    if not isinstance(checks, dict):
        fail(f"{name!r}: 'checks' must be an object (intercept, weights, cap, form_floor), got {checks!r}")
    if not _number(checks.get("intercept")):
        fail(f"{name!r}: 'checks.intercept' must be a finite number, got {checks.get('intercept')!r}")
    weights = checks.get("weights")
    if not isinstance(weights, dict) or not weights:
        fail(f"{name!r}: 'checks.weights' must map feature names to finite numbers, got {weights!r}")
    for feature, weight in weights.items():
        if not _number(weight):
            fail(f"{name!r}: 'checks.weights.{feature}' must be a finite number, got {weight!r}")
    for key, default, meaning in (
        ("cap", 0.2, "the most a claim with a failed explicit check scores"),
        ("form_floor", 0.1, "the form score below which a claim is not a statement"),
    ):
        value = checks.get(key, default)
        if not _finite(value, 0.0, 1.0):
            fail(f"{name!r}: 'checks.{key}' ({meaning}) must be a finite number in [0, 1], got {value!r}")
    version = checks.get("version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        fail(f"{name!r}: 'checks.version' must be a positive integer, got {version!r}")


def _validate_dimensions(declared: Any, fail) -> None:
    if not isinstance(declared, dict):
        fail("'dimensions' must be an object with 'serves' (and optionally 'refuses', 'zero_shot')")
    unknown = sorted(set(declared) - {"serves", "refuses", "zero_shot"})
    if unknown:
        fail(f"'dimensions' has unknown key(s) {unknown}; known: serves, refuses, zero_shot")
    serves, refuses = declared.get("serves"), declared.get("refuses", {})
    if not isinstance(serves, dict):
        fail("'dimensions.serves' must map 'task/dimension' names to their scorer settings")
    if not isinstance(refuses, dict):
        fail("'dimensions.refuses' must map 'task/dimension' names to {'reason': ..., 'use': ...}")
    if not isinstance(declared.get("zero_shot", False), bool):
        fail("'dimensions.zero_shot' must be true or false")
    for name, spec in {**serves, **refuses}.items():
        if not isinstance(name, str) or name.count("/") != 1:
            fail(f"dimension name {name!r} must read 'task/dimension'")
        if not isinstance(spec, dict):
            fail(f"the entry of {name!r} must be an object")
    both = sorted(set(serves) & set(refuses))
    if both:
        fail(f"{both} are both served and refused")
    for name, spec in serves.items():
        sub = spec.get("folder")
        if sub is not None and not _plain_name(sub):
            fail(f"{name!r}: 'folder' must name a sub-folder of the model folder (a plain name), got {sub!r}")
        fields = spec.get("fields")
        if fields is not None and (
            not isinstance(fields, list) or not fields or not all(isinstance(f, str) and f for f in fields)
        ):
            fail(f"{name!r}: 'fields' must be a non-empty list of field labels, the output's first")
        if spec.get("unit", "whole") not in ("whole", "sentence", "claim", "passage"):
            fail(f"{name!r}: 'unit' must be 'whole', 'sentence', 'claim' or 'passage'")
        if spec.get("aggregation", "mean") not in ("mean", "sum", "min", "mean_min"):
            fail(f"{name!r}: 'aggregation' must be one of mean, sum, min, mean_min")
        checks = spec.get("checks")
        if checks is not None:
            _validate_checks(name, checks, fail)
        if checks is not None and spec.get("unit") != "claim":
            fail(f"{name!r}: 'checks' judge claims: declare 'unit': 'claim' with them")
        scorer = spec.get("scorer", "boolqa")
        if scorer not in SCORERS and not _plugin_scorer(scorer):
            fail(
                f"{name!r}: unknown scorer {scorer!r} (known: {SCORERS}; a scorer a plugin registers is named "
                "'package.name')"
            )
        partner = spec.get("in_context_of")
        if partner is not None and (not isinstance(partner, str) or f"{name.split('/')[0]}/{partner}" not in serves):
            fail(f"{name!r}: 'in_context_of' must name another dimension of its task that the folder serves")
        if spec.get("scorer") in ("informative", "related"):
            against = spec.get("against")
            if not spec.get("folder") or not isinstance(against, dict) or not against:
                fail(
                    f"{name!r}: a {spec['scorer']!r} scorer needs the 'folder' of its encoder and 'against' "
                    "calibrations"
                )
            for block in against.values():
                numbers = [block.get("scale"), block.get("offset")] if isinstance(block, dict) else [None]
                if not all(
                    isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in numbers
                ):
                    fail(f"{name!r}: each 'against' calibration must hold a finite 'scale' and 'offset'")
        if spec.get("scorer") == "similarity":
            calibration = spec.get("calibration")
            if not spec.get("folder") or not isinstance(calibration, dict):
                fail(f"{name!r}: a 'similarity' scorer needs the 'folder' of its sentence encoder and a 'calibration'")
            numbers = [calibration.get("scale"), calibration.get("offset")]
            if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in numbers):
                fail(f"{name!r}: 'calibration' must hold a finite 'scale' and 'offset'")
        discourse = spec.get("discourse")
        if (
            isinstance(discourse, dict)
            and isinstance(discourse.get("folder"), str)
            and not _plain_name(discourse["folder"])
        ):
            fail(
                f"{name!r}: 'discourse.folder' must name a sub-folder of the model folder (a plain name), "
                f"got {discourse['folder']!r}"
            )
        if discourse is not None and (
            not isinstance(discourse, dict)
            or not isinstance(discourse.get("folder"), str)
            or not _finite(discourse.get("repeat_from", 0.6), 0.0, 0.999)
            or not _finite(discourse.get("head_power", 1.0), 0.0, 10.0)
            or not _finite(discourse.get("order_floor", 0.0), 0.0, 1.0)
            or not _finite(discourse.get("topic_from", 0.0), -1.0, 1.0)
            or not _finite(discourse.get("topic_to", 0.0), -1.0, 1.0)
        ):
            fail(
                f"{name!r}: 'discourse' needs the 'folder' of a sentence encoder, 'repeat_from' in [0, 1), "
                "'order_floor' in [0, 1], 'topic_from' and 'topic_to' in [-1, 1] and 'head_power' in [0, 10]"
            )
        form = spec.get("form")
        if form is not None and (
            not isinstance(form, dict)
            or not _finite(form.get("penalty", 0.5), 0.0, 1.0)
            or not _finite(form.get("head_power", 1.0), 0.0, 10.0)
        ):
            fail(f"{name!r}: 'form' must be an object with a 'penalty' in [0, 1] and a 'head_power' in [0, 10]")
        slots = spec.get("slots")
        if slots is not None and (not isinstance(slots, dict) or not _finite(slots.get("cap", 0.2), 0.0, 1.0)):
            fail(f"{name!r}: 'slots' must be an object with a 'cap' in [0, 1]")
        if spec.get("source_units", "windows") not in SOURCE_UNITS:
            fail(f"{name!r}: 'source_units' must be one of {SOURCE_UNITS}")
        top = spec.get("top_units", 6)
        if isinstance(top, bool) or not isinstance(top, int) or top < 1:
            fail(f"{name!r}: 'top_units' must be a positive integer")
        cascade = spec.get("cascade")
        if cascade is not None:
            what = (
                "'cascade' must be an object with 'first' (a positive integer: aligned units read first) and "
                "'stop' in [0, 1] (optionally 'whole' in [0, 1], the bar below which the whole source is read; "
                "'units', a positive integer: the aligned units read at most; 'decided_by_checks', true or false; "
                "'whole_words' in [0, 1]: the share of a claim's words a source window must hold to be read), "
                "on a dimension whose 'source_units' are 'sentences' or 'both'"
            )
            if not isinstance(cascade, dict):
                fail(f"{name!r}: {what}, got {cascade!r}")
            first = cascade.get("first")
            if isinstance(first, bool) or not isinstance(first, int) or first < 1:
                fail(f"{name!r}: 'cascade.first' must be a positive integer, got {first!r}; {what}")
            if not _finite(cascade.get("stop"), 0.0, 1.0):
                fail(f"{name!r}: 'cascade.stop' must be a finite number in [0, 1], got {cascade.get('stop')!r}; {what}")
            if "whole" in cascade and not _finite(cascade["whole"], 0.0, 1.0):
                fail(f"{name!r}: 'cascade.whole' must be a finite number in [0, 1], got {cascade['whole']!r}; {what}")
            units = cascade.get("units", 1)
            if isinstance(units, bool) or not isinstance(units, int) or units < 1:
                fail(f"{name!r}: 'cascade.units' must be a positive integer, got {units!r}; {what}")
            if not isinstance(cascade.get("decided_by_checks", False), bool):
                fail(f"{name!r}: 'cascade.decided_by_checks' must be true or false; {what}")
            if "whole_words" in cascade and not _finite(cascade["whole_words"], 0.0, 1.0):
                fail(
                    f"{name!r}: 'cascade.whole_words' must be a finite number in [0, 1], got "
                    f"{cascade['whole_words']!r}; {what}"
                )
            unknown = sorted(set(cascade) - {"first", "stop", "whole", "units", "decided_by_checks", "whole_words"})
            if unknown:
                fail(f"{name!r}: 'cascade' has unknown keys {unknown}; {what}")
            if spec.get("source_units", "windows") == "windows":
                fail(f"{name!r}: {what}; this dimension's 'source_units' are 'windows'")
    for name, spec in refuses.items():
        if not isinstance(spec.get("reason"), str) or not spec["reason"].strip():
            fail(f"refused dimension {name!r} needs a 'reason' (why this model cannot judge it)")
