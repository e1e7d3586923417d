"""CPU milliseconds per claim of each fact checker, fp32 and int8, next to the embedded head, in one run.

Builds real-size models with random weights (nothing is downloaded): MiniCheck's roberta-large, deberta-v3-large and
flan-t5-large configurations and HHEM-2.1-Open's (flan-t5-base's encoder with a two-way token-classification head),
each with a tokenizer of its kind trained here on the repository's documentation; exports each with
``nlgeval_training.checkers.export_checker`` (fp32 and dynamic int8, parity against the authors' reading in PyTorch
recorded), then times ``ClaimChecker.support`` on one news-like document of about 300 words (one chunk for every
checker) and ``--claims`` claims, one claim per call as a test suite asks, after one warm-up call. The embedded
default is timed on the same claims: its claim-support head alone (one input per claim, the document cut at its
256 tokens, as benchmarks/claim_support.py reads it) and its whole fact-consistency dimension (aligned source units,
the cascade, the explicit checks). Random weights make the timings real and the scores meaningless.

    python benchmarks/checkers.py --claims 8 [--threads 2] [--work DIR] [--only minicheck-roberta-large,...]

Prints the table of docs/checkers.md (ms per claim, median of the claims) and the folder sizes.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

DOCUMENT = (
    "A weekly injection called tevorimab cut migraine days by 47 percent in a 24-week trial of 1,436 adults with "
    "chronic migraine at 92 clinics in 11 countries, according to results published in The Lancet Neurology. "
    "Patients who had migraines on 16.2 days a month on average before the trial were down to 8.6 days on the drug, "
    "compared with 12.9 days on placebo, and 41 percent of those treated saw their migraine days at least halved, "
    "against 18 percent on placebo. The most common side effects were redness at the injection site and "
    "constipation. Lead researcher Ingrid Solberg said getting back eight days a month was life-changing for many "
    "patients, but independent neurologist Rafael Montes said the trial was too short to show whether the benefit "
    "would last. Aldane Therapeutics, which developed the drug and funded the study, plans to seek approval in "
    "Europe and the US later this year. The company said it would price the injection below existing treatments, "
    "which cost about 600 dollars a month in the United States. Health insurers in Germany and France have asked "
    "for longer studies before they agree to pay for it. A second trial, in 2,100 adults with episodic migraine, "
    "is due to report its first results in the spring, and a study in teenagers began in January at 30 clinics in "
    "Europe. Migraine affects about one in seven adults worldwide and is among the leading causes of disability in "
    "people under 50, according to the World Health Organization. Existing preventive drugs help fewer than half of "
    "patients, and many stop taking them because of side effects such as weight gain and fatigue."
)
CLAIMS = [
    "Tevorimab cut migraine days by 47 percent in a 24-week trial.",
    "The trial enrolled 1,436 adults at 92 clinics in 11 countries.",
    "Patients on the drug were down to 8.6 migraine days a month.",
    "Ingrid Solberg said the trial was too short to show a lasting benefit.",
    "Aldane Therapeutics plans to seek approval in Europe and the US.",
    "The injection will cost about 600 dollars a month.",
    "Insurers in Germany and France agreed to pay for the drug.",
    "A trial in teenagers began in January at 30 clinics.",
    "Migraine affects about one in seven adults worldwide.",
    "Existing preventive drugs help more than half of patients.",
    "The most common side effect was weight gain.",
    "Results were published in The Lancet Neurology.",
]
HHEM_PROMPT = "<pad> Determine if the hypothesis is true given the premise?\n\nPremise: {text1}\n\nHypothesis: {text2}"


def corpus() -> list[str]:
    lines = [line for path in sorted((ROOT / "docs").glob("*.md")) for line in path.read_text().splitlines()]
    return [line for line in lines if line.strip()] + [DOCUMENT] + CLAIMS + ["predict: 1 0"]


def tokenizer(kind: str):
    """A tokenizer of the checker's kind (byte-level BPE, Unigram with [CLS]/[SEP], Unigram with </s>)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    if kind == "bpe":
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        tok.train_from_iterator(
            corpus(), trainers.BpeTrainer(vocab_size=8000, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
        )
        tok.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
        return tok, dict(
            bos_token="<s>",
            eos_token="</s>",
            sep_token="</s>",
            cls_token="<s>",
            pad_token="<pad>",
            unk_token="<unk>",
            mask_token="<mask>",
        )
    # a SentencePiece-style Unigram model whose pieces are the corpus's words (characters as a fallback): about as
    # many tokens per word as DeBERTa-v3's and Flan-T5's own vocabularies give on news text (one chunk here)
    specials = ["[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]"] if kind == "cls" else ["<pad>", "</s>", "<unk>"]
    words = sorted({w for line in corpus() for w in line.split()})
    chars = sorted({c for line in corpus() for c in line if not c.isspace()})
    vocab = [(t, 0.0) for t in specials] + [("\u2581", -3.0), ("\u2581" + "1", -4.0)]
    vocab += [("\u2581" + w, -5.0) for w in words if w != "1"] + [(c, -10.0) for c in chars]
    tok = Tokenizer(models.Unigram(vocab, unk_id=3 if kind == "cls" else 2, byte_fallback=False))
    tok.add_special_tokens(specials)
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    if kind == "cls":
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]",
            pair="[CLS] $A [SEP] $B [SEP]",
            special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))],
        )
        return tok, dict(
            bos_token="[CLS]",
            eos_token="[SEP]",
            sep_token="[SEP]",
            cls_token="[CLS]",
            pad_token="[PAD]",
            unk_token="[UNK]",
            mask_token="[MASK]",
        )
    tok.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", tok.token_to_id("</s>"))]
    )
    return tok, dict(eos_token="</s>", pad_token="<pad>", unk_token="<unk>")


