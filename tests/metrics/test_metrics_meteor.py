"""METEOR through NLTK with WordNet read from disk: a tiny hand-written WordNet, the real one when installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_nlgeval.metrics import MetricUnavailableError, get_metric
from pytest_nlgeval.metrics._wordnet import WordNetDB, find_wordnet_dir

LICENSE = "  1 This is a stand-in license header line (WordNet files start with such lines).\n"


def _write_wordnet(folder: Path, synsets: list[list[str]], exceptions: dict[str, str] | None = None) -> Path:
    """A WordNet-format database with the given noun synsets (offsets are byte offsets, as in WordNet)."""
    folder.mkdir(parents=True, exist_ok=True)
    for pos in ("verb", "adj", "adv"):
        (folder / f"index.{pos}").write_text(LICENSE)
        (folder / f"data.{pos}").write_text(LICENSE)
    data = LICENSE
    lemma_offsets: dict[str, list[int]] = {}
    for words in synsets:
        offset = len(data.encode())
        body = " ".join(f"{w} 0" for w in words)
        data += f"{offset:08d} 05 n {len(words):02x} {body} 000 | gloss\n"
        for w in words:
            lemma_offsets.setdefault(w, []).append(offset)
    (folder / "data.noun").write_text(data)
    index = LICENSE + "".join(
        f"{w} n {len(offs)} 0 {len(offs)} 0 {' '.join(f'{o:08d}' for o in offs)}\n"
        for w, offs in sorted(lemma_offsets.items())
    )
    (folder / "index.noun").write_text(index)
    (folder / "noun.exc").write_text("".join(f"{k} {v}\n" for k, v in (exceptions or {}).items()))
    return folder


def test_reader_follows_wordnet_morphology(tmp_path):
    wn = WordNetDB(
        _write_wordnet(tmp_path / "wn", [["cat", "feline(p)"], ["mouse", "computer_mouse"]], {"mice": "mouse"})
    )
    names = lambda w: sorted(lemma.name() for s in wn.synsets(w) for lemma in s.lemmas())  # noqa: E731
    assert names("cat") == ["cat", "feline"]  # position marker stripped
    assert names("cats") == ["cat", "feline"]  # detachment rule s -> ""
    assert names("Mice") == ["computer_mouse", "mouse"]  # exception list, lowercased
    assert names("dog") == []


def test_meteor_uses_synonyms_from_the_database(tmp_path):
    # NLTK looks synonyms up for the Porter stems left over from its stem stage: "puss" is its own stem
    same = _write_wordnet(tmp_path / "same", [["cat", "puss"]])
    apart = _write_wordnet(tmp_path / "apart", [["cat"], ["puss"]])
    out, ref = "the puss sat on the mat", "the cat sat on the mat"
    with_syn = get_metric("meteor", wordnet_dir=str(same)).score(out, references=ref)
    without = get_metric("meteor", wordnet_dir=str(apart)).score(out, references=ref)
    assert with_syn > without
    # all six words align in one chunk: Fmean = 1, penalty = 0.5 * (1/6)^3
    assert with_syn == pytest.approx(1 - 0.5 * (1 / 6) ** 3)
    m = get_metric("meteor", wordnet_dir=str(same))
    assert m.score("a b", references=["x y", "a b"]) == pytest.approx(1 - 0.5 * (1 / 2) ** 3)  # best reference
    assert f"wordnet:wn3.0@{same}" in m.signature and "nltk:" in m.signature


def test_missing_wordnet_is_a_clear_error(tmp_path):
    m = get_metric("meteor", wordnet_dir=str(tmp_path))
    with pytest.raises(MetricUnavailableError, match="apt-get install wordnet-base"):
        m.score("a", references="a")


@pytest.mark.skipif(
    find_wordnet_dir() is None, reason="WordNet 3.0 database not installed (apt-get install wordnet-base)"
)
def test_real_wordnet_matches_nltk_documented_value():
    # NLTK's meteor_score documentation example: 0.6944
    hyp = "It is a guide to action which ensures that the military always obeys the commands of the party"
    ref = "It is a guide to action that ensures that the military will forever heed Party commands"
    assert get_metric("meteor").score(hyp, references=[ref]) == pytest.approx(0.6944, abs=1e-4)
