"""The application under test: a toy continuation generator (a word-bigram model).

It stands in for an LLM so the example runs offline in seconds. Like an LLM it has two decoding modes:
``sample`` draws each next word in proportion to how often it followed the previous word in the training
text, ``greedy`` always takes the most frequent one. Greedy decoding famously degenerates into loops
("the NFL has 11 minutes of the NFL has 11 minutes of ..."), which is exactly what the trajectory check is
meant to catch.

    gen = StoryGenerator.from_file("examples/stories/corpus.txt")
    gen.generate("Do you like football?", strategy="sample", seed=1)
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from pathlib import Path


class StoryGenerator:
    def __init__(self, text: str):
        words = text.split()
        if len(words) < 2:
            raise ValueError("the training text needs at least two words")
        self.next: dict[str, Counter] = defaultdict(Counter)
        for a, b in zip(words, words[1:]):
            self.next[a][b] += 1
        self.starts = sorted(w for w in self.next if w[:1].isupper())

    @classmethod
    def from_file(cls, path: str | Path) -> "StoryGenerator":
        return cls(Path(path).read_text(encoding="utf-8"))

    def generate(self, prompt: str, *, n_words: int = 130, strategy: str = "sample", seed: int = 0) -> str:
        """Continue ``prompt`` with ``n_words`` words (``strategy``: ``"sample"`` or ``"greedy"``)."""
        if strategy not in ("sample", "greedy"):
            raise ValueError(f"strategy must be 'sample' or 'greedy', not {strategy!r}")
        rng = random.Random(seed)
        words = prompt.split()
        word = words[-1] if words and words[-1] in self.next else rng.choice(self.starts)
        out: list[str] = []
        while len(out) < n_words:
            options = self.next.get(word)
            if not options:
                word = rng.choice(self.starts)  # dead end: jump to a sentence start
                out.append(word)
                continue
            if strategy == "greedy":
                word = options.most_common(1)[0][0]
            else:
                choices, counts = zip(*options.items())
                word = rng.choices(choices, weights=counts)[0]
            out.append(word)
        return " ".join(out)
