"""A minimal reader of the WordNet 3.0 database files, for METEOR's synonym matching.

METEOR (NLTK's ``meteor_score``) only asks ``wordnet.synsets(word)`` for each synset's ``lemmas()`` and
their ``name()``. NLTK's own ``WordNetCorpusReader`` needs the NLTK data package (a download) with files
the Debian/Ubuntu package ``wordnet-base`` does not ship (``lexnames``); this reader needs only the
``index.POS``, ``data.POS`` and ``POS.exc`` files that every WordNet 3.0 distribution has.

Lookup follows WordNet's morphology (the ``morphy`` rules of the WordNet documentation, morphy(7WN)):
the exception list first; otherwise the word itself and the forms produced by the detachment rules
that are in the index; if none is, the rules are applied again to the produced forms.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

POS_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}

# morphy(7WN) detachment rules: (suffix, replacement)
_RULES = {
    "n": [
        ("s", ""),
        ("ses", "s"),
        ("ves", "f"),
        ("xes", "x"),
        ("zes", "z"),
        ("ches", "ch"),
        ("shes", "sh"),
        ("men", "man"),
        ("ies", "y"),
    ],
    "v": [("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")],
    "a": [("er", ""), ("est", ""), ("er", "e"), ("est", "e")],
    "r": [],
}
_MARKER = re.compile(r"\(.*\)$")  # adjective position markers such as "(p)" or "(a)"

CANDIDATE_DIRS = ("/usr/share/wordnet", "/usr/local/share/wordnet", "/opt/homebrew/share/wordnet")


class _Lemma:
    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def name(self) -> str:
        return self._name


class _Synset:
    __slots__ = ("offset", "pos", "_lemmas")

    def __init__(self, offset: int, pos: str, names: list[str]) -> None:
        self.offset = offset
        self.pos = pos
        self._lemmas = [_Lemma(n) for n in names]

    def lemmas(self) -> list[_Lemma]:
        return self._lemmas


class WordNetDB:
    """Synonym lookups from a WordNet 3.0 database folder (``index.noun``, ``data.noun``, ...)."""

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = Path(folder)
        missing = [
            f"{kind}.{name}"
            for name in POS_FILES.values()
            for kind in ("index", "data")
            if not (self.folder / f"{kind}.{name}").is_file()
        ]
        if missing:
            raise FileNotFoundError(
                f"{self.folder} is not a WordNet 3.0 database folder (missing {', '.join(missing)})"
            )
        self._index: dict[str, dict[str, list[int]]] = {p: {} for p in POS_FILES}
        self._exc: dict[str, dict[str, list[str]]] = {p: {} for p in POS_FILES}
        for pos, name in POS_FILES.items():
            self._read_index(pos, self.folder / f"index.{name}")
            exc = self.folder / f"{name}.exc"
            if exc.is_file():
                for line in exc.read_text(encoding="utf-8").splitlines():
                    parts = line.split()
                    if len(parts) >= 2:
                        self._exc[pos].setdefault(parts[0], []).extend(parts[1:])
        self._data = {pos: open(self.folder / f"data.{name}", "rb") for pos, name in POS_FILES.items()}
        self._synset = lru_cache(maxsize=200_000)(self._read_synset)

    def _read_index(self, pos: str, path: Path) -> None:
        table = self._index[pos]
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if line.startswith(" "):  # license header lines start with two spaces
                    continue
                f = line.split()
                # lemma pos synset_cnt p_cnt [ptr_symbol x p_cnt] sense_cnt tagsense_cnt offsets...
                n_synsets, n_ptrs = int(f[2]), int(f[3])
                table[f[0]] = [int(o) for o in f[4 + n_ptrs + 2 : 4 + n_ptrs + 2 + n_synsets]]

    def _read_synset(self, pos: str, offset: int) -> _Synset:
        fh = self._data[pos]
        fh.seek(offset)
        f = fh.readline().decode("utf-8").split()
        # synset_offset lex_filenum ss_type w_cnt(hex) [word lex_id] x w_cnt ...
        w_cnt = int(f[3], 16)
        names = [_MARKER.sub("", f[4 + 2 * k]) for k in range(w_cnt)]
        return _Synset(offset, pos, names)

    def morphy(self, form: str, pos: str) -> list[str]:
        """Base forms of ``form`` that WordNet lists for ``pos``."""
        index = self._index[pos]

        def known(forms):
            return list(dict.fromkeys(f for f in forms if f in index))

        if form in self._exc[pos]:
            return known([form] + self._exc[pos][form])
        rules = _RULES[pos]

        def apply(forms):
            return [f[: len(f) - len(old)] + new for f in forms for old, new in rules if f.endswith(old)]

        forms = apply([form])
        found = known([form] + forms)
        while not found and forms:
            forms = apply(forms)
            found = known(forms)
        return found

    def synsets(self, word: str) -> list[_Synset]:
        """All synsets of ``word`` in every part of speech (lowercased, spaces as underscores)."""
        w = word.lower().replace(" ", "_")
        out: list[_Synset] = []
        for pos in POS_FILES:
            for base in self.morphy(w, pos):
                out.extend(self._synset(pos, off) for off in self._index[pos][base])
        return out

    def close(self) -> None:
        for fh in self._data.values():
            fh.close()


def find_wordnet_dir(explicit: str | os.PathLike | None = None) -> Path | None:
    """``explicit`` if it is a WordNet database folder (and nothing else when it is given), else the first of
    ``$NLGEVAL_WORDNET_DIR`` and the system places that is one."""
    candidates = [explicit] if explicit else [os.environ.get("NLGEVAL_WORDNET_DIR"), *CANDIDATE_DIRS]
    for c in candidates:
        if c and (Path(c) / "index.noun").is_file() and (Path(c) / "data.noun").is_file():
            return Path(c)
    return None
