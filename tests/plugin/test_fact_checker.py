"""An external fact checker (a claim-support folder of MiniCheck or HHEM-2.1-Open) reads the claims of the fact
dimensions when one option names it; every other dimension keeps the model's, and the explicit checks still cap a
claim and name what failed."""

from __future__ import annotations

import json

import pytest

from tiny_checkers import build_flan_t5

pytestmark = pytest.mark.usefixtures("recorder")

SOURCE = (
    "The company reported a sharp rise in quarterly profits, driven by strong demand for its cloud services. "
    "Officials said the bridge would reopen next week after repairs. Prices of wheat fell by 37 percent."
)


@pytest.fixture(scope="module")
def checker_folder(tmp_path_factory):
    from nlgeval_training.checkers import export_checker

    root = tmp_path_factory.mktemp("checker")
    checkpoint = build_flan_t5(root / "ckpt")
    export_checker(checkpoint, root / "minicheck-ft5", checker="minicheck-flan-t5-large", int8=True)
    return root / "minicheck-ft5"


@pytest.fixture(scope="module")
def evaluators(checker_folder):
    from pytest_nlgeval.core.evaluator import Evaluator

    plain = Evaluator(cache=False, device="cpu", threads=1)
    checked = Evaluator(cache=False, device="cpu", threads=1, fact_checker=checker_folder)
    yield plain, checked
    plain.close()
    checked.close()


def _checker(folder):
    from nlgeval_runtime.claim_support import load_claim_checker

    return load_claim_checker(folder, device="cpu", precision="fp32")


@pytest.mark.parametrize(("task", "argument"), [("fact", "source"), ("summarization", "source"), ("rag", "contexts")])
def test_a_fact_dimension_reads_its_claims_with_the_checker(evaluators, checker_folder, task, argument):
    _, checked = evaluators
    claim = "Profits rose because of strong cloud demand."
    name = "faithfulness" if task == "rag" else "consistency"
    inputs = {"contexts": [SOURCE.split(". ")]} if argument == "contexts" else {"source": SOURCE}
    extra = {"question": "Why did profits rise?"} if task == "rag" else {}
    score = checked.evaluate([claim], name, task=task, **inputs, **extra)[0]
    document = "\n".join(SOURCE.split(". ")) if task == "rag" else SOURCE
    expected = _checker(checker_folder).support([document], [claim])[0]
    assert float(score) == pytest.approx(expected.score, abs=1e-6)
    unit = score.details["units"][0]["window"]
    assert unit["checker"] == "minicheck-flan-t5-large" and unit["claim"]["head"] == pytest.approx(expected.score)
    assert any("minicheck-flan-t5-large: support" in line for line in score.explanation())


def test_an_explicit_check_still_caps_and_names_the_claim(evaluators):
    _, checked = evaluators
    score = checked.score("Prices of wheat fell by 47 percent.", "consistency", task="fact", source=SOURCE)
    assert float(score) <= 0.2
    assert any("unsupported" in line and "47 percent" in line for line in score.explanation())


def test_every_other_dimension_keeps_the_model(evaluators):
    plain, checked = evaluators
    summary = "Profits rose. The bridge reopens next week."
    for name in ("fluency", "coherence", "relevance"):
        a = plain.score(summary, name, source=SOURCE, reference=summary)
        b = checked.score(summary, name, source=SOURCE, reference=summary)
        assert float(a) == float(b), name
    assert plain.fingerprint_id != checked.fingerprint_id, "scores read by the checker are never cached as the model's"
    assert "fact_checker" in checked.fingerprint and "fact_checker" not in plain.fingerprint