def build(checker: str, path: Path) -> Path:
    """A random-weight checkpoint of ``checker``'s real size in ``path``; returns the folder to export."""
    import torch
    from transformers import PreTrainedTokenizerFast

    torch.manual_seed(0)
    if checker == "minicheck-roberta-large":
        from transformers import RobertaConfig, RobertaForSequenceClassification

        tok, special = tokenizer("bpe")
        model = RobertaForSequenceClassification(
            RobertaConfig(
                vocab_size=50265,
                hidden_size=1024,
                num_hidden_layers=24,
                num_attention_heads=16,
                intermediate_size=4096,
                max_position_embeddings=514,
                type_vocab_size=1,
                pad_token_id=1,
                bos_token_id=0,
                eos_token_id=2,
                num_labels=2,
            )
        )
    elif checker == "minicheck-deberta-v3-large":
        from transformers import DebertaV2Config, DebertaV2ForSequenceClassification

        tok, special = tokenizer("cls")
        model = DebertaV2ForSequenceClassification(
            DebertaV2Config(
                vocab_size=128100,
                hidden_size=1024,
                num_hidden_layers=24,
                num_attention_heads=16,
                intermediate_size=4096,
                max_position_embeddings=512,
                relative_attention=True,
                position_buckets=256,
                pos_att_type=["p2c", "c2p"],
                norm_rel_ebd="layer_norm",
                share_att_key=True,
                type_vocab_size=0,
                position_biased_input=False,
                max_relative_positions=-1,
                pad_token_id=0,
                num_labels=2,
                layer_norm_eps=1e-7,
            )
        )
    else:
        from transformers import T5Config

        tok, special = tokenizer("t5")
        large = checker == "minicheck-flan-t5-large"
        config = T5Config(
            vocab_size=32128,
            d_model=1024 if large else 768,
            d_kv=64,
            d_ff=2816 if large else 2048,
            num_layers=24 if large else 12,
            num_decoder_layers=24 if large else 12,
            num_heads=16 if large else 12,
            feed_forward_proj="gated-gelu",
            tie_word_embeddings=False,
            decoder_start_token_id=0,
            pad_token_id=0,
            eos_token_id=1,
            num_labels=2,
        )
        if large:
            from transformers import T5ForConditionalGeneration

            model = T5ForConditionalGeneration(config)
        else:
            from safetensors.torch import save_file
            from transformers import T5ForTokenClassification

            foundation, checkpoint = path / "foundation", path / "checkpoint"
            PreTrainedTokenizerFast(tokenizer_object=tok, **special).save_pretrained(str(foundation))
            config.save_pretrained(str(foundation))
            checkpoint.mkdir(parents=True, exist_ok=True)
            state = T5ForTokenClassification(config).state_dict()
            save_file(
                {"t5." + k: v.contiguous() for k, v in state.items() if "encoder.embed_tokens" not in k},
                str(checkpoint / "model.safetensors"),
            )
            (checkpoint / "config.json").write_text(
                json.dumps({"model_type": "HHEMv2", "foundation": str(foundation), "prompt": HHEM_PROMPT})
            )
            return checkpoint
    PreTrainedTokenizerFast(tokenizer_object=tok, **special).save_pretrained(str(path))
    model.save_pretrained(str(path))
    return path


