"""A tiny random GPT-2 causal LM and its model folder, built by the tests (never downloaded)."""

from __future__ import annotations

from pathlib import Path

CORPUS = [
    "The committee met on Tuesday to discuss the budget for the new school year.",
    "Members agreed to delay the vote until March, when more figures are available.",
    "Once upon a time a small fox lived at the edge of a dark forest near the river.",
    "Every morning the fox walked to the river and watched the fishermen at work.",
    "Prices rose 3.5% in 2023, the fastest pace in a decade, official figures showed.",
    "Do you like football? Yes, I watch every game with my brother on Sundays.",
]
MAX_LENGTH = 64


def build_tokenizer(vocab_size: int = 320):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS * 3, trainer=trainer)
    return tok


def build_model(tok, seed: int = 0):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    bos = tok.token_to_id("<|endoftext|>")
    config = GPT2Config(
        vocab_size=tok.get_vocab_size(),
        n_positions=MAX_LENGTH,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=bos,
        eos_token_id=bos,
        pad_token_id=bos,
    )
    config._attn_implementation = "eager"
    return GPT2LMHeadModel(config).eval()


def export_tiny_causal_lm(model, tok, folder: Path) -> Path:
    """Export the tiny model and tokenizer to ``folder`` (kind ``causal-lm``)."""
    from nlgeval_training.export_causal import export_causal_lm

    return export_causal_lm(model, folder, tokenizer=tok, max_length=MAX_LENGTH)
