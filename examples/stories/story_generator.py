"""The application under test: a toy story/news continuation generator (a word-trigram model).

It stands in for an LLM so the example runs offline in seconds. Like an LLM it has two decoding modes:
``sample`` draws each next word in proportion to its trigram count, ``greedy`` always takes the most
frequent one, and greedy decoding famously degenerates into loops ("the company said that the company
said that ..."), which is exactly what the trajectory check is meant to catch.

    gen = StoryGenerator.from_file("examples/stories/corpus.txt")
    gen.generate("The minister said on Monday", strategy="sample", seed=1)
"""
from __future__ import annotations

import random
from collections import Counter, defaultdict
from pathlib import Path


class StoryGenerator:
    def __init__(self, text: str):
        words = text.split()
        if len(words) < 3:
            raise ValueError("the training text needs at least three words")
        self.next: dict[tuple[str, str], Counter] = defaultdict(Counter)
        for a, b, c in zip(words, words[1:], words[2:]):
            self.next[(a, b)][c] += 1
        self.starts = [pair for pair in self.next if pair[0][:1].isupper() and pair[0].isalpha()]

    @classmethod
    def from_file(cls, path: str | Path) -> "StoryGenerator":
        return cls(Path(path).read_text(encoding="utf-8"))

    def generate(self, prompt: str, *, n_words: int = 130, strategy: str = "sample", seed: int = 0) -> str:
        """Continue ``prompt`` with ``n_words`` words (``strategy``: ``"sample"`` or ``"greedy"``)."""
        if strategy not in ("sample", "greedy"):
            raise ValueError(f"strategy must be 'sample' or 'greedy', not {strategy!r}")
        rng = random.Random(seed)
        tail = prompt.split()[-2:]
        state = tuple(tail) if len(tail) == 2 and tuple(tail) in self.next else rng.choice(self.starts)
        out: list[str] = []
        while len(out) < n_words:
            options = self.next.get(state)
            if not options:
                state = rng.choice(self.starts)   # dead end: jump to a sentence start
                out.extend(state)
                continue
            if strategy == "greedy":
                word = options.most_common(1)[0][0]
            else:
                words, counts = zip(*options.items())
                word = rng.choices(words, weights=counts)[0]
            out.append(word)
            state = (state[1], word)
        return " ".join(out[:n_words])
