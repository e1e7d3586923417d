"""Pseudo-data generators: each negative differs in the intended way, labels are balanced, no overlap."""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest

from training_fixtures import dialogues, documents, write_jsonl

from nlgeval_training.boolqa import boolqa_input
from nlgeval_training.pseudo import dialogue as dlg
from nlgeval_training.pseudo import summarization as summ
from nlgeval_training.pseudo.common import finalize, poisson, span_perturb, split_records
from nlgeval_training.retrieval import BM25Index

ANTONYMS = {
    "opened": ["closed"],
    "closed": ["opened"],
    "rose": ["fell"],
    "fell": ["rose"],
    "happy": ["unhappy"],
    "won": ["lost"],
    "lost": ["won"],
    "new": ["old"],
    "old": ["new"],
}


def field(text: str, name: str) -> str:
    """The value of ``name:`` in an evaluator input (up to the next separator)."""
    for part in text.split(" </s> "):
        if part.startswith(name + ": "):
            return part[len(name) + 2 :]
    raise AssertionError(f"no field {name!r} in {text!r}")


def check_balanced(records, dimension):
    assert records, f"{dimension}: no records"
    counts = Counter(r["label"] for r in records)
    assert counts[0] == counts[1] > 0
    assert all(r["dimension"] == dimension for r in records)
    pos = {r["input"] for r in records if r["label"] == 1}
    neg = {r["input"] for r in records if r["label"] == 0}
    assert not pos & neg
    assert len(pos) + len(neg) == len(records)  # deduplicated


def pairs(records):
    """(positive, negative) inputs sharing a group, matched by their shared context field."""
    by = {}
    for r in records:
        by.setdefault((r["group"], r["label"]), []).append(r["input"])
    return by


def test_input_format_matches_the_scorer():
    text = boolqa_input("dialogue", "engagingness", output="Nice.", context="Hi\nHello\n\n", fact="A fact.\n")
    assert text == (
        "question: Is this an engaging and informative response according to the dialogue history and "
        "fact? </s> response: Nice. </s> dialogue history: Hi\nHello\n\n </s> fact: A fact.\n"
    )
    with pytest.raises(ValueError, match="needs the field 'source'"):
        boolqa_input("summarization", "coherence", output="x")
    with pytest.raises(ValueError, match="unknown dimension"):
        boolqa_input("summarization", "beauty", output="x")


def test_span_perturb_always_changes_the_text():
    rng = random.Random(0)
    seen = Counter()
    for i in range(300):
        text = "the quick brown fox jumps over the lazy dog near the river bank"
        out = span_perturb(text, rng, lam=5.0)
        assert out is not None and out[0] != text
        seen[out[1]] += 1
        if out[1] == "delete":
            assert len(out[0].split()) < len(text.split())
        elif out[1] == "repeat":
            assert len(out[0].split()) > len(text.split())
        else:
            assert sorted(out[0].split()) == sorted(text.split())
    assert set(seen) == {"repeat", "delete", "shuffle"}
    assert span_perturb("too short", rng, 3.0) is None
    draws = [poisson(random.Random(s), 5.0) for s in range(2000)]
    assert 4.7 < sum(draws) / len(draws) < 5.3


def test_summarization_coherence_swaps_one_sentence_from_another_summary():
    docs = documents()
    recs = summ.coherence(docs, seed=1)
    check_balanced(recs, "coherence")
    by_doc = {d.id: d for d in docs}
    all_summary_sents = {s for d in docs for s in d.summary}
    for r in recs:
        text = field(r["input"], "summary")
        own = " ".join(by_doc[r["group"]].summary)
        if r["label"] == 1:
            assert text == own
        else:
            assert text != own
            foreign = [s for s in all_summary_sents - set(by_doc[r["group"]].summary) if s in text]
            assert len(foreign) == 1


