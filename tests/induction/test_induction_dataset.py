"""Labelled datasets: reading JSONL/CSV, label kinds, and errors that name the line and column."""

import json

import pytest

from pytest_nlgeval.induction.dataset import DatasetError, build_dataset, infer_label_kind, load_dataset


def write_jsonl(path, rows):
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_jsonl_rows_labels_and_kinds(tmp_path):
    rows = [
        {
            "input": f"q{i}",
            "output": f"a{i}",
            "references": [f"r{i}", f"s{i}"],
            "likert": 1 + i % 5,
            "thumbs": bool(i % 2),
            "score": 0.5 * i,
            "id": i,
        }
        for i in range(10)
    ]
    data = load_dataset(write_jsonl(tmp_path / "d.jsonl", rows), target="likert")
    assert len(data) == 10
    assert data.label_kinds == {"likert": "likert", "thumbs": "binary", "score": "numeric"}  # "id" is never a label
    assert data.labels("thumbs").tolist() == [0.0, 1.0] * 5
    assert data.references[3] == ["r3", "s3"] and data.inputs[2] == "q2"
    assert data.has_inputs and data.has_references
    assert (
        len(data.sha256) == 64
        and data.sha256 != load_dataset(write_jsonl(tmp_path / "e.jsonl", rows[:-1]), target="likert").sha256
    )


def test_csv_with_json_reference_list_and_word_labels(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text('output,references,ok\n"Hello, world","[""hi"", ""hey""]",yes\nBye,see you,no\n', encoding="utf-8")
    data = load_dataset(path, target="ok")
    assert data.outputs == ["Hello, world", "Bye"]
    assert data.references == [["hi", "hey"], ["see you"]]
    assert data.label_kind("ok") == "binary" and not data.has_inputs


@pytest.mark.parametrize(
    "row, message",
    [
        ({"output": "", "y": 1}, "line 2, column 'output': missing"),
        ({"output": "b", "y": "great"}, "line 2, column 'y': label not a number: 'great'"),
        ({"output": "b"}, "line 2, column 'y': label missing"),
        ({"output": "b", "y": 2, "input": ""}, "line 2, column 'input'"),
    ],
)
def test_errors_name_line_and_column(tmp_path, row, message):
    first = {"output": "a", "y": 1, **({"input": "q"} if "input" in row else {})}
    path = write_jsonl(tmp_path / "d.jsonl", [first, row])
    with pytest.raises(DatasetError) as err:
        load_dataset(path, target="y")
    assert message in str(err.value) and "d.jsonl" in str(err.value)


def test_invalid_json_line_and_unknown_target_and_file_type(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"output": "a", "y": 1}\n{"output": "b", "y": \n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"d.jsonl:2: not valid JSON"):
        load_dataset(path, target="y")
    ok = write_jsonl(tmp_path / "ok.jsonl", [{"output": "a", "y": 1}, {"output": "b", "y": 2}])
    with pytest.raises(DatasetError, match=r"no label column 'quality'"):
        load_dataset(ok, target="quality")
    with pytest.raises(DatasetError, match=r"unknown file type '.txt'"):
        (tmp_path / "d.txt").write_text("x")
        load_dataset(tmp_path / "d.txt")
    with pytest.raises(DatasetError, match="does not exist"):
        load_dataset(tmp_path / "missing.jsonl")


def test_csv_extra_fields_and_constant_labels(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("output,y\na,1\nb,2,oops\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"line 3: more fields than the header"):
        load_dataset(path, target="y")
    path.write_text("output,y\na,3\nb,3\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"column 'y': every row has the same label"):
        load_dataset(path, target="y")


def test_forced_kinds_are_checked_and_inference():
    records = [(1, {"output": "a", "y": 0.5}), (2, {"output": "b", "y": 1})]
    with pytest.raises(DatasetError, match=r"line 1, column 'y': 0.5 is not a binary label"):
        build_dataset(records, target="y", label_kinds={"y": "binary"})
    assert infer_label_kind([1, 2, 3, 4, 5]) == "likert"
    assert infer_label_kind([1, 100]) == "numeric"
    assert infer_label_kind([0, 1]) == "binary"


def test_split_is_seeded_and_disjoint():
    data = build_dataset([(i + 1, {"output": f"o{i}", "y": i % 5}) for i in range(20)], target="y")
    train, test = data.split(0.3, seed=1)
    assert len(train) == 14 and len(test) == 6
    assert not {e.line for e in train.examples} & {e.line for e in test.examples}
    again, _ = data.split(0.3, seed=1)
    assert [e.line for e in again.examples] == [e.line for e in train.examples]
    with pytest.raises(DatasetError, match="too few"):
        data.subset(range(5)).split(0.3)
