"""Meta-evaluation: correlation levels on a hand-computed dataset, constant-group skipping, bootstrap, errors."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from pytest_nlgeval.cli import main
from pytest_nlgeval.metaeval import (
    MetaEvalError,
    MetricSpec,
    correlate,
    load_records,
    meta_evaluate,
    parse_records,
)

# three documents x four systems; d3's human scores are constant, so summary level must skip it
METRIC = {"d1": [1, 2, 3, 4], "d2": [4, 3, 2, 1], "d3": [1, 2, 3, 4]}
HUMAN = {"d1": [1, 3, 2, 4], "d2": [1, 2, 3, 4], "d3": [2, 2, 2, 2]}
SYSTEMS = ["A", "B", "C", "D"]


def _records():
    recs = []
    for d in METRIC:
        for s, m, h in zip(SYSTEMS, METRIC[d], HUMAN[d]):
            recs.append(
                {
                    "doc_id": d,
                    "system_id": s,
                    "source": f"source of {d}",
                    "reference": f"ref {d}",
                    "system_output": f"{s} output for {d}",
                    "scores": {"quality": h, "other": m * h},
                    "predict_scores": m,
                }
            )
    return recs


def _arrays():
    x = np.array([v for d in METRIC for v in METRIC[d]], float)
    y = np.array([v for d in HUMAN for v in HUMAN[d]], float)
    return x, y, [d for d in METRIC for _ in SYSTEMS], SYSTEMS * 3


def test_sample_level_hand_computed():
    c = correlate([1, 2, 3, 4], [1, 3, 2, 4], "sample", n_bootstrap=0)
    # Spearman = 1 - 6 * sum d^2 / (n (n^2 - 1)) = 1 - 12/60; Kendall = (5 - 1) / 6
    assert (c.pearson, c.spearman, c.kendall) == pytest.approx((0.8, 0.8, 2 / 3))
    assert c.n == 4 and c.intervals == {}


def test_sample_level_pools_everything_like_scipy():
    x, y, docs, _ = _arrays()
    c = correlate(x, y, "sample", docs, n_bootstrap=0)
    assert c.pearson == pytest.approx(stats.pearsonr(x, y)[0])
    assert c.spearman == pytest.approx(stats.spearmanr(x, y)[0])
    assert c.kendall == pytest.approx(stats.kendalltau(x, y)[0])
    assert c.n == 12


def test_summary_level_averages_documents_and_skips_constant_ones():
    x, y, docs, _ = _arrays()
    c = correlate(x, y, "summary", docs, n_bootstrap=0)
    # d1: 0.8 / 0.8 / 2/3; d2: -1 / -1 / -1; d3 skipped (constant human scores)
    assert c.n == 2 and c.skipped == 1
    assert c.pearson == pytest.approx((0.8 - 1) / 2)
    assert c.spearman == pytest.approx((0.8 - 1) / 2)
    assert c.kendall == pytest.approx((2 / 3 - 1) / 2)


def test_summary_level_skips_constant_metric_groups_too():
    c = correlate([1, 1, 1, 1, 2, 3], [1, 2, 3, 4, 5, 6], "summary", ["a"] * 4 + ["b"] * 2, n_bootstrap=0)
    assert c.skipped == 1 and c.n == 1 and c.spearman == pytest.approx(1.0)


def test_summary_level_with_every_group_constant_is_nan_not_a_crash():
    c = correlate([1, 1, 2, 2], [3, 4, 5, 6], "summary", ["a", "a", "b", "b"], n_bootstrap=50)
    assert c.n == 0 and c.skipped == 2 and math.isnan(c.spearman)
    assert all(math.isnan(lo) for lo, _ in c.intervals.values())


def test_system_level_hand_computed():
    x, y, docs, systems = _arrays()
    c = correlate(x, y, "system", docs, systems, n_bootstrap=0)
    # system means: metric 2, 7/3, 8/3, 3; human 4/3, 7/3, 7/3, 10/3
    assert c.n == 4
    assert c.pearson == pytest.approx(6 / math.sqrt(40))
    assert c.spearman == pytest.approx(4.5 / math.sqrt(22.5))
    assert c.kendall == pytest.approx(5 / math.sqrt(30))  # tau-b with one tie in the human means


def test_bootstrap_is_deterministic_under_a_seed():
    x, y, docs, systems = _arrays()
    for level in ("sample", "summary", "system"):
        a = correlate(x, y, level, docs, systems, n_bootstrap=100, seed=7)
        b = correlate(x, y, level, docs, systems, n_bootstrap=100, seed=7)
        assert a.intervals == b.intervals
        assert set(a.intervals) == {"pearson", "spearman", "kendall"}
    rng = np.random.default_rng(0)
    big_x = rng.normal(size=200)
    big_y = big_x + rng.normal(size=200)
    ids = [str(i // 5) for i in range(200)]
    a = correlate(big_x, big_y, "sample", ids, n_bootstrap=200, seed=1)
    c = correlate(big_x, big_y, "sample", ids, n_bootstrap=200, seed=2)
    assert a.intervals != c.intervals
    lo, hi = a.intervals["pearson"]
    assert lo < a.pearson < hi and hi - lo < 0.4


@pytest.mark.parametrize("n", [5, 40, 200])
def test_bootstrap_fast_correlations_equal_scipy(n):
    from pytest_nlgeval.metaeval.statistics import _fast_corr3

    rng = np.random.default_rng(n)
    x = rng.integers(0, 6, size=n).astype(float)  # many ties, like resampled data
    y = x + rng.integers(0, 4, size=n)
    expected = (stats.pearsonr(x, y)[0], stats.spearmanr(x, y)[0], stats.kendalltau(x, y)[0])
    assert _fast_corr3(x, y) == pytest.approx(expected, abs=1e-12)


def test_summary_bootstrap_stays_within_the_document_correlations():
    x, y, docs, _ = _arrays()
    c = correlate(x, y, "summary", docs, n_bootstrap=500, seed=0)
    lo, hi = c.intervals["spearman"]
    assert -1 <= lo <= c.spearman <= hi <= 0.8 and lo < hi


def test_meta_evaluate_with_precomputed_scores_and_tables():
    result = meta_evaluate(_records(), ["predict_scores"], "summary", n_bootstrap=100)
    q = result.get("predict_scores", "quality")
    assert q.spearman == pytest.approx(-0.1) and q.skipped == 1
    assert [r.dimension for r in result.rows] == ["quality", "other"]
    data = json.loads(result.to_json())
    assert data["level"] == "summary" and data["bootstrap"]["n"] == 100
    assert data["rows"][0]["spearman"] == pytest.approx(-0.1)
    assert "| predict_scores | quality | 2 (-1) |" in result.to_markdown()
    table = result.to_table()
    assert "predict_scores" in table and "summary-level correlations on 12 records" in table


def test_precomputed_scores_per_dimension():
    recs = _records()
    for r in recs:
        r["predict_scores"] = {"quality": r["predict_scores"], "other": -r["predict_scores"]}
    result = meta_evaluate(recs, ["predict_scores", "predict_scores.quality"], "system", n_bootstrap=0)
    assert result.get("predict_scores", "quality").pearson == pytest.approx(6 / math.sqrt(40))
    assert result.get("predict_scores", "other").pearson == pytest.approx(
        -result.get("predict_scores.quality", "other").pearson
    )


def test_meta_evaluate_runs_bank_metrics_like_scipy():
    recs = _records()
    words = ["a", "a b c", "a b", "a b c d e"]
    for i, r in enumerate(recs):
        r["system_output"] = words[i % 4] + f" doc{i // 4}"
    result = meta_evaluate(recs, ["length"], "sample", dimensions=["quality"], n_bootstrap=0)
    lengths = [len(r["system_output"].split()) for r in recs]
    human = [r["scores"]["quality"] for r in recs]
    assert result.get("length", "quality").kendall == pytest.approx(stats.kendalltau(lengths, human)[0])
    assert result.signatures["length"].startswith("length|unit:words")


def test_parallel_scoring_equals_serial():
    recs = _records()
    for i, r in enumerate(recs):
        r["system_output"] = " ".join(["ref", r["doc_id"], "x" * (i % 4 + 1)][: i % 3 + 1])
    serial = meta_evaluate(recs, ["chrf_pp"], "sample", dimensions=["quality"], n_bootstrap=0)
    parallel = meta_evaluate(recs, ["chrf_pp"], "sample", dimensions=["quality"], n_bootstrap=0, jobs=2)
    assert parallel.rows == serial.rows
    from pytest_nlgeval.metaeval import compute_metric_values

    parsed = parse_records(recs)
    serial_values = list(compute_metric_values(parsed, "chrf_pp").values)
    assert len(serial_values) == 12 and len(set(serial_values)) > 1
    assert list(compute_metric_values(parsed, "chrf_pp", jobs=3).values) == pytest.approx(serial_values)
    with pytest.raises(MetaEvalError, match="jobs"):
        meta_evaluate(recs, ["length"], "sample", jobs=0)


def test_metric_options_are_parsed():
    spec = MetricSpec.parse("rouge2:multi_ref=mean,use_stemmer=true")
    assert spec.name == "rouge2" and spec.options == {"multi_ref": "mean", "use_stemmer": True}
    recs = _records()
    result = meta_evaluate(recs, [spec], "sample", dimensions=["quality"], n_bootstrap=0)
    assert "rouge2:multi_ref=mean,use_stemmer=True" in result.signatures
    assert "refs:mean" in result.signatures["rouge2:multi_ref=mean,use_stemmer=True"]
    with pytest.raises(MetaEvalError, match="not key=value"):
        MetricSpec.parse("rouge2:mean")


def test_errors_name_record_and_field():
    recs = _records()
    del recs[5]["system_output"]
    with pytest.raises(MetaEvalError, match=r"record 5 \(doc_id='d2', system_id='B'\): missing field 'system_output'"):
        parse_records(recs)
    recs = _records()
    recs[3]["scores"]["quality"] = "high"
    with pytest.raises(MetaEvalError, match=r"record 3 .*'scores.quality' must be a number"):
        parse_records(recs)
    recs = _records()
    recs[2]["scores"] = {"other": 1}
    with pytest.raises(MetaEvalError, match=r"record 2.*no 'quality' entry"):
        meta_evaluate(recs, ["predict_scores"], "sample", n_bootstrap=0)
    recs = _records()
    del recs[4]["reference"]
    with pytest.raises(MetaEvalError, match=r"record 4 .*metric 'rouge2' needs references"):
        meta_evaluate(recs, ["rouge2"], "sample", n_bootstrap=0)
    recs = _records()
    del recs[0]["doc_id"]
    with pytest.raises(MetaEvalError, match=r"record 0.*needs field 'doc_id'"):
        meta_evaluate(recs, ["predict_scores"], "summary", n_bootstrap=0)
    recs = _records()
    del recs[7]["predict_scores"]
    with pytest.raises(MetaEvalError, match=r"record 7.*missing field 'predict_scores'"):
        meta_evaluate(recs, ["predict_scores"], "sample", n_bootstrap=0)
    with pytest.raises(MetaEvalError, match="unknown level"):
        meta_evaluate(_records(), ["predict_scores"], "corpus")
    with pytest.raises(MetaEvalError, match="unknown metric 'rogue2'"):
        meta_evaluate(_records(), ["rogue2"], "sample")
    with pytest.raises(MetaEvalError, match="expected a JSON list"):
        parse_records({"records": []})
    recs = _records()
    recs[1]["scores"]["quality"] = float("nan")
    with pytest.raises(MetaEvalError, match=r"record 1.*finite"):
        parse_records(recs)


def test_load_records_json_and_jsonl(tmp_path):
    recs = _records()
    (tmp_path / "d.json").write_text(json.dumps(recs))
    (tmp_path / "d.jsonl").write_text("\n".join(json.dumps(r) for r in recs))
    assert load_records(tmp_path / "d.json") == load_records(tmp_path / "d.jsonl")
    loaded = load_records(tmp_path / "d.json")[0]
    assert loaded.references == ("ref d1",) and loaded.doc_id == "d1"
    (tmp_path / "bad.json").write_text("[{,}]")
    with pytest.raises(MetaEvalError, match="bad.json:1: not valid JSON"):
        load_records(tmp_path / "bad.json")
    with pytest.raises(MetaEvalError, match="missing.json does not exist"):
        load_records(tmp_path / "missing.json")


def test_cli_meta_eval(tmp_path, capsys):
    path = tmp_path / "data.json"
    path.write_text(json.dumps(_records()))
    assert (
        main(
            [
                "meta-eval",
                str(path),
                "--metric",
                "predict_scores",
                "--level",
                "system",
                "--format",
                "json",
                "--bootstrap",
                "50",
                "-d",
                "quality",
            ]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["rows"][0]["pearson"] == pytest.approx(6 / math.sqrt(40))
    assert len(data["rows"][0]["intervals"]["kendall"]) == 2
    out_md = tmp_path / "r.md"
    assert (
        main(
            [
                "meta-eval",
                str(path),
                "-m",
                "predict_scores",
                "length",
                "--format",
                "markdown",
                "--bootstrap",
                "0",
                "-o",
                str(out_md),
            ]
        )
        == 0
    )
    assert out_md.read_text().startswith("| metric | dimension | docs |")
    capsys.readouterr()
    assert main(["meta-eval", str(path), "--metric", "rouge2:multi_ref=mean", "--bootstrap", "20"]) == 0
    assert "rouge2|measure:f|stem:no|refs:mean" in capsys.readouterr().out
    recs = _records()
    recs[2]["scores"]["quality"] = None
    path.write_text(json.dumps(recs))
    assert main(["meta-eval", str(path), "--metric", "length"]) == 2
    assert "record 2" in capsys.readouterr().err


# -- an evaluator's rows (--model) ------------------------------------------------------------------------------
def _rated_summaries():
    docs = {
        "d1": "The bridge reopened on Monday after repairs. Traffic was light. Officials were pleased.",
        "d2": "A storm hit the coast overnight. Power was cut to many homes. Crews worked until dawn.",
    }
    outputs = [
        "The bridge reopened.",
        "Traffic was heavy.",
        "Officials were angry. The bridge is closed.",
        "A storm hit.",
        "Power was cut.",
        "Crews slept.",
    ]
    recs = []
    for k, out in enumerate(outputs):
        d = "d1" if k < 3 else "d2"
        recs.append(
            {
                "doc_id": d,
                "system_id": f"S{k % 3}",
                "source": docs[d],
                "references": [f"ref {d}", "other"],
                "system_output": out,
                "scores": {"consistency": [5, 1, 2, 5, 4, 1][k], "fluency": [3, 4, 5, 4, 3, 5][k]},
            }
        )
    return recs


def test_evaluator_rows_match_the_evaluator_scores(tiny_t5_model):
    from pytest_nlgeval.core.evaluator import Evaluator
    from pytest_nlgeval.metaeval import evaluator_values

    records = parse_records(_rated_summaries())
    mv = evaluator_values(
        records,
        str(tiny_t5_model),
        ["consistency", "fluency"],
        source_windows="off",
        evaluator_options={"cache": False, "device": "cpu"},
    )
    ev = Evaluator(tiny_t5_model, device="cpu", cache=False, source_windows="off")
    expected = ev.score_batch([r.output for r in records], "consistency", sources=[r.source for r in records])
    assert list(mv.values["consistency"]) == pytest.approx(expected, abs=1e-9)
    assert "windows:off" in mv.signature and mv.label.endswith("(no windows)")
    result = meta_evaluate(records, [mv], "summary", n_bootstrap=50)
    row = result.get(mv.label, "consistency")
    per_doc = [stats.spearmanr(expected[i : i + 3], [5, 1, 2, 5, 4, 1][i : i + 3])[0] for i in (0, 3)]
    assert row.spearman == pytest.approx(np.nanmean(per_doc))


def test_evaluator_rows_name_a_human_dimension_without_a_match(tiny_t5_model):
    from pytest_nlgeval.metaeval import evaluator_values

    records = parse_records([{**r, "scores": {"overall_quality": 3}} for r in _rated_summaries()])
    with pytest.raises(MetaEvalError, match="'overall_quality' has no evaluator dimension.*--dimension"):
        evaluator_values(records, str(tiny_t5_model), ["overall_quality"], evaluator_options={"cache": False})


def test_cli_meta_eval_model_rows_wide_from_gzip(tiny_t5_model, tmp_path, capsys):
    import gzip

    path = tmp_path / "rated.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write("\n".join(json.dumps(r) for r in _rated_summaries()) + "\n")
    code = main(
        [
            "meta-eval",
            str(path),
            "--model",
            str(tiny_t5_model),
            "--metric",
            "rouge2:multi_ref=mean",
            "--wide",
            "--bootstrap",
            "20",
            "--device",
            "cpu",
            "--cache-dir",
            str(tmp_path / "cache"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:5] == ["spearman", "(summary", "level)", "consistency", "fluency"]
    assert any(line.startswith(f"{tiny_t5_model} (windows)") for line in lines)
    assert any(line.startswith(f"{tiny_t5_model} (no windows)") for line in lines)
    assert any(line.startswith("kendall") for line in lines) and "avg" in lines[0]
    assert main(["meta-eval", str(path)]) == 2
    assert "--metric NAME" in capsys.readouterr().err


def test_meta_eval_of_a_rated_rag_file(tmp_path, capsys):
    """A user's own rated RAG answers (question, contexts, answer, scores) against the rag dimensions."""
    from pytest_nlgeval.cli import main
    from pytest_nlgeval.metaeval.liveness import load_texts

    items = load_texts()["rag"][:5]
    rows = []
    for k, item in enumerate(items):
        other = items[(k + 1) % len(items)]
        for system, answer, rating in (("good", item["answer"], 5), ("off", other["answer"], 1)):
            rows.append(
                {
                    "doc_id": item["id"],
                    "system_id": system,
                    "question": item["question"],
                    "contexts": item["contexts"],
                    "system_output": answer,
                    "reference": item["reference"],
                    "scores": {"faithfulness": rating, "answer_relevance": rating},
                }
            )
    data = tmp_path / "rated.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    out = tmp_path / "result.json"
    assert (
        main(
            [
                "meta-eval",
                str(data),
                "--model",
                "default",
                "--task",
                "rag",
                "--level",
                "sample",
                "--source-windows",
                "auto",
                "--bootstrap",
                "50",
                "--format",
                "json",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    result = json.loads(out.read_text())
    text = json.dumps(result)
    assert "faithfulness" in text and "answer_relevance" in text and "task:rag" in text
    capsys.readouterr()
    rows[3].pop("contexts")
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    assert (
        main(
            [
                "meta-eval",
                str(data),
                "--model",
                "default",
                "--task",
                "rag",
                "--level",
                "sample",
                "--source-windows",
                "auto",
                "-d",
                "faithfulness",
            ]
        )
        == 2
    )
    assert "rag/faithfulness needs the record's 'contexts' (a list of retrieved passages)" in capsys.readouterr().err
