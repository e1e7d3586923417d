"""Redraw ``trajectory-example.svg``: the example suite's greedy story against the human band and envelope.

python docs/images/trajectory_example.py      # from the repository root, after changing the LM or the plot
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STORIES = ROOT / "examples" / "stories"
sys.path.insert(0, str(STORIES))

from story_generator import StoryGenerator  # noqa: E402

from pytest_nlgeval import assert_trajectory  # noqa: E402
from pytest_nlgeval.trajectory.plot import trajectory_svg  # noqa: E402


def main() -> None:
    human = [json.loads(line) for line in (STORIES / "human_continuations.jsonl").open(encoding="utf-8")]
    prompt = human[0]["prompt"]
    story = StoryGenerator.from_file(STORIES / "corpus.txt").generate(prompt, strategy="greedy")
    result = assert_trajectory(story, prompt=prompt, bank=STORIES / "bank.npz")
    details = result.details
    panels = []
    for signal in ("diversity", "coherence"):
        band = details["band"][signal]
        floor = details["envelope"].get(signal, [])
        leave = result.leaves_band()
        panels.append(
            trajectory_svg(
                details["trajectory"][signal],
                low=band["low"],
                median=band["median"],
                high=band["high"],
                title=signal,
                floor=floor,
                leave_at=leave[0] + 1 if leave and signal == "diversity" else None,
            )
        )
    body = "".join(f'<svg y="{170 * i}"{str(p)[4:]}' for i, p in enumerate(panels))
    out = Path(__file__).with_name("trajectory-example.svg")
    out.write_text(
        f'<svg xmlns="http://www.w3.org/2000/svg" width="460" height="340" viewBox="0 0 460 340">{body}</svg>\n',
        encoding="utf-8",
    )
    print(f"{out}: greedy story, leaves the envelope at token {leave[0] + 1 if leave else None}")


if __name__ == "__main__":
    main()
