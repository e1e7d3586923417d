"""The T5 scoring computation written out for export: one encoder pass, one decoder step, ``p_yes``.

Tracing Hugging Face's forward gives a correct graph that does work a Boolean-QA score never needs.
This module computes the same function (UniEval's public code, maszhongming/UniEval) with the same weights, shaped for
ONNX Runtime. Each change below leaves the score equal up to float rounding (parity is measured on every export):

- **Relative position bias, once per forward.** T5's bias depends on the distance between two positions
  only, and the runtime never feeds more than ``max_length`` tokens, so the bias of every distance
  ``-(max_length - 1) .. max_length - 1`` is a small table computed at export. A forward gathers one
  ``(1, heads, L, L)`` bias from it; every encoder layer shares it.
- **Fused encoder attention.** With ``fused_attention=True`` each encoder self-attention is ONNX Runtime's
  ``com.microsoft.MultiHeadAttention``, the position bias passed as its ``attention_bias``, padding as its
  ``key_padding_mask`` and ``scale=1`` (T5 does not scale ``QK^T``).
- **Decoder self-attention of the start token.** The decoder sees one token, so each self-attention is a
  softmax over one position, which is exactly 1: the sublayer is ``o(v(norm(h)))``. In the first layer
  ``h`` is the start token's embedding, a constant, so that sublayer is computed at export.
- **Cross-attention of one query.** ``q K^T = q (E W_k)^T = (q W_k) E^T`` per head, and
  ``p (E W_v) = (p E) W_v``: folding the key and value projections into the single query costs
  ``heads x d_model`` per encoder position instead of the ``2 x d_model^2`` of projecting every encoder
  state (about a seventh of the whole model's work at 400 tokens, for t5-v1_1).

    >>> module = T5ScoringGraph(model, yes_id=..., no_id=..., max_length=1024)   # doctest: +SKIP
    >>> torch.onnx.export(module, (ids, mask), "model.onnx", custom_opsets={"com.microsoft": 1}, ...)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

import torch

# ONNX Runtime's contrib operators (MultiHeadAttention) live in this domain, version 1.
CONTRIB_OPSET = {"com.microsoft": 1}


class _FusedSelfAttention(torch.autograd.Function):
    """Multi-head attention with an additive bias and a key padding mask.

    Computed with plain torch operations while tracing; exported as one ``com.microsoft.MultiHeadAttention``.
    """

    @staticmethod
    def forward(
        ctx: Any,
        q: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        key_mask: torch.Tensor,
        bias: torch.Tensor,
        num_heads: int,
    ) -> torch.Tensor:
        return _attention(q, k, v, _mask_bias(key_mask, q.dtype)[:, None, None, :] + bias, num_heads)

    @staticmethod
    def symbolic(g: Any, q: Any, k: Any, v: Any, key_mask: Any, bias: Any, num_heads: int) -> Any:
        no_projection_bias = g.op("prim::Constant")
        no_projection_bias.setType(torch._C.OptionalType.ofTensor())
        out = g.op(
            "com.microsoft::MultiHeadAttention",
            q,
            k,
            v,
            no_projection_bias,
            key_mask,
            bias,
            num_heads_i=int(num_heads),
            scale_f=1.0,
        )
        out.setType(q.type())
        return out


def _mask_bias(mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """0 where the key is a token, the dtype's minimum where it is padding (Hugging Face's convention)."""
    return (1 - mask.to(dtype)) * torch.finfo(dtype).min


def _attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor, num_heads: int) -> torch.Tensor:
    """Unscaled multi-head attention over (batch, length, heads * d_kv) inputs; ``bias`` is added to the scores."""
    b, length, inner = q.shape
    d_kv = inner // num_heads

    def heads(x: torch.Tensor) -> torch.Tensor:
        return x.view(b, -1, num_heads, d_kv).transpose(1, 2)

    scores = torch.matmul(heads(q), heads(k).transpose(2, 3)) + bias
    probs = torch.softmax(scores.float(), dim=-1).type_as(scores)
    return torch.matmul(probs, heads(v)).transpose(1, 2).reshape(b, length, inner)


class _Encoder(torch.nn.Module):
    """The encoder stack; its own module so that exported node names start with ``/encoder/``."""

    # registered buffers and the model's blocks: attributes torch's Module types as Tensor | Module
    bias_table: torch.Tensor
    blocks: Any

    def __init__(self, model: Any, *, max_length: int, fused_attention: bool) -> None:
        super().__init__()
        from transformers.models.t5.modeling_t5 import T5Attention

        self.blocks = torch.nn.ModuleList(model.encoder.block)
        self.embed = model.encoder.embed_tokens
        self.norm = model.encoder.final_layer_norm
        self.num_heads = int(model.config.num_heads)
        self.fused = bool(fused_attention)
        self.max_length = int(max_length)
        with torch.no_grad():
            first = model.encoder.block[0].layer[0].SelfAttention
            distance = torch.arange(-(self.max_length - 1), self.max_length, dtype=torch.long)
            buckets = T5Attention._relative_position_bucket(
                distance,
                bidirectional=True,
                num_buckets=first.relative_attention_num_buckets,
                max_distance=first.relative_attention_max_distance,
            )
            self.register_buffer("bias_table", first.relative_attention_bias(buckets).detach().clone())

    def position_bias(self, length: int) -> torch.Tensor:
        """``(1, heads, length, length)``: the bias of key position j for query position i is table[j - i]."""
        positions = torch.arange(length, dtype=torch.long)
        distance = positions[None, :] - positions[:, None]
        # The runtime never feeds more than max_length tokens; a longer input (the graph used directly) gets
        # the table's farthest distance, which is exact when max_length >= relative_attention_max_distance.
        limit = self.max_length - 1
        index = torch.clamp(distance, -limit, limit) + limit
        return self.bias_table[index].permute(2, 0, 1).unsqueeze(0)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden = self.embed(input_ids)
        bias = self.position_bias(input_ids.shape[1])
        if self.fused:
            key_mask = attention_mask.to(torch.int32)
        else:
            bias = bias + _mask_bias(attention_mask, hidden.dtype)[:, None, None, :]
        for block in self.blocks:
            sublayer = block.layer[0]
            attention = sublayer.SelfAttention
            x = sublayer.layer_norm(hidden)
            q, k, v = attention.q(x), attention.k(x), attention.v(x)
            if self.fused:
                context = _FusedSelfAttention.apply(q, k, v, key_mask, bias, self.num_heads)
            else:
                context = _attention(q, k, v, bias, self.num_heads)
            hidden = hidden + attention.o(context)
            hidden = block.layer[1](hidden)
        return self.norm(hidden)


class T5ScoringGraph(torch.nn.Module):
    """``(input_ids, attention_mask) -> sigmoid(logit_Yes - logit_No)`` of a T5 (t5 / t5-v1_1) model.

    Uses the weights of ``model`` (a ``T5ForConditionalGeneration`` in eval mode) in place; the module
    is meant for ``torch.onnx.export`` with ``dynamo=False`` (and ``custom_opsets=CONTRIB_OPSET`` when
    ``fused_attention``). Exported encoder nodes are named ``/encoder/...``.
    """

    head: torch.Tensor
    decoder_start: torch.Tensor
    decoder_blocks: Any

    def __init__(self, model: Any, *, yes_id: int, no_id: int, max_length: int, fused_attention: bool = True) -> None:
        super().__init__()
        config = model.config
        self.encoder = _Encoder(model, max_length=max_length, fused_attention=fused_attention)
        self.decoder_blocks = torch.nn.ModuleList(model.decoder.block)
        self.decoder_norm = model.decoder.final_layer_norm
        self.num_heads = int(config.num_heads)
        self.d_kv = int(config.d_kv)
        with torch.no_grad():
            scale = getattr(config, "scale_decoder_outputs", getattr(config, "tie_word_embeddings", False))
            self.register_buffer(
                "head",
                model.lm_head.weight.detach()[[yes_id, no_id]].clone()
                * (float(config.d_model) ** -0.5 if scale else 1.0),
            )
            start = model.decoder.embed_tokens.weight[int(config.decoder_start_token_id)]
            first_self = model.decoder.block[0].layer[0]
            self.register_buffer("decoder_start", (start + self._one_token_self_attention(first_self, start)).clone())

    @staticmethod
    def _one_token_self_attention(sublayer: Any, h: torch.Tensor) -> torch.Tensor:
        # softmax over a single position is exactly 1: attention returns the value projection itself
        attention = sublayer.SelfAttention
        return attention.o(attention.v(sublayer.layer_norm(h)))

    def cross_attention(
        self, sublayer: Any, h: torch.Tensor, states: torch.Tensor, mask_bias: torch.Tensor
    ) -> torch.Tensor:
        """One query (batch, d_model) over ``states`` (batch, length, d_model), projections folded into the query."""
        attention = sublayer.EncDecAttention
        b, d_model = h.shape
        heads, d_kv = self.num_heads, self.d_kv
        q = attention.q(sublayer.layer_norm(h)).view(b, heads, 1, d_kv)
        w_k = attention.k.weight.view(heads, d_kv, d_model)
        w_v = attention.v.weight.view(heads, d_kv, d_model)
        query_in_states = torch.matmul(q, w_k).view(b, heads, d_model)  # (b, heads, d_model)
        scores = torch.matmul(query_in_states, states.transpose(1, 2)) + mask_bias  # (b, heads, length)
        probs = torch.softmax(scores.float(), dim=-1).type_as(scores)
        mixed = torch.matmul(probs, states).view(b, heads, 1, d_model)  # (b, heads, 1, d_model)
        context = torch.matmul(mixed, w_v.transpose(1, 2)).reshape(b, heads * d_kv)
        return attention.o(context)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        states = self.encoder(input_ids, attention_mask)
        mask_bias = _mask_bias(attention_mask, states.dtype)[:, None, :]
        h = self.decoder_start.expand(input_ids.shape[0], -1)
        for i, block in enumerate(self.decoder_blocks):
            if i > 0:
                h = h + self._one_token_self_attention(block.layer[0], h)
            h = h + self.cross_attention(block.layer[1], h, states, mask_bias)
            h = block.layer[2](h)
        logits = self.decoder_norm(h) @ self.head.t()
        return torch.sigmoid(logits[:, 0] - logits[:, 1])
