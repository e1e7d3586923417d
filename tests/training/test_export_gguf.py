"""GGUF export of a Llama-architecture LM: the file's metadata, tensors and tokenizer, and (with llama-cpp-python
installed) llama.cpp's logits against PyTorch's on the same tokens."""

import numpy as np
import pytest

pytest.importorskip("gguf", reason="the gguf package is not installed (pip install gguf)")
torch = pytest.importorskip("torch", reason="the training extra (torch) is not installed")

TEXTS = [
    "The committee met on Tuesday to discuss the budget.",
    "Is this a fluent paragraph? Yes, it is.",
    "[[ ## score ## ]]\n4\n\n[[ ## completed ## ]]",
]


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory):
    from transformers import LlamaConfig, LlamaForCausalLM

    from nlgeval_training.lm_trainer import train_tokenizer
    from nlgeval_training.export_gguf import export_llama_gguf

    tok = train_tokenizer(TEXTS * 20, vocab_size=300)
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=tok.get_vocab_size(),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
        bos_token_id=0,
        eos_token_id=0,
        tie_word_embeddings=False,
    )
    model = LlamaForCausalLM(config).eval()
    with torch.no_grad():  # random norms too, so a swapped or unpermuted tensor cannot go unnoticed
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.uniform_(0.5, 1.5)
    path = export_llama_gguf(model, tok, tmp_path_factory.mktemp("gguf") / "tiny.gguf")
    return model, tok, path


def test_the_gguf_file_holds_the_model_and_its_tokenizer(tiny_llama):
    import gguf

    model, tok, path = tiny_llama
    reader = gguf.GGUFReader(str(path))

    def field(name):
        f = reader.fields[name]
        return f.contents()

    assert field("general.architecture") == "llama"
    assert field("llama.block_count") == 2 and field("llama.attention.head_count_kv") == 2
    assert field("llama.rope.dimension_count") == 8
    assert field("tokenizer.ggml.model") == "gpt2" and field("tokenizer.ggml.pre") == "gpt-2"
    tokens = field("tokenizer.ggml.tokens")
    vocab = tok.get_vocab()
    assert all(tokens[i] == t for t, i in vocab.items())
    assert "<|assistant|>" in field("tokenizer.chat_template")
    shapes = {t.name: tuple(int(d) for d in t.shape) for t in reader.tensors}
    # GGUF lists dimensions fastest-first: a [out, in] PyTorch weight reads as (in, out)
    assert shapes["blk.0.attn_k.weight"] == (32, 16) and shapes["token_embd.weight"] == (32, tok.get_vocab_size())
    assert len(shapes) == 2 + 2 * 9 + 1


def test_llama_cpp_reproduces_the_pytorch_logits(tiny_llama):
    llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")

    model, tok, path = tiny_llama
    llm = llama_cpp.Llama(model_path=str(path), n_ctx=128, logits_all=True, verbose=False, n_threads=1, seed=0)
    for text in TEXTS:
        ids = [0] + tok.encode(text).ids
        assert llm.tokenize(text.encode(), add_bos=True, special=False) == ids  # the same tokenisation
        llm.reset()
        llm.eval(ids)
        got = np.array(llm.scores[: len(ids)])
        with torch.no_grad():
            want = model(input_ids=torch.tensor([ids])).logits[0].numpy()
        assert np.abs(got - want).max() < 1e-3
