"""The PyTorch half of a T5 export, run in a child process so that its memory is gone before ONNX work starts.

:func:`~nlgeval_training.export.export_t5` needs PyTorch for three things only: the tokenizer facts (the
``Yes``/``No`` ids), the graph written by ``torch.onnx.export``, and the reference scores that parity is
measured against. For t5-v1_1-large (UniEval's released size) the model alone is 3.1 GB and the exporter holds
further copies of the weights while it writes the graph; a process returns little of that memory to the
system when it frees it. This module does those three things in a child process
(``python -m nlgeval_training.t5_trace REQUEST``) that exits before the parent gathers the graph's weights,
quantises and measures parity, so those steps start from a process that never held the PyTorch model.

The child reports progress on its stdout (one ``progress:`` line per step) and writes its result, or the
error a user has to see (a wrong checkpoint), as JSON next to the raw graph.

    >>> facts = trace_in_child("ckpt/unieval-sum", "out/.raw", graph="fused", max_length=1024, opset=17,
    ...                        parity_inputs=texts)                                  # doctest: +SKIP
    >>> facts["reference"]   # UniEval's PyTorch scores of ``texts``                 # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections import deque
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

REQUEST = "trace_request.json"
RESULT = "trace_result.json"
RAW_GRAPH = "model.onnx"
_PROGRESS = "progress: "
# Errors of the child that are the user's to fix (a checkpoint without a fast tokenizer, Yes == No): they
# cross the process boundary as the same exception type with the same message.
_USER_ERRORS = {"ValueError": ValueError, "FileNotFoundError": FileNotFoundError, "OSError": OSError}


class ExportProcessError(RuntimeError):
    """The child process that runs PyTorch for an export ended without a result (crash, or killed)."""


def trace_t5(
    checkpoint: str | Path,
    raw_dir: str | Path,
    *,
    graph: str,
    max_length: int,
    opset: int,
    parity_inputs: Sequence[str],
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Load ``checkpoint``, write its scoring graph to ``raw_dir/model.onnx`` (weights beside it when the
    graph passes 2 GB) and ``raw_dir/tokenizer.json``, and score ``parity_inputs`` with UniEval's PyTorch path.

    Returns the facts the folder's manifest needs and the reference scores (plain JSON types).
    """
    import warnings

    import torch
    import transformers
    from transformers import AutoTokenizer, T5ForConditionalGeneration

    from nlgeval_training.folder_writer import parity_texts

    say = progress or (lambda _msg: None)
    raw = Path(raw_dir)
    raw.mkdir(parents=True, exist_ok=True)
    say(f"loading {checkpoint}")
    tokenizer = AutoTokenizer.from_pretrained(str(checkpoint), use_fast=True)
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(f"{checkpoint}: a fast (tokenizers) tokenizer is needed to write tokenizer.json")
    # Eager attention traces into plain ONNX ops; the trace is then exact for any padding pattern.
    model = T5ForConditionalGeneration.from_pretrained(
        str(checkpoint), dtype=torch.float32, attn_implementation="eager"
    ).eval()
    yes_id, no_id = _first_piece(tokenizer, "Yes"), _first_piece(tokenizer, "No")
    if yes_id == no_id:
        raise ValueError(f"{checkpoint}: 'Yes' and 'No' map to the same token id {yes_id}")
    eos = tokenizer.eos_token or "</s>"

    say("measuring the PyTorch reference scores")
    reference = t5_reference_scores(
        model, tokenizer, list(parity_inputs), max_length=max_length, yes_id=yes_id, no_id=no_id
    )
    if graph == "traced":
        module, custom_opsets = _t5_scoring_module(model, yes_id, no_id), None
    else:
        from nlgeval_training.t5_graph import CONTRIB_OPSET, T5ScoringGraph

        module = T5ScoringGraph(
            model, yes_id=yes_id, no_id=no_id, max_length=max_length, fused_attention=graph == "fused"
        ).eval()
        custom_opsets = CONTRIB_OPSET if graph == "fused" else None
    # A short and a long input, cut to the model's length as the runtime cuts them.
    sample = tokenizer(
        [f"question: Is this a fluent paragraph? {eos} paragraph: Yes.", parity_texts(2)[1]],
        padding=True,
        truncation=True,
        max_length=max_length,
        return_tensors="pt",
    )
    # Tracing with a padded batch keeps the attention-mask path in the graph (an unpadded trace could
    # specialise it away).
    assert int(sample.attention_mask.min()) == 0, "the tracing sample must contain padding"
    say("exporting the ONNX graph")
    with torch.no_grad(), warnings.catch_warnings():
        # The tracer warns about Python-level branches; they are constant for a one-step decoder and a
        # padded tracing batch (checked above), and parity is the real check.
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module,
            (sample.input_ids, sample.attention_mask),
            str(raw / RAW_GRAPH),
            input_names=["input_ids", "attention_mask"],
            output_names=["p_yes"],
            dynamic_axes={
                "input_ids": {0: "batch", 1: "sequence"},
                "attention_mask": {0: "batch", 1: "sequence"},
                "p_yes": {0: "batch"},
            },
            opset_version=opset,
            dynamo=False,
            do_constant_folding=True,
            custom_opsets=custom_opsets,
        )
    tokenizer.backend_tokenizer.save(str(raw / "tokenizer.json"))
    return {
        "yes_token_id": yes_id,
        "no_token_id": no_id,
        "separator_token": eos,
        "pad_token_id": int(model.config.pad_token_id),
        "reference": [float(x) for x in reference],
        "torch": torch.__version__,
        "transformers": transformers.__version__,
    }


