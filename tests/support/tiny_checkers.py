"""Tiny random fact checkers of each architecture, built here (the Hub is never contacted), and the authors'
readings in PyTorch to compare the exported folders with.

Each builder writes a checkpoint folder saved the way its authors' is: MiniCheck's RoBERTa and DeBERTa-v3 sequence
classifiers and its Flan-T5 seq2seq model with a tokenizer of the right kind (byte-level BPE, Unigram with
``[CLS]``/``[SEP]``, Unigram with ``</s>``), and an HHEM-like folder (``config.json`` of model type ``HHEMv2``
naming a tiny flan-t5 foundation, the weights of a ``T5ForTokenClassification`` under ``t5.``).
"""

from __future__ import annotations

import json
from pathlib import Path

CORPUS = [
    "The company reported a sharp rise in quarterly profits, driven by strong demand for its cloud services.",
    "Officials said the bridge would reopen next week after repairs. The cat sat on the mat.",
    "Scientists have discovered a new species of frog in the rainforests of Peru, the third this year.",
    "Prices of wheat and maize fell for a third consecutive month as harvests came in larger than expected.",
    "He said that he would not run for office again. She did. They will. It is raining today.",
    "predict: Determine if the hypothesis is true given the premise? Premise: Hypothesis: 1 0 yes no",
    "Profits rose because of cloud demand. The bridge will stay closed for a year. A frog was found.",
]
LONG_DOCUMENT = "\n".join(
    " ".join(CORPUS[i:] + CORPUS[:i]) + " " + " ".join(f"Sentence {k} of paragraph {i} adds words." for k in range(12))
    for i in range(7)
)
PAIRS = [
    (CORPUS[0], "Profits rose because of cloud demand."),
    (CORPUS[1], "The bridge will stay closed for a year."),
    (LONG_DOCUMENT, "A frog was found in Peru."),
    (LONG_DOCUMENT, "Wheat prices fell for a third month."),
    (" ".join(CORPUS[:3]), "The cat sat on the mat."),
]

HHEM_PROMPT = "<pad> Determine if the hypothesis is true given the premise?\n\nPremise: {text1}\n\nHypothesis: {text2}"


def _words() -> list[str]:
    return sorted({w for line in CORPUS for w in line.split()})


def _unigram(specials: list[str], template: tuple[str, str], pieces: list[str] | None = None):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors

    chars = sorted({c for line in CORPUS for c in line if not c.isspace()})
    vocab = [(s, 0.0) for s in specials] + [("\u2581", -3.0), ("\u2581" + "1", -4.0)]
    vocab += [("\u2581" + w, -5.0) for w in _words() if w != "1"] + [(c, -10.0) for c in chars]
    vocab += [(p, -6.0) for p in pieces or []]
    tok = Tokenizer(models.Unigram(vocab, unk_id=specials.index("<unk>" if "<unk>" in specials else "[UNK]")))
    tok.add_special_tokens(specials)
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    single, pair = template
    tok.post_processor = processors.TemplateProcessing(
        single=single, pair=pair, special_tokens=[(s, tok.token_to_id(s)) for s in specials if s in single + pair]
    )
    return tok


def _save_tokenizer(tok, path: Path, **special) -> None:
    from transformers import PreTrainedTokenizerFast

    PreTrainedTokenizerFast(tokenizer_object=tok, model_max_length=4096, **special).save_pretrained(str(path))


def _t5_tokenizer():
    return _unigram(["<pad>", "</s>", "<unk>"], ("$A </s>", "$A </s> $B </s>"))


def _t5_config(vocab_size: int, **kwargs):
    from transformers import T5Config

    return T5Config(
        vocab_size=vocab_size,
        d_model=32,
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
        **kwargs,
    )


def build_roberta(path: Path, seed: int = 0) -> Path:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import RobertaConfig, RobertaForSequenceClassification

    path.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    tok.train_from_iterator(CORPUS * 4, trainers.BpeTrainer(vocab_size=300, special_tokens=specials))
    tok.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    _save_tokenizer(
        tok,
        path,
        bos_token="<s>",
        eos_token="</s>",
        sep_token="</s>",
        cls_token="<s>",
        pad_token="<pad>",
        unk_token="<unk>",
        mask_token="<mask>",
    )
    config = RobertaConfig(
        vocab_size=tok.get_vocab_size(),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=514,
        type_vocab_size=1,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        num_labels=2,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        initializer_range=0.3,  # a random [CLS] state that depends on the text
    )
    torch.manual_seed(seed)
    _spread(RobertaForSequenceClassification(config).eval(), tok, "classifier.out_proj").save_pretrained(str(path))
    return path