def test_groundedness_holds_claims_about_the_fact_to_the_checker(evaluators, checker_folder):
    plain, checked = evaluators
    fact = "The parcel left the depot in Leeds on Monday and arrives on Thursday."
    reply = "Your parcel left the depot in Leeds on Monday and arrives on Thursday."
    history = "Where is my parcel?"
    base = plain.score(reply, "groundedness", task="dialogue", fact=fact, context=history)
    read = checked.score(reply, "groundedness", task="dialogue", fact=fact, context=history)
    support = _checker(checker_folder).support([fact], [reply])[0].score
    if support < 0.5:
        assert float(read) == pytest.approx(min(float(base), 0.2))
        assert any("finds no support in the fact" in line for line in read.explanation())
    else:
        assert float(read) == float(base)
    wrong = checked.score("It arrives on Friday.", "groundedness", task="dialogue", fact=fact, context=history)
    assert float(wrong) <= 0.2 and any("Friday" in line for line in wrong.explanation())


def run(pytester, *args):
    return pytester.runpytest("-p", "no:cacheprovider", "--nlgeval-no-cache", *args)


def test_the_plugin_option_points_the_fact_dimensions_at_the_checker(pytester, checker_folder):
    expected = _checker(checker_folder).support([SOURCE], ["Profits rose because of strong cloud demand."])[0]
    pytester.makepyfile(
        test_facts=f"""
        import pytest
        from pytest_nlgeval import assert_dimension

        SOURCE = {SOURCE!r}

        def test_consistency(nlgeval):
            score = assert_dimension("Profits rose because of strong cloud demand.", "consistency", task="fact",
                                     source=SOURCE)
            assert float(score) == pytest.approx({expected.score!r}, abs=1e-6)
            assert nlgeval.fact_checker is not None

        def test_wrong_figure():
            assert_dimension("Prices of wheat fell by 47 percent.", "consistency", task="fact", source=SOURCE) >= 0.5

        def test_fluency_is_the_model_s():
            assert_dimension("The bridge reopens next week.", "fluency") > 0.0
        """
    )
    result = run(pytester, f"--nlgeval-fact-checker={checker_folder}", "--nlgeval-json=results.json")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*unsupported*47 percent*"])
    data = json.loads((pytester.path / "results.json").read_text())
    fingerprints = (
        [json.dumps(e) for e in data.get("evaluators", {}).values()]
        if isinstance(data.get("evaluators"), dict)
        else [json.dumps(e) for e in data.get("evaluators", [])]
    )
    assert any("fact_checker" in f for f in fingerprints)


def test_the_ini_key_is_read_relative_to_the_rootdir(pytester, checker_folder):
    import shutil

    shutil.copytree(checker_folder, pytester.path / "checkers" / "ft5")
    pytester.makeini("[pytest]\nnlgeval_fact_checker = checkers/ft5\n")
    pytester.makepyfile(
        test_ini="""
        def test_ini(nlgeval):
            assert nlgeval.fact_checker.endswith("ft5")
        """
    )
    run(pytester).assert_outcomes(passed=1)


def test_a_folder_that_is_not_a_checker_is_a_usage_error(pytester, tmp_path):
    from pathlib import Path

    embedded = Path(__file__).resolve().parents[2] / "runtime" / "nlgeval_runtime" / "embedded"
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = run(pytester, f"--nlgeval-fact-checker={embedded}")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*nlgeval_fact_checker*holds a 'boolqa' model, not a fact checker*"])
    result = run(pytester, f"--nlgeval-fact-checker={tmp_path / 'missing'}")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*nlgeval_fact_checker*does not exist*"])


def test_a_folder_without_a_declaration_has_its_fact_dimensions_read_by_the_checker(tiny_t5_model, checker_folder):
    from pytest_nlgeval.core.evaluator import Evaluator

    ev = Evaluator(tiny_t5_model, cache=False, device="cpu", fact_checker=checker_folder)
    summary = "Profits rose. The bridge reopens next week."
    score = ev.score(summary, "consistency", source=SOURCE)
    sentences = ["Profits rose.", "The bridge reopens next week."]
    expected = [s.score for s in _checker(checker_folder).support([SOURCE] * 2, sentences)]
    assert [u["score"] for u in score.details["units"]] == pytest.approx(expected, abs=1e-6)
    plain = Evaluator(tiny_t5_model, cache=False, device="cpu")
    assert float(ev.score(summary, "fluency")) == float(plain.score(summary, "fluency"))
