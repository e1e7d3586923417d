"""Export external fact checkers to claim-support model folders, read exactly as their authors read them.

Four checkpoints (the reading each gets is :mod:`nlgeval_runtime.claim_support`'s, written into the manifest):

- ``minicheck-roberta-large`` (lytang/MiniCheck-RoBERTa-Large) and ``minicheck-deberta-v3-large``
  (lytang/MiniCheck-DeBERTa-v3-Large): sequence classifiers reading ``chunk + eos_token + claim`` (one text, the
  tokenizer's own special tokens around it), support = softmax(logits)[1]; chunks of 400 tokens; the model reads
  512 (RoBERTa) or 2048 (DeBERTa) tokens.
- ``minicheck-flan-t5-large`` (lytang/MiniCheck-Flan-T5-Large): ``predict: chunk</s>claim``, one decoder step from
  the start token, support = the softmax over the logits of tokens 3 (unsupported) and 209 (supported, the piece
  ``▁1``), index 1; chunks of 500 words; the model reads 2048 tokens.
- ``hhem-2.1-open`` (vectara/hallucination_evaluation_model): flan-t5-base's encoder with a token-classification
  head reading the checkpoint's prompt (``<pad> Determine if the hypothesis is true given the premise?...``);
  support = softmax of the first token's logits, index 1; the premise is read whole (no chunks, no truncation).

Facts taken from the authors' published code: Tang, Laban, Durrett, "MiniCheck: Efficient Fact-Checking of LLMs on
Grounding Documents", EMNLP 2024, github.com/Liyan06/MiniCheck (``minicheck/inference.py``, ``minicheck.py``); Vectara's
HHEM-2.1-Open model card and ``modeling_hhem_v2.py`` (huggingface.co/vectara/hallucination_evaluation_model). The
code here is this project's own.

Every export measures parity: the authors' reading computed in PyTorch on sample (document, claim) pairs, against
the folder's graphs through the runtime's checker, in ``export.parity`` of the manifest.

    >>> export_checker("ckpt/MiniCheck-Flan-T5-Large", "models/minicheck-ft5", int8=True)   # doctest: +SKIP
"""

from __future__ import annotations

import datetime as _dt
import json
import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from nlgeval_training.folder_writer import OPSET, convert_fp16, finalize_model_folder, quantize_int8

__all__ = ["CHECKERS", "Recipe", "detect_checker", "export_checker", "load_checker_model", "parity_pairs"]


@dataclass(frozen=True)
class Recipe:
    """How one checker is loaded and read: ``model`` (``classifier``, ``seq2seq`` or ``token-classifier``), its
    ``template``, its ``chunk`` (None: the whole document), ``max_length`` (None: no truncation) and the Hub id."""

    model: str
    template: str | None
    chunk: dict | None
    max_length: int | None
    hub_id: str
    paper: str
    #: the longest input read at all (HHEM reads its premise whole: past this the checker refuses, naming it)
    max_tokens: int | None = None


_MINICHECK = "Tang, Laban, Durrett, MiniCheck, EMNLP 2024; github.com/Liyan06/MiniCheck minicheck/inference.py"
_HHEM = "Vectara HHEM-2.1-Open; huggingface.co/vectara/hallucination_evaluation_model modeling_hhem_v2.py"
CHECKERS: dict[str, Recipe] = {
    "minicheck-roberta-large": Recipe(
        "classifier", None, {"size": 400, "count": "tokens"}, 512, "lytang/MiniCheck-RoBERTa-Large", _MINICHECK
    ),
    "minicheck-deberta-v3-large": Recipe(
        "classifier", None, {"size": 400, "count": "tokens"}, 2048, "lytang/MiniCheck-DeBERTa-v3-Large", _MINICHECK
    ),
    "minicheck-flan-t5-large": Recipe(
        "seq2seq",
        "predict: {document}</s>{claim}",
        {"size": 500, "count": "words"},
        2048,
        "lytang/MiniCheck-Flan-T5-Large",
        _MINICHECK,
    ),
    "hhem-2.1-open": Recipe(
        "token-classifier", None, None, None, "vectara/hallucination_evaluation_model", _HHEM, max_tokens=8192
    ),
}
#: MiniCheck-Flan-T5's label tokens in the Flan-T5 vocabulary: 3 (``▁``, unsupported) and 209 (``▁1``, supported)
FT5_LABELS = ((3, "\u2581"), (209, "\u2581" + "1"))
#: HHEM-2.1-Open's prompt (``HHEMv2Config.prompt``), used when the checkpoint's config.json does not carry it
HHEM_PROMPT = "<pad> Determine if the hypothesis is true given the premise?\n\nPremise: {text1}\n\nHypothesis: {text2}"
#: the relative-position table an HHEM graph is exported with (exact beyond it: T5's last bucket)
HHEM_TABLE = 2048


