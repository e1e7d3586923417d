"""MiniCheck's chunks are split into sentences as its authors split them, with NLTK's Punkt: the runtime's chunks
equal the authors' chunking (rewritten here from ``minicheck/inference.py``: ``sent_tokenize`` per line, a
``"\\n"`` between lines, sentences gathered while their count stays within the size, joined with spaces,
``" \\n "`` restored as a line break, stripped, empty chunks dropped), never the project's splitter; where Punkt
is not installed, the fingerprint says which splitter read the chunks.

NLTK's English Punkt parameters are data files that need not be installed; these tests give NLTK's Punkt
tokenizer parameters of their own, so they run everywhere and still go through NLTK's algorithm."""

from __future__ import annotations

import pytest

nltk_punkt = pytest.importorskip("nltk.tokenize.punkt")

from nlgeval_runtime import claim_support  # noqa: E402
from nlgeval_runtime.sentences import split_sentences  # noqa: E402

#: lines where Punkt and the project's splitter disagree on the sentences
DOCUMENT = (
    'Dr. Who arrived. "Go now!" he said. Then he left for the station on foot.\n'
    "The result was 3.5 percent (see Fig. 2). It rose again in the spring of that year.\n"
    "See e.g. the report. It is long and it covers every plant the company runs."
)


@pytest.fixture
def punkt(monkeypatch):
    parameters = nltk_punkt.PunktParameters()
    parameters.abbrev_types = {"dr"}
    tokenizer = nltk_punkt.PunktSentenceTokenizer(parameters)
    monkeypatch.setattr(claim_support, "_punkt", [tokenizer])
    return tokenizer


@pytest.fixture
def no_punkt(monkeypatch):
    monkeypatch.setattr(claim_support, "_punkt", [None])


def authors_chunks(doc: str, size: int, sent_tokenize) -> list[str]:
    """MiniCheck's chunking of ``doc`` by words (their Flan-T5 reading), from their description."""
    sentences: list[str] = []
    for block in doc.split("\n"):
        sentences += sent_tokenize(block)
        sentences.append("\n")
    sentences = sentences[:-1] or [""]
    chunks, current, words = [], [], 0
    for sentence in sentences:
        n = len(sentence.split())
        if words + n > size:
            chunks.append(" ".join(current))
            current, words = [sentence], n
        else:
            current.append(sentence)
            words += n
    if current:
        chunks.append(" ".join(current))
    chunks = [c.replace(" \n ", "\n").strip() for c in chunks]
    return [c for c in chunks if c]


def words(sentence: str) -> int:
    return len(sentence.split())


@pytest.mark.parametrize("size", [6, 9, 14, 40])
def test_chunks_follow_the_authors_punkt_split(punkt, size):
    runtime = claim_support.chunk_document(DOCUMENT, size, words)
    assert runtime == authors_chunks(DOCUMENT, size, punkt.tokenize)


def test_the_project_splitter_would_move_a_boundary_here(punkt):
    """The document is one where the splitters disagree, so the test above can tell them apart."""
    assert authors_chunks(DOCUMENT, 6, punkt.tokenize) != authors_chunks(DOCUMENT, 6, split_sentences)
    assert claim_support.chunk_document(DOCUMENT, 6, words) != authors_chunks(DOCUMENT, 6, split_sentences)


def test_the_splitter_is_named_by_the_reading(punkt):
    assert claim_support.sentence_splitter({"chunk": {"size": 400, "count": "tokens"}})[0] == "punkt"
    assert claim_support.sentence_splitter({"chunk": None}) == (None, None)


def test_without_punkt_the_projects_splitter_is_named(no_punkt):
    name, split = claim_support.sentence_splitter({"chunk": {"size": 400, "count": "words"}})
    assert name == "nlgeval" and split is split_sentences
    assert claim_support.chunk_document(DOCUMENT, 6, words) == authors_chunks(DOCUMENT, 6, split_sentences)


def test_the_checkers_fingerprint_names_its_splitter(monkeypatch, tmp_path):
    pytest.importorskip("torch")
    from tiny_checkers import build_flan_t5

    from nlgeval_training.checkers import export_checker
    from pytest_nlgeval.core.evaluator import Evaluator

    export_checker(build_flan_t5(tmp_path / "ckpt"), tmp_path / "checker", checker="minicheck-flan-t5-large")
    prints = {}
    for name, tokenizer in (("punkt", nltk_punkt.PunktSentenceTokenizer()), ("nlgeval", None)):
        monkeypatch.setattr(claim_support, "_punkt", [tokenizer])
        checker = claim_support.load_claim_checker(tmp_path / "checker", device="cpu")
        assert checker.fingerprint["sentences"] == name
        ev = Evaluator(cache=False, device="cpu", fact_checker=tmp_path / "checker")
        assert ev.fingerprint["fact_checker"]["sentences"] == name
        prints[name] = (checker.fingerprint_id, ev.fingerprint_id)
    assert prints["punkt"][0] != prints["nlgeval"][0] and prints["punkt"][1] != prints["nlgeval"][1]
