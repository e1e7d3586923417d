"""Small corpora and a tiny encoder-classifier for the training package's tests (built here, offline)."""

from __future__ import annotations

import json
from pathlib import Path

TOPICS = [
    ("Paris", "museum", "opened", "closed", 12, "visitors"),
    ("Berlin", "bridge", "rose", "fell", 40, "workers"),
    ("Tokyo", "market", "increased", "decreased", 7, "traders"),
    ("Lagos", "stadium", "won", "lost", 3, "players"),
    ("Lima", "school", "accepted", "rejected", 25, "students"),
    ("Oslo", "hospital", "expanded", "shrank", 90, "nurses"),
    ("Cairo", "airport", "arrived", "departed", 15, "pilots"),
    ("Quito", "library", "bought", "sold", 60, "books"),
]


def documents():
    """Eight short news-like documents with reference summaries (numbers, names, antonym-bearing verbs)."""
    from nlgeval_training.data import Document

    docs = []
    for i, (city, place, verb, _, n, who) in enumerate(TOPICS):
        sents = [
            f"Officials in {city} said the new {place} {verb} on Monday after years of planning.",
            f"About {n} {who} gathered outside the {place} as Mayor Alice Moreno gave a short speech.",
            f"The {place} cost more than {n * 10} million dollars, according to the city council of {city}.",
            "Critics argued that the money was not well spent, but supporters were happy with the result.",
            f"The {place} will be open every day except public holidays, the council said in a statement.",
            f"Local newspapers in {city} called it the biggest project of the decade for the region.",
        ]
        summary = [
            f"The new {place} in {city} {verb} on Monday with {n} {who} outside.",
            f"It cost more than {n * 10} million dollars, the council of {city} said.",
            f"Critics were not happy with the spending on the {place}.",
        ]
        docs.append(Document(id=f"doc{i}", sentences=sents, summary=summary))
    return docs


def dialogues():
    """Eight short knowledge-grounded dialogues (Topical-Chat layout)."""
    from nlgeval_training.data import Dialogue

    out = []
    for i, (city, place, verb, _, n, who) in enumerate(TOPICS):
        fact = (
            f"{city} is a large city with a famous {place}. The {place} has about {n} {who} every day. "
            f"It was built in the nineteenth century by local architects."
        )
        turns = [
            f"Have you ever been to {city}? I heard it is lovely in spring.",
            f"Yes, I visited the {place} there last year with my family and friends.",
            f"Did you know the {place} has about {n} {who} every day? That is a lot of people.",
            f"Wow, I did not know that, I only saw a few {who} when we went there.",
            "It was built in the nineteenth century by local architects, which is pretty impressive.",
        ]
        knowledge = [[], [], [fact], [], [fact]]
        out.append(Dialogue(id=f"dlg{i}", turns=turns, knowledge=knowledge, facts=[fact]))
    return out


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    import gzip

    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    return path


def build_tiny_encoder(path: Path, seed: int = 0) -> Path:
    """A random 2-layer BERT (hidden 32, no dropout) with the all-MiniLM-L6-v2 tokenizer, as an encoder folder."""
    import shutil

    import torch
    from transformers import BertConfig, BertModel

    from nlgeval_training.model import minilm_path

    path.mkdir(parents=True, exist_ok=True)
    config = BertConfig(
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    torch.manual_seed(seed)
    BertModel(config).save_pretrained(str(path))
    shutil.copy(minilm_path() / "tokenizer.json", path / "tokenizer.json")
    return path