def detect_checker(checkpoint: str | Path, source_id: str | None = None) -> str | None:
    """The checker a checkpoint is, from its Hub id or folder name or (HHEM) its ``config.json``; None otherwise."""
    names = " ".join(str(x).lower() for x in (source_id, checkpoint) if x)
    for name, recipe in CHECKERS.items():
        if recipe.hub_id.lower() in names or recipe.hub_id.split("/")[1].lower() in names:
            return name
    config = Path(checkpoint) / "config.json"
    if config.is_file() and json.loads(config.read_text(encoding="utf-8")).get("model_type") in (
        "HHEMv2",
        "HHEMv2Config",
    ):
        return "hhem-2.1-open"
    return None


def parity_pairs() -> list[tuple[str, str]]:
    """(document, claim) pairs of mixed length, a multi-chunk document among them, for parity checks."""
    from nlgeval_training.folder_writer import _PARITY_SENTENCES

    long_doc = "\n".join(" ".join(_PARITY_SENTENCES[i:] + _PARITY_SENTENCES[:i]) for i in range(6))
    docs = [_PARITY_SENTENCES[0], " ".join(_PARITY_SENTENCES[:3]), long_doc, _PARITY_SENTENCES[3]]
    claims = [
        "Profits rose because of cloud demand.",
        "The bridge will stay closed for a year.",
        "Wheat prices fell for a third month.",
        "A new frog species was found in Peru.",
    ]
    return [(d, c) for d in docs for c in claims[:2]] + [(long_doc, claims[2]), (docs[3], claims[3])]


#: the foundation HHEM-2.1-Open's ``HHEMv2Config`` names (a class attribute of ``configuration_hhem_v2.py``)
HHEM_FOUNDATION = "google/flan-t5-base"
_HHEM_CONFIG_CODE = "configuration_hhem_v2.py"


