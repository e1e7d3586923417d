"""The disk cache of per-token log-probabilities and the choice of the trajectory LM (--nlgeval-trajectory-lm)."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest

from nlgeval_runtime.causal_lm import load_causal_lm
from pytest_nlgeval import cli
from pytest_nlgeval.core.cache import ScoreCache
from pytest_nlgeval.trajectory.bank import BankMismatchError, ReferenceBank
from pytest_nlgeval.trajectory.lm import CachedLM, is_gguf, lm_for_bank, load_trajectory_lm

PROMPTS = ["Once upon a time a small fox", "The committee met on Tuesday", ""]
CONTS = ["lived at the edge of a dark forest.", "to discuss the budget for the new year.", "Prices rose in 2023."]


class Counting:
    """A causal-LM scorer that counts the texts it is asked to score."""

    def __init__(self, lm):
        self.lm = lm
        self.scored = 0

    def __getattr__(self, name):
        return getattr(self.lm, name)

    def score(self, continuations, prompts=None, **kw):
        self.scored += len(continuations)
        return self.lm.score(continuations, prompts, **kw)


@pytest.fixture(scope="module")
def tiny(tiny_causal_lm):
    folder, _, _ = tiny_causal_lm
    return folder, load_causal_lm(folder, device="cpu", threads=1)


def test_second_call_reads_the_disk_and_matches(tiny, tmp_path):
    _, lm = tiny
    direct = lm.score(CONTS, PROMPTS, max_tokens=6)
    counting = Counting(lm)
    cached = CachedLM(counting, ScoreCache.in_folder(tmp_path))
    first = cached.score(CONTS, PROMPTS, max_tokens=6)
    assert counting.scored == 3 and cached.misses == 3
    fresh = CachedLM(counting, ScoreCache.in_folder(tmp_path))  # another process would see the same file
    seen = []
    again = fresh.score(CONTS, PROMPTS, max_tokens=6, progress=lambda done, total: seen.append((done, total)))
    assert counting.scored == 3 and fresh.hits == 3 and seen[-1] == (3, 3)
    for result in (first, again):
        for k in range(3):
            np.testing.assert_array_equal(result.token_ids[k], direct.token_ids[k])
            np.testing.assert_array_equal(result.logprobs[k], direct.logprobs[k])  # exact: JSON keeps every bit
        np.testing.assert_array_equal(result.n_tokens, direct.n_tokens)
        np.testing.assert_array_equal(result.prompt_truncated, direct.prompt_truncated)
    fresh.score(CONTS[:1], PROMPTS[:1], max_tokens=3)  # another horizon is another measurement
    fresh.score(CONTS[:1], ["Once upon a time a big fox"], max_tokens=6)  # another prompt too
    assert counting.scored == 5
    assert cached.model_id == lm.model_id and cached.encode("a fox").tolist() == lm.encode("a fox").tolist()


def test_a_damaged_record_is_scored_again(tiny, tmp_path):
    _, lm = tiny
    counting = Counting(lm)
    cache = ScoreCache.in_folder(tmp_path)
    cached = CachedLM(counting, cache)
    want = cached.score(CONTS[:1], PROMPTS[:1]).logprobs[0]
    key = cached._key(PROMPTS[0], CONTS[0], None)
    cache.put_meta(
        key, {"token_ids": [1, 2], "logprobs": [float("nan"), -1.0], "n_tokens": 2, "prompt_truncated": False}
    )
    np.testing.assert_array_equal(cached.score(CONTS[:1], PROMPTS[:1]).logprobs[0], want)
    assert counting.scored == 2


def test_references_name_the_lm(tiny, tmp_path):
    folder, lm = tiny
    assert is_gguf("gguf:x") and is_gguf("models/Gemma.GGUF") and not is_gguf(folder) and not is_gguf(None)
    assert load_trajectory_lm("default", threads=1).model_ref == "default-lm"
    bank = ReferenceBank.fit(PROMPTS, CONTS, lm, horizon=8)
    assert lm_for_bank(bank, device="cpu", threads=1).model_id == lm.model_id  # the bank's own LM
    with pytest.raises(BankMismatchError, match="tokenizer"):
        lm_for_bank(bank, "default", device="cpu", threads=1)  # named: the default LM
    wrapped = load_trajectory_lm(str(folder), device="cpu", threads=1, cache_dir=tmp_path)
    assert isinstance(wrapped, CachedLM) and wrapped.model_id == lm.model_id


SUITE = '''
    from pytest_nlgeval import assert_trajectory

    def test_story():
        result = assert_trajectory("lived at the edge of a dark forest.", prompt="Once upon a time a small fox",
                                   bank=BANK)
        result.diversity_dtw > -1.0
'''


def test_trajectory_lm_option_and_ini_key(tiny, pytester, tmp_path):
    folder, lm = tiny
    human = tmp_path / "human.jsonl"
    human.write_text(
        "".join(json.dumps({"prompt": p or "Yesterday.", "continuation": c}) + "\n" for p, c in zip(PROMPTS, CONTS))
    )
    bank = tmp_path / "bank.npz"
    assert (
        cli.main(
            [
                "trajectory",
                "fit-bank",
                str(human),
                "-o",
                str(bank),
                "--lm",
                str(folder),
                "--horizon",
                "8",
                "--device",
                "cpu",
                "--threads",
                "1",
                "--no-cache",
            ]
        )
        == 0
    )
    pytester.makepyfile(test_suite=textwrap.dedent(SUITE).replace("BANK", repr(str(bank))))
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)  # the bank's LM
    assert (pytester.path / ".nlgeval-cache" / "scores.sqlite3").is_file()  # log-probs cached
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--nlgeval-trajectory-lm", "default")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*BankMismatchError*tokenizer*"])
    pytester.makeini(f"[pytest]\nnlgeval_trajectory_lm = {folder}\n")
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--nlgeval-trajectory-lm", "gguf:")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*gguf: needs a file path*"])


def test_perplexity_command_per_token_and_per_word(tiny, tmp_path, capsys):
    import math

    folder, lm = tiny
    rows = [{"prompt": p or "Yesterday.", "continuation": c} for p, c in zip(PROMPTS, CONTS)]
    data = tmp_path / "texts.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    base = [
        "trajectory",
        "perplexity",
        str(data),
        "--lm",
        str(folder),
        "--device",
        "cpu",
        "--threads",
        "1",
        "--format",
        "json",
        "--cache-dir",
        str(tmp_path / "cache"),
    ]
    texts = [" ".join(f"{r['prompt']} {r['continuation']}".split()) for r in rows]
    whole = lm.score(texts)
    nll = -sum(float(lp.sum()) for lp in whole.logprobs)
    tokens = sum(lp.size for lp in whole.logprobs)
    assert cli.main(base) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["tokens"] == tokens and got["words"] == sum(len(t.split()) for t in texts)
    assert got["perplexity_per_token"] == pytest.approx(math.exp(nll / tokens), rel=1e-4)
    assert got["perplexity_per_word"] == pytest.approx(math.exp(nll / got["words"]), rel=1e-4)
    given = lm.score([r["continuation"] for r in rows], [r["prompt"] for r in rows], max_tokens=4)
    assert cli.main(base + ["--given-prompt", "--horizon", "4"]) == 0
    got = json.loads(capsys.readouterr().out)
    nll = -sum(float(lp.sum()) for lp in given.logprobs)
    assert got["tokens"] == 12 and got["texts_cut"] == 3 and got["scored"] == "continuation given prompt"
    assert got["perplexity_per_token"] == pytest.approx(math.exp(nll / 12), rel=1e-4)
    assert cli.main(base + ["--horizon", "4"]) == 2
    assert "with --given-prompt" in capsys.readouterr().err