def per_claim(score, claims: list[str]) -> float:
    """Median milliseconds of one claim, one call per claim, after a warm-up call."""
    score(claims[0])
    times = []
    for claim in claims:
        started = time.perf_counter()
        score(claim)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def size_mb(folder: Path, precision: str) -> float:
    from nlgeval_runtime.modelfolder import ModelFolder

    names = ModelFolder.open(folder).files_for(precision)
    return sum((folder / n).stat().st_size for n in names) / 1e6


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--work", default=None, help="where checkpoints and folders go (default: a temporary folder)")
    parser.add_argument("--only", default="", help="comma-separated checkers (default: all four)")
    args = parser.parse_args(argv)

    from nlgeval_runtime.claim_support import load_claim_checker
    from nlgeval_training.checkers import CHECKERS, export_checker

    from pytest_nlgeval.core.evaluator import Evaluator

    claims = (CLAIMS * (1 + args.claims // len(CLAIMS)))[: args.claims]
    work = Path(args.work or tempfile.mkdtemp(prefix="nlgeval-checkers-"))
    names = [n for n in CHECKERS if not args.only or n in args.only.split(",")]
    rows = []
    for name in names:
        started = time.perf_counter()
        checkpoint = build(name, work / name / "ckpt")
        folder = work / name / "folder"
        manifest = export_checker(checkpoint, folder, checker=name, int8=True)
        shutil.rmtree(work / name / "ckpt", ignore_errors=True)
        row = {"checker": name, "parameters": manifest["parameters"], "export_s": time.perf_counter() - started}
        for precision in ("fp32", "int8"):
            checker = load_claim_checker(folder, device="cpu", precision=precision, threads=args.threads)
            row[precision] = per_claim(lambda c, checker=checker: checker.support([DOCUMENT], [c]), claims)
            row[f"{precision}_mb"] = size_mb(folder, precision)
            row[f"{precision}_parity"] = manifest["export"]["parity"][precision]["max_abs_diff"]
            row["chunks"] = len(checker.chunks(DOCUMENT))
            row["tokens"] = int(checker.encoder.encode([checker.input_text(DOCUMENT, claims[0])]).n_tokens[0])
        rows.append(row)
        print(json.dumps(row), flush=True)
    embedded = Evaluator(cache=False, device="cpu", threads=args.threads)
    dim = embedded._as_served(embedded.registry.get("consistency", "fact"))
    graph = embedded._served(dim).get("folder")
    question = dim.question
    head = per_claim(
        lambda c: embedded.score_texts([f"question: {question} </s> claim: {c} </s> document: {DOCUMENT}"], graph),
        claims,
    )
    whole = per_claim(lambda c: embedded.score(c, "consistency", task="fact", source=DOCUMENT), claims)

    print(
        f"\ndocument: {len(DOCUMENT.split())} words; {len(claims)} claims, one call each; {args.threads} threads; "
        "median ms per claim (CPU)\n"
    )
    print(
        "| checker | parameters | chunks (tokens) | fp32 ms/claim | int8 ms/claim | fp32 folder MB | int8 folder MB | "
        "parity fp32 / int8 |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['checker']} | {r['parameters'] / 1e6:.0f}M | {r['chunks']} ({r['tokens']}) | {r['fp32']:.0f} | "
            f"{r['int8']:.0f} | "
            f"{r['fp32_mb']:.0f} | {r['int8_mb']:.0f} | {r['fp32_parity']:.1e} / {r['int8_parity']:.1e} |"
        )
    int8_mb = size_mb(embedded.folder.path / graph, "int8") if graph else size_mb(embedded.folder.path, "int8")
    print(f"| embedded head (one input per claim, int8) | - | - | - | {head:.0f} | - | {int8_mb:.0f} | - |")
    print(f"| embedded fact/consistency dimension (int8) | - | - | - | {whole:.0f} | - | - | - |")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