def _t5_scoring_module(model: Any, yes_id: int, no_id: int) -> Any:
    import torch

    config = model.config
    scale = getattr(config, "scale_decoder_outputs", getattr(config, "tie_word_embeddings", False))
    head = model.lm_head.weight.detach()[[yes_id, no_id]].clone()  # (2, d_model)

    class T5BoolQA(torch.nn.Module):
        head: torch.Tensor  # a registered buffer

        def __init__(self) -> None:
            super().__init__()
            self.encoder = model.get_encoder()
            self.decoder = model.get_decoder()
            self.register_buffer("head", head)
            self.start = int(config.decoder_start_token_id)
            self.scale = float(config.d_model) ** -0.5 if scale else 1.0

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            start = torch.full((input_ids.shape[0], 1), self.start, dtype=input_ids.dtype, device=input_ids.device)
            out = self.decoder(
                input_ids=start, encoder_hidden_states=hidden, encoder_attention_mask=attention_mask, use_cache=False
            ).last_hidden_state[:, 0, :]
            logits = (out * self.scale) @ self.head.t()  # (batch, 2): Yes, No
            return torch.sigmoid(logits[:, 0] - logits[:, 1])

    return T5BoolQA().eval()


def t5_reference_scores(
    model: Any, tokenizer: Any, texts: Sequence[str], *, max_length: int, yes_id: int, no_id: int, batch_size: int = 8
) -> np.ndarray:
    """UniEval's own computation in PyTorch: full forward, softmax over the vocabulary, batch 8, fp32."""
    import torch

    scores = []
    with torch.no_grad():
        for i in range(0, len(texts), batch_size):
            enc = tokenizer(
                list(texts[i : i + batch_size]),
                max_length=max_length,
                truncation=True,
                padding=True,
                return_tensors="pt",
            )
            start = torch.full((enc.input_ids.shape[0], 1), model.config.decoder_start_token_id, dtype=torch.long)
            logits = model(input_ids=enc.input_ids, attention_mask=enc.attention_mask, decoder_input_ids=start).logits[
                :, 0, :
            ]
            probs = torch.softmax(logits.double(), dim=-1)
            scores.append((probs[:, yes_id] / (probs[:, yes_id] + probs[:, no_id])).numpy())
    return np.concatenate(scores) if scores else np.zeros(0)


def _first_piece(tokenizer: Any, word: str) -> int:
    ids = tokenizer(word).input_ids
    return int(ids[0])


def trace_in_child(
    checkpoint: str | Path,
    raw_dir: str | Path,
    *,
    graph: str,
    max_length: int,
    opset: int,
    parity_inputs: Sequence[str],
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """:func:`trace_t5` in a child process (same interpreter, same ``sys.path``); returns its result.

    A user error in the child (e.g. ``ValueError``) is raised here with its message; a crash or a kill (the
    out-of-memory killer) raises :class:`ExportProcessError` with the child's last output.
    """
    say = progress or (lambda _msg: None)
    raw = Path(raw_dir)
    raw.mkdir(parents=True, exist_ok=True)
    (raw / RESULT).unlink(missing_ok=True)
    request = {
        "checkpoint": str(checkpoint),
        "raw_dir": str(raw),
        "graph": graph,
        "max_length": int(max_length),
        "opset": int(opset),
        "parity_inputs": list(parity_inputs),
    }
    (raw / REQUEST).write_text(json.dumps(request), encoding="utf-8")
    env = dict(os.environ)
    # The child imports exactly the modules this process imports (a source checkout on sys.path included).
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    child: Any = subprocess.Popen(
        [sys.executable, "-m", "nlgeval_training.t5_trace", str(raw / REQUEST)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
        encoding="utf-8",
        errors="replace",
    )
    tail: deque[str] = deque(maxlen=40)
    drain = threading.Thread(target=lambda: tail.extend(line.rstrip() for line in child.stderr), daemon=True)
    drain.start()
    for line in child.stdout:
        if line.startswith(_PROGRESS):
            say(line[len(_PROGRESS) :].rstrip())
    code = child.wait()
    drain.join(timeout=10)
    result_path = raw / RESULT
    result = json.loads(result_path.read_text(encoding="utf-8")) if result_path.is_file() else None
    if code == 0 and result and "error" not in result:
        return result
    if result and "error" in result:
        raise _USER_ERRORS.get(result["error"], ValueError)(result["message"])
    last = "\n".join(list(tail)[-15:]) or "(no output)"
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
        hint = (
            " (SIGKILL: most likely the out-of-memory killer; its PyTorch half peaks at about 4.5 GB for t5-v1_1-large)"
            if -code == signal.SIGKILL
            else ""
        )
        raise ExportProcessError(
            f"the PyTorch export of {checkpoint} was killed by signal {name}{hint}; its last output:\n{last}"
        )
    raise ExportProcessError(
        f"the PyTorch export of {checkpoint} failed in its child process (exit status {code}); its last output:\n{last}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Child entry: ``python -m nlgeval_training.t5_trace REQUEST_JSON``."""
    args = list(sys.argv[1:] if argv is None else argv)
    request = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    raw = Path(request.pop("raw_dir"))

    def say(message: str) -> None:
        print(_PROGRESS + message, flush=True)

    try:
        result = trace_t5(request.pop("checkpoint"), raw, progress=say, **request)
    except tuple(_USER_ERRORS.values()) as exc:
        (raw / RESULT).write_text(json.dumps({"error": type(exc).__name__, "message": str(exc)}), encoding="utf-8")
        return 3
    (raw / RESULT).write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
