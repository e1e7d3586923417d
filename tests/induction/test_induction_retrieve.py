"""Retrieval of bank metrics by BM25 over their metric cards, with an optional LLM rerank."""

import dspy
import pytest
from induction_fakes import RuleLM

from pytest_nlgeval.llm.cache import cached_lm
from pytest_nlgeval.induction.retrieve import QUERY_TEMPLATE, bm25_rank, retrieve_metrics, tokenize


def test_query_template_is_the_papers():
    assert QUERY_TEMPLATE.format(task="T", target="X") == (
        'I am looking for a metric to evaluate the following task: "T" In particular I care about "X".'
    )
    assert "looking" not in tokenize(QUERY_TEMPLATE)  # the template's own words carry no signal


def test_bm25_ranks_the_matching_document_first():
    docs = {
        "a": "n-gram overlap with reference translations, brevity penalty",
        "b": "readability grade level of sentences for children",
        "c": "distinct n-grams measure lexical diversity of stories",
    }
    assert [n for n, _ in bm25_rank("readability for children", docs)][0] == "b"
    assert [n for n, _ in bm25_rank("diversity of generated stories", docs)][0] == "c"


def test_retrieval_over_the_bank_cards():
    hits = retrieve_metrics("Write short stories", "lexical diversity, no repetition", k=5)
    assert len(hits) == 5 and [h.rank for h in hits] == list(range(5))
    assert {"distinct_1", "distinct_2"} <= {h.name for h in hits[:3]}
    kids = retrieve_metrics("Explain science to children", "readability", k=3)
    assert {"fkgl", "flesch_reading_ease"} <= {h.name for h in kids}
    allowed = retrieve_metrics("Explain science to children", "readability", k=3, allowed=lambda n: n != "fkgl")
    assert "fkgl" not in {h.name for h in allowed}
    with pytest.raises(ValueError, match="k must be"):
        retrieve_metrics("t", "x", k=0)


def test_llm_rerank_reorders_and_keeps_every_candidate(tmp_path):
    lm = cached_lm(RuleLM(), tmp_path)
    plain = retrieve_metrics("Write short stories", "diversity", k=4)
    reranked = retrieve_metrics("Write short stories", "diversity", k=4, rerank_lm=lm)
    assert [h.name for h in reranked] == [h.name for h in reversed(plain)]  # RuleLM returns them reversed
    assert any(h.reranked for h in reranked)
    broken = cached_lm(dspy.utils.DummyLM([{"ranking": "not a list"}]), tmp_path / "b")
    with pytest.warns(UserWarning, match="keeping the BM25 order"):
        kept = retrieve_metrics("Write short stories", "diversity", k=4, rerank_lm=broken)
    assert [h.name for h in kept] == [h.name for h in plain]
