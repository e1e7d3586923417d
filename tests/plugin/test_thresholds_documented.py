"""One recommended threshold per dimension, stated one way: every threshold number in the README, docs/, the
examples and the package's docstrings is the table's (``pytest_nlgeval.core.thresholds``), whatever the table
says today; the docstrings describe the aggregation the embedded model declares; a well-formed short summary
clears the fluency threshold."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

import pytest_nlgeval
from pytest_nlgeval.core.thresholds import THRESHOLDS, recommended_threshold

ROOT = Path(__file__).resolve().parents[2]
TASK_OF_FOLDER = {"summarization": "summarization", "dialogue": "dialogue", "data2text": "data2text"}
TASKS = ("summarization", "dialogue", "data2text", "fact", "rag")
DIMENSIONS = sorted({key.split("/")[1] for key in THRESHOLDS}, key=len, reverse=True)
#: a comparison of one output's dimension score with a number, as code: ``assert_dimension(...) > 0.45``,
#: ``assert_dimensions(...).min() > 0.45``, ``.fraction(above=0.45)``, ``check_dimension(..., above=0.45)``
CALL = re.compile(r"\b(?P<fn>assert_dimensions?|check_dimension)\(")
#: threshold statements in prose, in a sentence that says "threshold": ``dialogue/coherence 0.35``,
#: ``fact consistency 0.25``, ``a dialogue coherence threshold of 0.5``, ``0.5 as a dialogue coherence threshold``
_TASK_WORDS = r"(?:summarization|summarisation|dialogue|data2text|data-to-text|fact|rag)"
_DIM_WORDS = "|".join(DIMENSIONS)
PROSE = [
    re.compile(rf"`?(?P<task>{_TASK_WORDS})/(?P<dim>{_DIM_WORDS})`?[ :(]{{1,3}}(?:>=?\s*)?(?P<value>[01]\.\d+)"),
    re.compile(
        rf"\b(?P<task>{_TASK_WORDS}) (?P<dim>{_DIM_WORDS})(?: threshold)?(?: (?:of|is|at))?,? (?:>\s*)?"
        rf"\(?(?P<value>[01]\.\d+)\b(?!\s*(?:\[|s\b|ms\b|x\b|%))"
    ),
    re.compile(rf"(?P<value>\b[01]\.\d+) as (?:an? |the )?(?P<task>{_TASK_WORDS}) (?P<dim>{_DIM_WORDS}) threshold"),
    re.compile(
        rf"\b(?P<task>{_TASK_WORDS}) (?P<dim>{_DIM_WORDS})\b[^.;]{{0,60}}?\bthreshold,? (?:of |is |at )?"
        rf"(?P<value>[01]\.\d+)\b(?!\s*(?:\[|s\b|ms\b|x\b|%))"
    ),
]
#: "the documented/recommended threshold of 0.7" names no dimension: a number that is no dimension's threshold
BARE = re.compile(r"(?:documented|recommended) thresholds? (?:of |is |at )?(?P<value>[01]\.\d+)")
TASK_ALIASES = {"summarisation": "summarization", "data-to-text": "data2text"}


def _call_end(text: str, start: int) -> int:
    """The index just past the parenthesis that closes the call opened at ``text[start - 1]``."""
    depth = 1
    i = start
    while i < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    return i


def code_thresholds(text: str) -> list[tuple[str, float, str]]:
    """(``task/dimension``, value, snippet) of every dimension comparison written as code in ``text``."""
    found = []
    for m in CALL.finditer(text):
        end = _call_end(text, m.end())
        call = text[m.start() : end]
        name = re.search(r"\(\s*[^,()]*(?:\([^()]*\))?[^,()]*,\s*\"(\w+)\"", call)
        if name is None or name[1] not in DIMENSIONS:
            continue  # overall, a custom dimension, or a call whose dimension is a variable
        task = re.search(r"task=\"(\w+)\"", call)
        key = f"{task[1] if task else _default_task(text, m.start())}/{name[1]}"
        values = [float(v) for v in re.findall(r"\babove=([01]\.\d+|1)\b", call)]
        rest = text[end : end + 60]
        compared = re.match(r"(?:\.(?:min|__getitem__)\(\)|\[\w+\])?\s*(>=?)\s*([01]\.\d+|1)\b", rest)
        if compared and m["fn"] != "check_dimension":
            values.append(float(compared[2]))
        fraction = re.match(r"\.fraction\(above=([01]\.\d+)\)", rest)
        if fraction:
            values.append(float(fraction[1]))
        if m["fn"] == "check_dimension" and not values and key in THRESHOLDS:
            values.append(THRESHOLDS[key].value)  # the default: the table's, by construction
        for value in values:
            if 0.001 < value < 0.999:  # 0.999 / 0.001: a demonstration of a failure message
                found.append((key, value, call[:80]))
    return found


def _default_task(text: str, position: int) -> str:
    """The task of a call without ``task=``: the marker of the test around it, else summarization."""
    marker = list(re.finditer(r"mark\.nlgeval\(\s*(?:task=)?\"(\w+)\"", text[:position]))
    return marker[-1][1] if marker else "summarization"


def prose_thresholds(text: str) -> list[tuple[str | None, float, str]]:
    """(``task/dimension`` or None, value, sentence) of the thresholds stated in prose."""
    found: list[tuple[str | None, float, str]] = []
    for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z`(])|\n\n", text):
        if "threshold" not in sentence:
            continue
        flat = " ".join(sentence.split())
        seen = set()
        for pattern in PROSE:
            for m in pattern.finditer(flat):
                task = TASK_ALIASES.get(m["task"], m["task"])
                key = f"{task}/{m['dim']}"
                if key in THRESHOLDS and m.start("value") not in seen:
                    seen.add(m.start("value"))
                    found.append((key, float(m["value"]), flat[:160]))
        for m in BARE.finditer(flat):
            if m.start("value") not in seen:
                found.append((None, float(m["value"]), flat[:160]))
    return found


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "action").glob("*.md"))]


def docstrings() -> list[tuple[str, str]]:
    """(where, text) of every module, class and function docstring of the plugin package."""
    found = []
    for path in sorted(Path(pytest_nlgeval.__file__).parent.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc:
                    found.append((f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 1)}", doc))
    return found


def _wrong(where: str, text: str) -> list[str]:
    problems = []
    for key, value, snippet in code_thresholds(text):
        if key in THRESHOLDS and value != THRESHOLDS[key].value:
            problems.append(f"{where}: {key} at {value}, the table says {THRESHOLDS[key].value}: {snippet}")
    for key, value, sentence in prose_thresholds(text):
        if key is None:
            if value not in {t.value for t in THRESHOLDS.values()}:
                problems.append(f"{where}: a threshold of {value} is no dimension's: {sentence}")
        elif value != THRESHOLDS[key].value:
            problems.append(f"{where}: {key} at {value}, the table says {THRESHOLDS[key].value}: {sentence}")
    return problems


def test_the_readme_table_is_the_code_table():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for key, t in THRESHOLDS.items():
        row = f"| {key} | {t.value} | {t.false_alarms:.0%} | {t.caught:.0%} | {t.good} / {t.damaged} |"
        assert row in readme, f"README lacks the row {row!r}"


def test_every_table_row_anywhere_is_the_code_table():
    row = re.compile(r"^\| (?P<key>\w+/\w+) \| (?P<value>[01](?:\.\d+)?) \|", re.MULTILINE)
    problems = []
    for path in documents():
        for m in row.finditer(path.read_text(encoding="utf-8")):
            t = THRESHOLDS.get(m["key"])
            if t is not None and float(m["value"]) != t.value:
                problems.append(f"{path.name}: | {m['key']} | {m['value']} |, the table says {t.value}")
    assert problems == []


def test_every_threshold_in_the_readme_and_docs_is_the_tables():
    problems = []
    checked = 0
    for path in documents():
        text = path.read_text(encoding="utf-8")
        checked += len(code_thresholds(text)) + len(prose_thresholds(text))
        problems += _wrong(str(path.relative_to(ROOT)), text)
    assert problems == []
    assert checked >= 10, "the patterns found almost nothing: have the docs changed their form?"


def test_every_threshold_in_the_docstrings_is_the_tables():
    problems = []
    checked = 0
    for where, doc in docstrings():
        checked += len(code_thresholds(doc)) + len(prose_thresholds(doc))
        problems += _wrong(where, doc)
    assert problems == []
    assert checked >= 3


@pytest.mark.parametrize(
    "text, found",
    [
        ('assert_dimension(s, "consistency", source=a) > 0.7', [("summarization/consistency", 0.7)]),
        ('assert assert_dimension(r, "coherence", task="dialogue", context=h) > 0.5', [("dialogue/coherence", 0.5)]),
        ('check_dimension(s, "fluency", above=0.9)', [("summarization/fluency", 0.9)]),
        ('check_dimension(s, "fluency")', [("summarization/fluency", THRESHOLDS["summarization/fluency"].value)]),
        ('assert_dimensions(xs, "fluency").fraction(above=0.7) >= 0.9', [("summarization/fluency", 0.7)]),
        ('assert_dimensions(xs, "consistency", sources=d).min() > 0.3', [("summarization/consistency", 0.3)]),
        ('assert_dimension(s, "fluency") > 0.999', []),  # a demonstration of the failure message
        (
            '@pytest.mark.nlgeval(task="dialogue")\ndef t():\n    assert_dimension(r, "naturalness") > 0.4',
            [("dialogue/naturalness", 0.4)],
        ),
    ],
)
def test_the_code_pattern_reads_what_a_reader_reads(text, found):
    assert [(k, v) for k, v, _ in code_thresholds(text)] == found


@pytest.mark.parametrize(
    "text, found",
    [
        ("The README table says fact consistency 0.3 is the threshold.", [("fact/consistency", 0.3)]),
        ("Use 0.5 as a dialogue coherence threshold.", [("dialogue/coherence", 0.5)]),
        ("The threshold of dialogue/groundedness (0.15) fails fewer.", [("dialogue/groundedness", 0.15)]),
        ("Above the documented threshold of 0.7 on dialogue.", [(None, 0.7)]),
        ("Dialogue coherence 0.279 [0.14, 0.41] against its rating.", []),  # no threshold in the sentence
        ("The whole fact consistency dimension, at its threshold 0.3, reaches 0.79.", [("fact/consistency", 0.3)]),
    ],
)
def test_the_prose_patterns_read_what_a_reader_reads(text, found):
    assert [(k, v) for k, v, _ in prose_thresholds(text)] == found


def test_a_wrong_number_is_reported():
    key, t = next(iter(THRESHOLDS.items()))
    task, dim = key.split("/")
    wrong = round(t.value + 0.05, 2)
    text = f'assert_dimension(out, "{dim}", task="{task}") > {wrong}\n\nThe {task} {dim} threshold is {wrong}.'
    assert len(_wrong("here", text)) == 2


def test_the_docstrings_name_the_aggregation_the_embedded_model_declares():
    declared = json.loads((ROOT / "runtime/nlgeval_runtime/embedded/nlgeval.json").read_text(encoding="utf-8"))
    serves = declared["dimensions"]["serves"]
    mean_min = sorted(k for k, spec in serves.items() if spec.get("aggregation") == "mean_min")
    from pytest_nlgeval.assertions import assert_dimension

    doc = " ".join((assert_dimension.__doc__ or "").split())
    names = {"summarization/consistency": "summarization consistency", "fact/consistency": "fact consistency"}
    said = re.search(r"The embedded model reads (?P<dims>[^.]*?) claim by claim with ``mean_min``", doc)
    assert said, "assert_dimension's docstring no longer says which dimensions are read claim by claim"
    stated = {d.strip() for d in re.split(r",| and ", said["dims"]) if d.strip()}
    assert stated == {names.get(k, k.replace("/", " ")) for k in mean_min}
    if mean_min:
        assert "(average + weakest) / 2" in doc
        readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
        assert "(average + weakest) / 2" in readme


def test_every_example_asserts_the_recommended_threshold():
    checked = 0
    for folder, task in TASK_OF_FOLDER.items():
        for path in (ROOT / "examples" / folder).glob("test_*.py"):
            text = path.read_text(encoding="utf-8")
            for key, value, snippet in code_thresholds(text):
                if task != "summarization" and key.startswith("summarization/"):
                    key = f"{task}/{key.split('/')[1]}"  # the example's conftest sets the task
                assert value == THRESHOLDS[key].value, f"{path.name}: {key} at {value}: {snippet}"
                checked += 1
    assert checked >= 8


def test_recommended_threshold_is_exported_at_the_top():
    from pytest_nlgeval import recommended_threshold as exported

    assert exported is recommended_threshold
    assert exported("groundedness", "dialogue") == THRESHOLDS["dialogue/groundedness"].value
    with pytest.raises(KeyError, match="no recommended threshold for 'summarization/overall'; documented: "):
        exported("overall")


def test_a_well_formed_short_summary_clears_the_fluency_threshold():
    from pytest_nlgeval.core.evaluator import Evaluator

    summaries = [
        "The city council approved a new bridge over the river on Tuesday. Construction will start in May.",
        "Acme recalled 12,000 space heaters after reports of overheating. Owners should contact the company.",
        "Storm Henrike killed two people in the Ardel valley. More than 3,400 homes were evacuated.",
        "The museum will reopen on 1 March after a two-year renovation that cost 14 million pounds.",
    ]
    scores = Evaluator(cache=False).evaluate(summaries, "fluency")
    assert min(float(s) for s in scores) > recommended_threshold("fluency"), [float(s) for s in scores]