def test_summarization_consistency_negatives_are_perturbed_claims():
    docs = documents()
    recs = summ.consistency(docs, ANTONYMS, seed=2)
    check_balanced(recs, "consistency")
    claims = {s for d in docs for s in d.summary}
    for r in recs:
        claim = field(r["input"], "claim")
        assert (claim in claims) == (r["label"] == 1)
        # the document shown is an excerpt of the claim's own article
        assert field(r["input"], "document") in " ".join(next(d for d in docs if d.id == r["group"]).sentences)


def test_consistency_perturbations_each_change_meaning():
    rng = random.Random(0)
    s = "The museum opened on Monday with 12 visitors, Mayor Alice Moreno said."
    assert summ._antonym_swap(s, rng, ANTONYMS) == s.replace("opened", "closed")
    changed = summ._number_change(s, rng)
    assert changed != s and re.sub(r"\d+", "N", changed) == re.sub(r"\d+", "N", s)
    swapped = summ._entity_swap(s, rng, ["Bob Stone"])
    assert "Bob Stone" in swapped and swapped != s
    assert summ._negation_edit("He was not at home.", rng) == "He was at home."
    assert summ._negation_edit("He was at home.", rng) == "He was not at home."
    assert summ.perturb_claim("hello", rng, {}, []) is None


def test_summarization_fluency_units_are_single_sentences():
    docs = documents()
    recs = summ.fluency(docs, seed=3)
    check_balanced(recs, "fluency")
    sentences = {s for d in docs for s in d.summary}
    for r in recs:
        assert (field(r["input"], "paragraph") in sentences) == (r["label"] == 1)


def test_summarization_relevance_never_uses_the_candidate_as_its_own_reference():
    docs = documents()
    recs = summ.relevance(docs, seed=4)
    check_balanced(recs, "relevance")
    for r in recs:
        doc = next(d for d in docs if d.id == r["group"])
        cand, ref = field(r["input"], "summary"), field(r["input"], "reference")
        assert cand != ref
        replaced = (
            sum(s not in doc.sentences[:3] for s in summ.split_sentences(cand))
            if hasattr(summ, "split_sentences")
            else None
        )
        if r["label"] == 1:
            assert cand == doc.lead(3)
        else:
            foreign = [s for d in docs if d.id != doc.id for s in d.sentences if s in cand]
            assert len(foreign) >= 2
        del replaced


def test_dialogue_generators_follow_the_dialogue_conventions():
    dialogs = dialogues()
    turns = {t for d in dialogs for t in d.turns}
    nat = dlg.naturalness(dialogs, seed=0)
    check_balanced(nat, "naturalness")
    assert all((field(r["input"], "response") in turns) == (r["label"] == 1) for r in nat)

    coh = dlg.coherence(dialogs, seed=0)
    check_balanced(coh, "coherence")
    for r in coh:
        hist, resp = field(r["input"], "dialogue history"), field(r["input"], "response")
        assert hist.endswith("\n\n") and not hist.endswith("\n\n\n")
        own = next(d for d in dialogs if d.id == r["group"])
        assert (resp in own.turns) == (r["label"] == 1)

    eng = dlg.engagingness(dialogs, seed=0)
    check_balanced(eng, "engagingness")
    for r in eng:
        assert field(r["input"], "fact").endswith("\n")
        resp = field(r["input"], "response")
        if r["label"] == 0:
            assert len(resp.split()) <= 8
        else:
            assert len(resp.split()) >= 10

    grd = dlg.groundedness(dialogs, seed=0, paraphrase_rate=0.0)
    check_balanced(grd, "groundedness")
    for r in grd:
        fact, resp = field(r["input"], "fact"), field(r["input"], "response")
        assert (resp in fact) == (r["label"] == 1)


def test_groundedness_paraphrase_keeps_the_content():
    rng = random.Random(1)
    out = dlg.paraphrase("The tower (built 1889) is in Paris.", rng)
    assert "tower" in out and "Paris" in out and "1889" not in out and out != "The tower (built 1889) is in Paris."