def build_deberta(path: Path, seed: int = 0) -> Path:
    import torch
    from transformers import DebertaV2Config, DebertaV2ForSequenceClassification

    path.mkdir(parents=True, exist_ok=True)
    tok = _unigram(["[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]"], ("[CLS] $A [SEP]", "[CLS] $A [SEP] $B [SEP]"))
    _save_tokenizer(
        tok,
        path,
        bos_token="[CLS]",
        eos_token="[SEP]",
        sep_token="[SEP]",
        cls_token="[CLS]",
        pad_token="[PAD]",
        unk_token="[UNK]",
        mask_token="[MASK]",
    )
    config = DebertaV2Config(
        vocab_size=tok.get_vocab_size(),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=512,
        relative_attention=True,
        position_buckets=256,
        pos_att_type=["p2c", "c2p"],
        type_vocab_size=0,
        position_biased_input=False,
        norm_rel_ebd="layer_norm",
        share_att_key=True,
        max_relative_positions=-1,
        pad_token_id=0,
        num_labels=2,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        initializer_range=0.3,  # a random [CLS] state that depends on the text
    )
    torch.manual_seed(seed)
    _spread(DebertaV2ForSequenceClassification(config).eval(), tok, "classifier").save_pretrained(str(path))
    return path


def build_flan_t5(path: Path, seed: int = 0) -> Path:
    import torch
    from transformers import T5ForConditionalGeneration

    path.mkdir(parents=True, exist_ok=True)
    tok = _t5_tokenizer()
    _save_tokenizer(tok, path, eos_token="</s>", pad_token="<pad>", unk_token="<unk>")
    torch.manual_seed(seed)
    model = T5ForConditionalGeneration(_t5_config(tok.get_vocab_size())).eval()
    with torch.no_grad():
        model.lm_head.weight.mul_(0.2)
    model.save_pretrained(str(path))
    return path


def build_hhem(path: Path, seed: int = 0) -> Path:
    """An HHEM-like checkpoint in ``path/checkpoint`` and its flan-t5 foundation in ``path/foundation``."""
    import torch
    from safetensors.torch import save_file
    from transformers import T5ForTokenClassification

    foundation, checkpoint = path / "foundation", path / "checkpoint"
    foundation.mkdir(parents=True, exist_ok=True)
    checkpoint.mkdir(parents=True, exist_ok=True)
    tok = _t5_tokenizer()
    _save_tokenizer(tok, foundation, eos_token="</s>", pad_token="<pad>", unk_token="<unk>")
    config = _t5_config(tok.get_vocab_size())
    config.save_pretrained(str(foundation))
    torch.manual_seed(seed)
    model = _spread(T5ForTokenClassification(config).eval(), tok, "classifier")
    state = {
        "t5." + k: v.contiguous()
        for k, v in model.state_dict().items()
        if k != "transformer.encoder.embed_tokens.weight"
    }
    save_file(state, str(checkpoint / "model.safetensors"))
    # as the published checkpoint keeps them: config.json names the model type only, and the foundation and the
    # prompt are class attributes of HHEMv2Config in configuration_hhem_v2.py
    hhem = {
        "model_type": "HHEMv2",
        "architectures": ["HHEMv2ForSequenceClassification"],
        "auto_map": {"AutoConfig": "configuration_hhem_v2.HHEMv2Config"},
    }
    (checkpoint / "config.json").write_text(json.dumps(hhem), encoding="utf-8")
    code = (
        "from transformers import PretrainedConfig\n\n\n"
        "class HHEMv2Config(PretrainedConfig):\n"
        '    model_type = "HHEMv2"\n'
        f"    foundation = {str(foundation)!r}\n"
        f"    prompt = {HHEM_PROMPT!r}\n"
    )
    (checkpoint / "configuration_hhem_v2.py").write_text(code, encoding="utf-8")
    return checkpoint


def hhem_class_attribute(checkpoint: Path, name: str) -> str:
    """A class attribute of HHEMv2Config as its authors define it, read from the checkpoint's configuration file
    the way ``AutoConfig`` with ``trust_remote_code`` would see it (the file is run in a namespace of its own)."""
    import types

    module = types.ModuleType("configuration_hhem_v2")
    exec(
        compile((checkpoint / "configuration_hhem_v2.py").read_text(), "configuration_hhem_v2.py", "exec"),
        module.__dict__,
    )
    return getattr(module.HHEMv2Config, name)


def _spread(model, tok, head: str):
    """Scale the random head so that its scores on texts like the tests' spread over (0, 1): a tiny random model
    otherwise sits at 0.5 or saturates, and a comparison of its scores would mean little."""
    import torch

    linear = model.get_submodule(head)
    seen = []
    hook = linear.register_forward_hook(lambda _m, args, _out: seen.append(args[0].detach()))
    texts = [c + "  " + d for d, c in PAIRS] + CORPUS
    rows = [tok.encode(t).ids[:400] for t in texts]
    with torch.no_grad():
        for row in rows:
            ids = torch.tensor([row])
            model(input_ids=ids, attention_mask=torch.ones_like(ids))
    hook.remove()
    features = torch.cat([x.reshape(-1, x.shape[-1])[:1] for x in seen])  # the first position: the one read
    with torch.no_grad():
        d = features @ (linear.weight[1] - linear.weight[0])
        k = 2.0 / max(float(d.std()), 1e-9)
        linear.weight.mul_(k)
        linear.bias.zero_()
        linear.bias[1] = -float((features @ (linear.weight[1] - linear.weight[0])).mean())
    return model.eval()