def hhem_config_attribute(checkpoint: str | Path, name: str) -> str | None:
    """The string an HHEM checkpoint's configuration gives ``name`` (``foundation``, ``prompt``): a key of its
    ``config.json`` where one is there, else the class attribute of the ``PretrainedConfig`` subclass in its
    ``configuration_hhem_v2.py``, which is where the published checkpoint keeps both. The file is read as a
    syntax tree, never run. None when neither gives a string."""
    import ast

    checkpoint = Path(checkpoint)
    config = checkpoint / "config.json"
    if config.is_file():
        value = json.loads(config.read_text(encoding="utf-8")).get(name)
        if isinstance(value, str) and value:
            return value
    code = checkpoint / _HHEM_CONFIG_CODE
    if not code.is_file():
        return None
    try:
        tree = ast.parse(code.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for statement in node.body:
            targets = statement.targets if isinstance(statement, ast.Assign) else []
            if isinstance(statement, ast.AnnAssign):
                targets = [statement.target]
            value = getattr(statement, "value", None)
            if (
                any(isinstance(t, ast.Name) and t.id == name for t in targets)
                and isinstance(value, ast.Constant)
                and isinstance(value.value, str)
                and value.value
            ):
                return value.value
    return None


def hhem_foundation(checkpoint: str | Path) -> str:
    """The foundation (a Hub id or a folder) an HHEM checkpoint reads with: its configuration's
    (:func:`hhem_config_attribute`), else :data:`HHEM_FOUNDATION`."""
    return hhem_config_attribute(checkpoint, "foundation") or HHEM_FOUNDATION


def load_checker_model(checkpoint: str | Path, checker: str, foundation: str | Path | None = None) -> tuple[Any, Any]:
    """``(model, tokenizer)`` of a checker checkpoint in eval mode, fp32 (HHEM: its flan-t5 ``foundation``'s
    configuration and tokenizer, by default the one its ``config.json`` names)."""
    import torch
    from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer, T5ForConditionalGeneration

    recipe = CHECKERS[checker]
    checkpoint = Path(checkpoint)
    if recipe.model == "token-classifier":
        from transformers import T5ForTokenClassification

        named = hhem_foundation(checkpoint)
        base = Path(foundation or named)
        if not (base / "config.json").is_file():
            raise FileNotFoundError(
                f"{checkpoint}: HHEM reads with its foundation model's configuration and tokenizer "
                f"({named!r}); pass its local folder (nlgeval export --foundation PATH)"
            )
        tokenizer = AutoTokenizer.from_pretrained(str(base), use_fast=True)
        config = AutoConfig.from_pretrained(str(base))
        config.num_labels = 2
        config.prompt = hhem_config_attribute(checkpoint, "prompt") or HHEM_PROMPT  # the prompt HHEMv2Config carries
        classifier: Any = T5ForTokenClassification(config)
        state = _load_state(checkpoint)
        state = {k[len("t5.") :]: v for k, v in state.items() if k.startswith("t5.")}
        missing, unexpected = classifier.load_state_dict(state, strict=False)
        tied = {"transformer.encoder.embed_tokens.weight", "transformer.shared.weight"}
        if unexpected or set(missing) - tied:
            raise ValueError(
                f"{checkpoint}: not an HHEM checkpoint (missing {missing[:3]}, unexpected {unexpected[:3]})"
            )
        classifier.tie_weights()  # the encoder's embedding is the shared one, stored once
        return classifier.float().eval(), tokenizer
    tokenizer = AutoTokenizer.from_pretrained(str(checkpoint), use_fast=True)
    model: Any
    if recipe.model == "seq2seq":
        model = T5ForConditionalGeneration.from_pretrained(str(checkpoint), dtype=torch.float32)
    else:
        model = AutoModelForSequenceClassification.from_pretrained(str(checkpoint), dtype=torch.float32, num_labels=2)
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(f"{checkpoint}: a fast (tokenizers) tokenizer is needed to write tokenizer.json")
    return model.eval(), tokenizer


def _load_state(checkpoint: Path) -> dict:
    import torch

    if (checkpoint / "model.safetensors").is_file():
        from safetensors.torch import load_file

        return load_file(str(checkpoint / "model.safetensors"))
    return torch.load(str(checkpoint / "pytorch_model.bin"), map_location="cpu", weights_only=True)


def reading_of(checker: str, model: Any, tokenizer: Any) -> dict[str, Any]:
    """The manifest's ``reading`` of a checker: its template, chunks, lengths and label tokens."""
    recipe = CHECKERS[checker]
    eos = tokenizer.eos_token or tokenizer.sep_token
    template = recipe.template or "{document}" + eos + "{claim}"
    if recipe.model == "token-classifier":
        prompt = str(getattr(model.config, "prompt", None) or HHEM_PROMPT)
        template = prompt.replace("{text1}", "{document}").replace("{text2}", "{claim}")
    reading: dict[str, Any] = {
        "checker": checker,
        "template": template,
        "eos_token": eos,
        "chunk": recipe.chunk,
        "max_length": recipe.max_length,
        "max_tokens": recipe.max_tokens,
        "supported_from": 0.5,
        "source": recipe.paper,
    }
    if recipe.model == "seq2seq":
        reading["label_token_ids"] = list(ft5_labels(tokenizer))
    return reading


def ft5_labels(tokenizer: Any) -> tuple[int, int]:
    """``(unsupported, supported)`` token ids: 3 and 209 in Flan-T5's vocabulary, the pieces ``▁`` and ``▁1``."""
    ids = tuple(int(tokenizer.convert_tokens_to_ids(piece)) for _, piece in FT5_LABELS)
    if tokenizer.unk_token_id in ids:
        raise ValueError("the tokenizer has no '▁' or '▁1' piece: not a Flan-T5 tokenizer (MiniCheck-Flan-T5's labels)")
    if len(tokenizer) >= 32000 and ids != tuple(i for i, _ in FT5_LABELS):
        raise ValueError(f"the Flan-T5 label pieces map to {ids}, not MiniCheck's 3 and 209")
    return ids[0], ids[1]


class _ClassifierGraph:
    """``(input_ids, attention_mask) -> softmax(logits)[:, 1]`` of a sequence classifier (MiniCheck's encoders)."""

    @staticmethod
    def build(model: Any) -> Any:
        import torch

        class Graph(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.model = model

            def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
                logits = self.model(input_ids=input_ids, attention_mask=attention_mask).logits
                return torch.softmax(logits.float(), dim=-1)[:, 1]

        return Graph().eval()


def _token_classifier_graph(model: Any, max_length: int) -> Any:
    """HHEM: the T5 encoder (fused attention, :mod:`nlgeval_training.t5_graph`), the classifier on the first token,
    softmax index 1."""
    import torch

    from nlgeval_training.t5_graph import _Encoder

    class Graph(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = _Encoder(model.transformer, max_length=max_length, fused_attention=True)
            self.classifier = model.classifier

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            first = self.encoder(input_ids, attention_mask)[:, 0, :]
            return torch.softmax(self.classifier(first).float(), dim=-1)[:, 1]

    return Graph().eval()


def export_checker(
    checkpoint: str | Path,
    out_dir: str | Path,
    *,
    checker: str | None = None,
    int8: bool = False,
    fp16: bool = False,
    keep_fp32: bool = True,
    source_id: str | None = None,
    revision: str | None = None,
    foundation: str | Path | None = None,
    opset: int = OPSET,
    pairs: Sequence[tuple[str, str]] | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Write the claim-support folder of a fact checker checkpoint into ``out_dir``; returns its manifest.

    ``checker``: one of :data:`CHECKERS` (default: detected from ``source_id``, the folder name, or an HHEM
    ``config.json``). ``int8``: also a dynamic int8 graph (CPU; scored one input at a time, since its activation
    scales depend on the batch); ``fp16``: a mixed-precision graph for CUDA; ``keep_fp32=False`` ships only those
    (the fp32 parity is still measured). ``foundation``: HHEM's flan-t5-base folder (its configuration and
    tokenizer). ``pairs``: the (document, claim) pairs parity is measured on (default :func:`parity_pairs`).
    """
    import torch
    import transformers

    checker = checker or detect_checker(checkpoint, source_id)
    if checker not in CHECKERS:
        raise ValueError(
            f"{checkpoint}: not a known fact checker ({checker!r}); name one with --checker ({', '.join(CHECKERS)})"
        )
    if not keep_fp32 and not (int8 or fp16):
        raise ValueError("keep_fp32=False needs int8=True or fp16=True, otherwise the folder would have no graph")
    say = progress or (lambda _msg: None)
    recipe = CHECKERS[checker]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    say(f"loading {checkpoint} as {checker}")
    model, tokenizer = load_checker_model(checkpoint, checker, foundation)
    reading = reading_of(checker, model, tokenizer)
    backend = tokenizer.backend_tokenizer
    backend.no_truncation()
    backend.no_padding()
    backend.save(str(out / "tokenizer.json"))
    pad_id = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0)
    if recipe.model == "seq2seq":
        from nlgeval_training.t5_graph import CONTRIB_OPSET, T5ScoringGraph

        no_id, yes_id = reading["label_token_ids"]
        graph = T5ScoringGraph(model, yes_id=yes_id, no_id=no_id, max_length=int(recipe.max_length or 2048)).eval()
        custom: dict | None = CONTRIB_OPSET
    elif recipe.model == "token-classifier":
        from nlgeval_training.t5_graph import CONTRIB_OPSET

        graph, custom = _token_classifier_graph(model, HHEM_TABLE), CONTRIB_OPSET
    else:
        graph, custom = _ClassifierGraph.build(model), None
    sample = tokenizer(
        [
            reading["template"].format(document="A short one.", claim="Short."),
            reading["template"].format(
                document=" ".join(p[0] for p in parity_pairs()[:3]), claim="A longer claim about the document."
            ),
        ],
        padding=True,
        return_tensors="pt",
    )
    assert int(sample["attention_mask"].min()) == 0, "the tracing sample must contain padding"
    raw = out / ".raw"
    raw.mkdir(exist_ok=True)
    say("exporting the ONNX graph")
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer warnings on Python branches; parity is the real check
        torch.onnx.export(
            graph,
            (sample["input_ids"], sample["attention_mask"]),
            str(raw / "model.onnx"),
            input_names=["input_ids", "attention_mask"],
            output_names=["p_supported"],
            dynamic_axes={
                "input_ids": {0: "batch", 1: "sequence"},
                "attention_mask": {0: "batch", 1: "sequence"},
                "p_supported": {0: "batch"},
            },
            opset_version=opset,
            dynamo=False,
            do_constant_folding=True,
            custom_opsets=custom,
        )
    from nlgeval_training.folder_writer import gather_onnx

    external = {"model.onnx": gather_onnx(raw / "model.onnx", out / "model.onnx")}
    shutil.rmtree(raw, ignore_errors=True)
    variants = {"fp32": "model.onnx"}
    if int8:
        say("quantising to int8 (dynamic)")
        external["model.int8.onnx"] = quantize_int8(
            out / "model.onnx", out / "model.int8.onnx", op_types=("MatMul", "Gemm", "Gather")
        )
        variants["int8"] = "model.int8.onnx"
    if fp16:
        say("converting to mixed-precision fp16")
        external["model.fp16.onnx"] = convert_fp16(out / "model.onnx", out / "model.fp16.onnx")
        variants["fp16"] = "model.fp16.onnx"
    from nlgeval_training import __version__

    manifest: dict[str, Any] = {
        "kind": "claim-support",
        "architecture": str(getattr(model.config, "model_type", recipe.model)),
        "input": {"pad_token_id": pad_id},
        "reading": reading,
        "variants": variants,
        "quantization": {"int8": "dynamic"} if int8 else {},
        "external_data": {k: v for k, v in external.items() if v},
        "source": {"checkpoint": source_id or str(checkpoint), "revision": revision, "checker": checker},
        "parameters": int(sum(p.numel() for p in model.parameters())),
        "export": {
            "exporter": f"nlgeval_training {__version__}",
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "opset": opset,
            "date": _dt.date.today().isoformat(),
        },
    }
    finalize_model_folder(out, manifest)
    say("measuring parity with the authors' reading in PyTorch")
    pairs = list(pairs) if pairs is not None else parity_pairs()
    reference = reference_support(checker, model, tokenizer, reading, pairs)
    manifest["export"]["parity"] = measure_checker_parity(out, pairs, reference, variants)
    if not keep_fp32:
        for name in ["model.onnx", *external.pop("model.onnx", [])]:
            (out / name).unlink()
        variants.pop("fp32")
        manifest["export"]["parity"]["fp32"]["shipped"] = False
        manifest["external_data"] = {k: v for k, v in external.items() if v}
    return finalize_model_folder(out, manifest)


def reference_support(
    checker: str, model: Any, tokenizer: Any, reading: dict, pairs: Sequence[tuple[str, str]], batch_size: int = 8
) -> np.ndarray:
    """The authors' reading in PyTorch: the document's chunks (sentences counted with the Hugging Face tokenizer, or
    words), each read with the claim through the full model, softmax, the max over chunks."""
    import torch

    from nlgeval_runtime.claim_support import chunk_document

    recipe = CHECKERS[checker]
    limit = recipe.max_length

    def count(sentence: str) -> int:
        if reading["chunk"]["count"] == "words":
            return len(sentence.split())
        ids = tokenizer(sentence, padding=False, add_special_tokens=False, max_length=limit, truncation=True)
        return len(ids["input_ids"])

    out = []
    for document, claim in pairs:
        chunks = chunk_document(document, reading["chunk"]["size"], count) if reading["chunk"] else [document]
        texts = [reading["template"].format(document=c, claim=claim) for c in chunks]
        probs = []
        with torch.no_grad():
            for start in range(0, len(texts), batch_size):
                enc = tokenizer(
                    texts[start : start + batch_size],
                    padding=True,
                    truncation=limit is not None,
                    max_length=limit,
                    return_tensors="pt",
                )
                if recipe.model == "seq2seq":
                    start_ids = torch.zeros((enc["input_ids"].shape[0], 1), dtype=torch.long)
                    logits = model(
                        input_ids=enc["input_ids"], attention_mask=enc["attention_mask"], decoder_input_ids=start_ids
                    ).logits[:, 0, :]
                    logits = logits[:, list(reading["label_token_ids"])]
                elif recipe.model == "token-classifier":
                    logits = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).logits[:, 0, :]
                else:
                    logits = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).logits
                probs.append(torch.softmax(logits.double(), dim=-1)[:, 1])
        out.append(float(torch.cat(probs).max()))
    return np.asarray(out, dtype=np.float64)


def measure_checker_parity(
    folder: str | Path, pairs: Sequence[tuple[str, str]], reference: np.ndarray, variants: dict[str, str]
) -> dict[str, Any]:
    """Each CPU variant's supports of ``pairs`` through the runtime's checker, against ``reference``."""
    from nlgeval_runtime.claim_support import load_claim_checker

    figures: dict[str, Any] = {}
    for precision in variants:
        if precision == "fp16":
            figures[precision] = {"max_abs_diff": None, "n": 0, "note": "not measured: fp16 runs on CUDA"}
            continue
        checker = load_claim_checker(folder, device="cpu", precision=precision, verify=False)
        got = np.array([s.score for s in checker.support([d for d, _ in pairs], [c for _, c in pairs])])
        diff = np.abs(got - reference)
        figures[precision] = {
            "max_abs_diff": float(diff.max()),
            "mean_abs_diff": float(diff.mean()),
            "n": len(pairs),
            "provider": checker.provider,
        }
    return figures
