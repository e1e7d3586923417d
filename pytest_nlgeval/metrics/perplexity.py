"""Perplexity under a causal language model run by the runtime (ONNX Runtime, no torch).

PPL(y) = exp(-(1/T) * sum_t log p(y_t | BOS, [x,] y_<t)), the exponential of the mean negative
log-likelihood of the output's tokens (Jelinek et al., 1977). The per-token log-probabilities come from
:class:`nlgeval_runtime.causal_lm.CausalLMScorer`: the text is stripped and tokenised without special
tokens, one BOS is prepended, and with ``condition_on_input=True`` the input is the prompt, so only the
output's tokens are scored (conditional perplexity). Outputs longer than the model's context are cut.

Example::

    >>> from pytest_nlgeval.metrics import get_metric
    >>> ppl = get_metric("perplexity", model="models/gpt2-onnx")     # doctest: +SKIP
    >>> ppl.score("The cat sat on the mat.")                          # doctest: +SKIP
    48.2
"""

from __future__ import annotations

import math

from pytest_nlgeval.metrics.base import Metric, MetricInputError, MetricUnavailableError


class Perplexity(Metric):
    """Perplexity of the output (lower is more predictable).

    ``model`` is a causal-LM model folder (``kind: causal-lm``), a Hugging Face id the runtime can resolve,
    or ``None`` for the runtime's default LM. ``condition_on_input`` scores the output as a continuation of
    ``input`` (and then needs ``input``). ``device`` is ``"auto"``, ``"cpu"`` or ``"cuda"``; ``precision``
    ``"auto"``, ``"fp32"``... ``max_tokens`` scores only the first ``max_tokens`` tokens of each output.
    ``scorer`` is an existing :class:`~nlgeval_runtime.causal_lm.CausalLMScorer` to share (its model
    settings win).
    """

    name = "perplexity"
    higher_is_better = False

    def __init__(
        self,
        model: str | None = None,
        condition_on_input: bool = False,
        device: str = "auto",
        precision: str = "auto",
        max_tokens: int | None = None,
        scorer=None,
    ):
        self.model = model
        self.condition_on_input = bool(condition_on_input)
        self.needs_input = self.condition_on_input
        self.device = device
        self.precision = precision
        self.max_tokens = max_tokens
        self._scorer = scorer

    @property
    def scorer(self):
        """The runtime's causal-LM scorer, loaded on first use."""
        if self._scorer is None:
            try:
                from nlgeval_runtime.causal_lm import load_causal_lm
            except ImportError as exc:
                raise MetricUnavailableError(
                    "metric 'perplexity' needs nlgeval-runtime with its causal-LM scorer (nlgeval_runtime.causal_lm)"
                ) from exc
            from nlgeval_runtime.errors import NLGEvalRuntimeError

            try:
                self._scorer = load_causal_lm(self.model, device=self.device, precision=self.precision)
            except NLGEvalRuntimeError as exc:
                raise MetricUnavailableError(
                    f"metric 'perplexity': no usable causal LM ({exc}); pass model=FOLDER with a causal-LM folder "
                    "(get_metric('perplexity', model=...))"
                ) from exc
        return self._scorer

    def _score_many(self, outputs, inputs, references):
        for i, o in enumerate(outputs):
            if not o.strip():
                raise MetricInputError(
                    f"metric 'perplexity': output {i} is empty; perplexity of no tokens is undefined"
                )
        prompts = [inp or "" for inp in inputs] if self.condition_on_input else None
        res = self.scorer.score(outputs, prompts=prompts, max_tokens=self.max_tokens)
        return [math.exp(-float(lp.mean())) for lp in res.logprobs]

    def _score(self, output, input, references):
        return self._score_many([output], [input], [references])[0]

    def _feedback(self, output, input, references, value):
        res = self.scorer.score(
            [output], prompts=[input or ""] if self.condition_on_input else None, max_tokens=self.max_tokens
        )
        lp = res.logprobs[0]
        worst = int(lp.argmin())
        token = self.scorer.tokenizer.decode([int(res.token_ids[0][worst])])
        return (
            f"perplexity {value:.1f} over {lp.size} tokens; least expected token {token!r} (log p = {lp[worst]:.2f})."
        )

    def _options(self):
        return {
            "model": self.model or "default",
            "cond": self.condition_on_input,
            "max_tokens": self.max_tokens or "all",
        }

    def _versions(self):
        return {"lm": self.scorer.model_id, "provider": self.scorer.provider}
