"""Write a Llama-architecture causal LM and its byte-level BPE tokenizer to one GGUF file (llama.cpp's format).

llama.cpp, and the OpenAI-compatible server of llama-cpp-python, load the file directly, so a model trained
with this package can answer LLM-judge prompts over HTTP like any served model::

    python -m nlgeval_training.export_gguf runs/tiny-llama tiny.gguf
    python -m llama_cpp.server --model tiny.gguf --host 127.0.0.1 --port 8080 --model_alias tiny

What the conversion has to get right:

* The rotary embedding: Hugging Face's Llama rotates the two halves of each head (``rotate_half``), llama.cpp
  rotates adjacent pairs, so the rows of the query and key projections are permuted per head (pairs
  ``(i, i + d/2)`` become ``(2i, 2i + 1)``); the attention scores are then the same.
* The tokenizer: a ``tokenizers`` byte-level BPE (GPT-2 pre-tokenisation) becomes ``tokenizer.ggml.model =
  gpt2`` with the ``gpt-2`` pre-tokenizer, the vocabulary in id order and the merges in rank order; special
  (added) tokens are control tokens.
* A chat template (Jinja, read by the server) so chat requests become the prompt layout the model saw.

Weights are written in float32: the models this serves are tiny, and no quantisation error gets in the way of
comparing llama.cpp's logits with PyTorch's.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

__all__ = ["export_llama_gguf", "DEFAULT_CHAT_TEMPLATE", "main"]

#: Roles as plain-text markers, one message per block, and the assistant's turn opened at the end.
DEFAULT_CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>\n{{ message['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def _permute_rotary(weight, n_heads: int):
    """Reorder the output rows of a q/k projection from half-split rotary layout to interleaved pairs."""
    out_dim = weight.shape[0]
    head_dim = out_dim // n_heads
    return weight.reshape(n_heads, 2, head_dim // 2, *weight.shape[1:]).swapaxes(1, 2).reshape(weight.shape)


def _tokenizer_tables(tokenizer) -> tuple[list[str], list[int], list[str], set[int]]:
    """(tokens in id order, token types, merges in rank order, ids of special tokens) of a BPE ``tokenizers``
    tokenizer."""
    import gguf

    data = json.loads(tokenizer.to_str())
    model = data["model"]
    if model.get("type") != "BPE":
        raise ValueError(f"only byte-level BPE tokenizers are supported, got {model.get('type')!r}")
    vocab: dict[str, int] = dict(model["vocab"])
    special = {}
    for added in data.get("added_tokens", []):
        vocab[added["content"]] = added["id"]
        if added.get("special"):
            special[added["id"]] = added["content"]
    size = max(vocab.values()) + 1
    tokens = [f"[PAD{i}]" for i in range(size)]
    types = [int(gguf.TokenType.UNUSED)] * size
    for text, idx in vocab.items():
        tokens[idx] = text
        types[idx] = int(gguf.TokenType.CONTROL if idx in special else gguf.TokenType.NORMAL)
    merges = [m if isinstance(m, str) else " ".join(m) for m in model.get("merges", [])]
    return tokens, types, merges, set(special)


def export_llama_gguf(
    model: Any,
    tokenizer: Any,
    path: str | Path,
    *,
    name: str = "nlgeval tiny llama",
    bos_token: str = "<|endoftext|>",
    eos_token: str | None = None,
    chat_template: str = DEFAULT_CHAT_TEMPLATE,
    context_length: int | None = None,
) -> Path:
    """Write ``model`` (a ``transformers`` ``LlamaForCausalLM``) and ``tokenizer`` (a ``tokenizers`` byte-level
    BPE ``Tokenizer``) to ``path`` as float32 GGUF; returns the path.

    ``context_length`` defaults to the model's ``max_position_embeddings``.
    """
    import gguf
    import numpy as np

    cfg = model.config
    if getattr(cfg, "model_type", None) != "llama":
        raise ValueError(f"expected a Llama model, got model_type {getattr(cfg, 'model_type', None)!r}")
    n_head = cfg.num_attention_heads
    n_kv = getattr(cfg, "num_key_value_heads", None) or n_head
    head_dim = cfg.hidden_size // n_head
    tokens, types, merges, special = _tokenizer_tables(tokenizer)
    if len(tokens) > cfg.vocab_size:
        raise ValueError(f"the tokenizer has {len(tokens)} tokens but the model's vocabulary is {cfg.vocab_size}")
    tokens += [f"[PAD{i}]" for i in range(len(tokens), cfg.vocab_size)]
    types += [int(gguf.TokenType.UNUSED)] * (cfg.vocab_size - len(types))
    bos = tokenizer.token_to_id(bos_token)
    eos = tokenizer.token_to_id(eos_token or bos_token)
    if bos is None or eos is None:
        raise ValueError(f"the tokenizer lacks {bos_token!r} or {eos_token!r}")

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    writer = gguf.GGUFWriter(str(tmp), "llama")
    writer.add_name(name)
    writer.add_context_length(int(context_length or cfg.max_position_embeddings))
    writer.add_embedding_length(cfg.hidden_size)
    writer.add_block_count(cfg.num_hidden_layers)
    writer.add_feed_forward_length(cfg.intermediate_size)
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_kv)
    writer.add_rope_dimension_count(head_dim)
    writer.add_rope_freq_base(
        float(
            getattr(cfg, "rope_theta", None) or (getattr(cfg, "rope_parameters", None) or {}).get("rope_theta", 10000.0)
        )
    )
    writer.add_layer_norm_rms_eps(float(cfg.rms_norm_eps))
    writer.add_vocab_size(cfg.vocab_size)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("gpt-2")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    writer.add_bos_token_id(bos)
    writer.add_eos_token_id(eos)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)
    writer.add_chat_template(chat_template)

    state = {k: v.detach().float().cpu().numpy() for k, v in model.state_dict().items()}

    def put(gguf_name: str, array) -> None:
        writer.add_tensor(gguf_name, np.ascontiguousarray(array, dtype=np.float32))

    put("token_embd.weight", state["model.embed_tokens.weight"])
    for i in range(cfg.num_hidden_layers):
        p = f"model.layers.{i}."
        put(f"blk.{i}.attn_norm.weight", state[p + "input_layernorm.weight"])
        put(f"blk.{i}.attn_q.weight", _permute_rotary(state[p + "self_attn.q_proj.weight"], n_head))
        put(f"blk.{i}.attn_k.weight", _permute_rotary(state[p + "self_attn.k_proj.weight"], n_kv))
        put(f"blk.{i}.attn_v.weight", state[p + "self_attn.v_proj.weight"])
        put(f"blk.{i}.attn_output.weight", state[p + "self_attn.o_proj.weight"])
        put(f"blk.{i}.ffn_norm.weight", state[p + "post_attention_layernorm.weight"])
        put(f"blk.{i}.ffn_gate.weight", state[p + "mlp.gate_proj.weight"])
        put(f"blk.{i}.ffn_up.weight", state[p + "mlp.up_proj.weight"])
        put(f"blk.{i}.ffn_down.weight", state[p + "mlp.down_proj.weight"])
    put("output_norm.weight", state["model.norm.weight"])
    put("output.weight", state.get("lm_head.weight", state["model.embed_tokens.weight"]))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    tmp.replace(path)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m nlgeval_training.export_gguf",
        description="Convert a Llama checkpoint folder (config, weights, tokenizer.json) "
        "to a float32 GGUF file for llama.cpp.",
    )
    parser.add_argument("checkpoint", help="folder of a transformers LlamaForCausalLM with tokenizer.json")
    parser.add_argument("output", help="GGUF file to write")
    parser.add_argument("--bos-token", default="<|endoftext|>")
    args = parser.parse_args(argv)
    from tokenizers import Tokenizer
    from transformers import LlamaForCausalLM

    model = LlamaForCausalLM.from_pretrained(args.checkpoint)
    tokenizer = Tokenizer.from_file(str(Path(args.checkpoint) / "tokenizer.json"))
    out = export_llama_gguf(model, tokenizer, args.output, bos_token=args.bos_token)
    print(f"wrote {out} ({out.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