def test_generators_are_seeded_and_bad_input_is_named():
    docs = documents()
    assert summ.coherence(docs, seed=5) == summ.coherence(docs, seed=5)
    assert summ.fluency(docs, seed=5) != summ.fluency(docs, seed=6)
    with pytest.raises(ValueError, match="at least two dialogues"):
        dlg.coherence(dialogues()[:1])


def test_finalize_balances_dedups_and_drops_conflicts():
    recs = [{"input": f"x{i}", "label": 1, "task": "t", "dimension": "d", "group": "g"} for i in range(5)]
    recs += [{"input": f"y{i}", "label": 0, "task": "t", "dimension": "d", "group": "g"} for i in range(3)]
    recs += [
        {"input": "x0", "label": 1, "task": "t", "dimension": "d", "group": "g"},
        {"input": "x1", "label": 0, "task": "t", "dimension": "d", "group": "g"},
    ]
    out = finalize(recs, seed=0)
    assert Counter(r["label"] for r in out) == {1: 3, 0: 3}
    assert "x1" not in {r["input"] for r in out}
    assert len(finalize(recs, seed=0, limit=2)) == 2


def test_held_out_split_is_by_group():
    recs = [
        {"input": f"{g}-{i}", "label": i % 2, "task": "t", "dimension": "d", "group": f"g{g}"}
        for g in range(200)
        for i in range(4)
    ]
    train, test = split_records(recs, 0.2)
    assert not {r["group"] for r in train} & {r["group"] for r in test}
    assert 0.1 < len(test) / len(recs) < 0.3


def test_bm25_ranks_term_overlap():
    index = BM25Index(["museum in Paris opened", "bridge in Berlin fell", "the Paris museum has visitors"])
    assert index.top("Paris museum", k=2) == [0, 2] or index.top("Paris museum", k=2) == [2, 0]
    assert index.top("Paris museum", k=3, exclude={0, 2}) == []
    with pytest.raises(ValueError):
        BM25Index([])


def test_loaders_read_user_files_and_name_bad_ones(tmp_path):
    from nlgeval_training.data import DataError, load_dialogues, load_documents
    from nlgeval_training.pseudo.build import build_pseudo_data

    art = "First sentence here. Second one follows. Third closes it. A fourth for luck."
    docs_file = write_jsonl(
        tmp_path / "docs.jsonl.gz", [{"id": f"a{i}", "text": art, "abstract": "One. Two."} for i in range(3)]
    )
    docs = load_documents(docs_file, article_field="text", summary_fields=("abstract",))
    assert len(docs) == 3 and docs[0].summary == ["One.", "Two."] and len(docs[0].sentences) == 4
    with pytest.raises(DataError, match="no 'article' field"):
        load_documents(docs_file)
    plain = tmp_path / "dlg.jsonl"
    plain.write_text('{"id": "c", "turns": ["hi there", "hello you", "how are you"]}\n')
    assert load_dialogues(plain)[0].turns == ["hi there", "hello you", "how are you"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json}\n")
    with pytest.raises(DataError, match="bad.jsonl:1"):
        load_documents(bad)
    with pytest.raises(DataError, match="does not exist"):
        load_documents(tmp_path / "missing.jsonl")
    recs = build_pseudo_data(
        summarization=[docs_file],
        dimensions=["summarization/fluency"],
        seed=0,
        document_fields={"article_field": "text", "summary_fields": ["abstract"]},
        options={"summarization/fluency": {"min_words": 1}},
    )
    assert recs == []  # one-word summary sentences cannot be perturbed: nothing, rather than bad negatives
    with pytest.raises(ValueError, match="needs an antonym list"):
        build_pseudo_data(
            summarization=[docs_file],
            dimensions=["summarization/consistency"],
            document_fields={"article_field": "text", "summary_fields": ["abstract"]},
        )
    with pytest.raises(ValueError, match="unknown pseudo-data dimension"):
        build_pseudo_data(dimensions=["summarization/beauty"])
