"""Tiny models built by the tests themselves (the Hugging Face Hub is never contacted).

``build_tiny_t5_checkpoint`` writes a random T5 of the t5-v1_1 family (gated-gelu, untied embeddings)
with a SentencePiece-style Unigram tokenizer trained on a few sentences, saved the way a Hugging Face
checkpoint is saved; ``build_tiny_t5_model`` exports it into a model folder.
"""

from __future__ import annotations

from pathlib import Path

CORPUS = [
    "Yes No Yes No yes no question: Is this a fluent paragraph? paragraph:",
    "question: Is this claim consistent with the document? claim: document:",
    "question: Is this a coherent summary to the document? summary: document:",
    "question: Is this summary relevant to the reference? reference:",
    "question: Is this a natural response in the dialogue? response: dialogue history: fact:",
    "The company reported a sharp rise in quarterly profits, driven by strong demand for its cloud services.",
    "Officials said the bridge would reopen next week after repairs. The cat sat on the mat.",
    "Scientists have discovered a new species of frog in the rainforests of Peru.",
    "Prices of wheat and maize fell for a third consecutive month as harvests came in larger than expected.",
    "He said that he would not run for office again. She did. They will. It is raining today.",
]


def build_tiny_tokenizer():
    """A SentencePiece-style Unigram tokenizer: whole words of CORPUS as pieces, characters as fallback."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors

    words = sorted({w for line in CORPUS for w in line.split()})
    chars = sorted({c for line in CORPUS for c in line if not c.isspace()})
    vocab = [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), ("\u2581", -3.0)]
    vocab += [("\u2581" + w, -5.0) for w in words] + [(c, -10.0) for c in chars]
    tok = Tokenizer(models.Unigram(vocab, unk_id=2, byte_fallback=False))
    tok.add_special_tokens(["<pad>", "</s>", "<unk>"])
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    tok.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", tok.token_to_id("</s>"))]
    )
    return tok


def build_tiny_t5_checkpoint(path: str | Path, *, seed: int = 0, d_model: int = 32) -> Path:
    import torch
    from transformers import T5Config, T5ForConditionalGeneration, T5TokenizerFast

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    tok = build_tiny_tokenizer()
    hf_tok = T5TokenizerFast(
        tokenizer_object=tok, eos_token="</s>", pad_token="<pad>", unk_token="<unk>", extra_ids=0, model_max_length=64
    )
    hf_tok.save_pretrained(str(path))
    config = T5Config(
        vocab_size=tok.get_vocab_size(),
        d_model=d_model,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=4,
        feed_forward_proj="gated-gelu",
        tie_word_embeddings=False,
        decoder_start_token_id=0,
        pad_token_id=0,
        eos_token_id=1,
        relative_attention_num_buckets=8,
        dropout_rate=0.0,
    )
    torch.manual_seed(seed)
    model = T5ForConditionalGeneration(config).eval()
    # Random init of an untied head gives logits of std ~sqrt(d_model): scale it so scores spread over (0, 1)
    # instead of saturating at 0 or 1.
    with torch.no_grad():
        model.lm_head.weight.mul_(0.2)
    model.save_pretrained(str(path))
    return path


def build_tiny_t5_model(
    checkpoint_dir: str | Path, out_dir: str | Path, *, int8: bool = True, max_length: int = 48
) -> Path:
    from nlgeval_training.export import export_t5

    export_t5(checkpoint_dir, out_dir, int8=int8, max_length=max_length, source_id="tests/tiny-t5")
    return Path(out_dir)