BUILDERS = {
    "minicheck-roberta-large": build_roberta,
    "minicheck-deberta-v3-large": build_deberta,
    "minicheck-flan-t5-large": build_flan_t5,
    "hhem-2.1-open": build_hhem,
}


def authors_sent_tokenize():
    """MiniCheck's ``sent_tokenize``: NLTK's English Punkt where NLTK and its data are installed. Where they are not,
    the runtime reads with the project's splitter and says so in its fingerprint; this reference does the same, and
    tests/plugin/test_checker_sentences.py holds the runtime's chunks to NLTK's Punkt algorithm either way."""
    try:
        from nltk.tokenize import sent_tokenize

        sent_tokenize("One. Two.")
        return sent_tokenize
    except (ImportError, LookupError):
        from nlgeval_runtime.sentences import split_sentences

        return split_sentences


def authors_reading(checker: str, checkpoint: Path, pairs: list[tuple[str, str]]) -> list[float]:
    """The authors' reading, written out from their published code (MiniCheck ``inference.py``, HHEM's
    ``predict``): chunks of sentences per line counted by the Hugging Face tokenizer (tokens) or by words, each
    chunk read with the claim, softmax, the max over chunks; HHEM reads the premise whole in its prompt."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, T5ForConditionalGeneration

    split_sentences = authors_sent_tokenize()

    if checker == "hhem-2.1-open":
        from safetensors.torch import load_file
        from transformers import AutoConfig, T5ForTokenClassification

        foundation = hhem_class_attribute(checkpoint, "foundation")
        prompt = hhem_class_attribute(checkpoint, "prompt")
        tokenizer = AutoTokenizer.from_pretrained(foundation)
        model = T5ForTokenClassification(AutoConfig.from_pretrained(foundation))
        state = {k[3:]: v for k, v in load_file(str(checkpoint / "model.safetensors")).items()}
        model.load_state_dict(state, strict=False)
        model.tie_weights()
        model.eval()
        out = []
        with torch.no_grad():
            for premise, hypothesis in pairs:
                enc = tokenizer([prompt.format(text1=premise, text2=hypothesis)], return_tensors="pt", padding=True)
                out.append(float(torch.softmax(model(**enc).logits[:, 0, :], dim=-1)[0, 1]))
        return out
    tokenizer = AutoTokenizer.from_pretrained(str(checkpoint))
    ft5 = checker == "minicheck-flan-t5-large"
    if ft5:
        model = T5ForConditionalGeneration.from_pretrained(str(checkpoint)).eval()
        labels = [tokenizer.convert_tokens_to_ids("\u2581"), tokenizer.convert_tokens_to_ids("\u2581" + "1")]
    else:
        model = AutoModelForSequenceClassification.from_pretrained(str(checkpoint)).eval()
    max_len = {"minicheck-roberta-large": 512}.get(checker, 2048)
    size = 500 if ft5 else 400

    def sentences(doc: str) -> list[str]:
        out: list[str] = []
        for block in doc.split("\n"):
            out.extend(split_sentences(block))
            out.append("\n")
        return out[:-1]

    def count(sentence: str) -> int:
        if ft5:
            return len(sentence.split())
        return len(
            tokenizer(sentence, padding=False, add_special_tokens=False, max_length=max_len, truncation=True)[
                "input_ids"
            ]
        )

    def chunks(doc: str) -> list[str]:
        current, total = [], 0
        for sentence in sentences(doc) or [""]:
            n = count(sentence)
            if total + n > size:
                yield " ".join(current)
                current, total = [sentence], n
            else:
                current.append(sentence)
                total += n
        if current:
            yield " ".join(current)

    out = []
    with torch.no_grad():
        for doc, claim in pairs:
            pieces = [c.replace(" \n ", "\n").strip() for c in chunks(doc)]
            texts = [tokenizer.eos_token.join([c, claim]) for c in pieces if c]
            if ft5:
                enc = tokenizer(
                    ["predict: " + t for t in texts],
                    max_length=max_len,
                    truncation=True,
                    padding=True,
                    return_tensors="pt",
                )
                start = torch.zeros((enc["input_ids"].size(0), 1), dtype=torch.long)
                logits = model(
                    input_ids=enc["input_ids"], attention_mask=enc["attention_mask"], decoder_input_ids=start
                ).logits.squeeze(1)[:, labels]
            else:
                enc = tokenizer(texts, max_length=max_len, truncation=True, padding=True, return_tensors="pt")
                logits = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).logits
            out.append(float(torch.softmax(logits, dim=-1)[:, 1].max()))
    return out
