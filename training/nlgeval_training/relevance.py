"""Calibrate the rag relevances: a sentence encoder's cosine mapped to the relevance scale.

answer_relevance and context_relevance compare the question with the answer (or each retrieved passage)
under a sentence encoder (:mod:`nlgeval_runtime.embedding`). A cosine is not a score a test threshold can use:
it depends on the encoder and on text lengths. The calibration is sigmoid(scale * cosine + offset), fitted as a
class-balanced logistic regression on pseudo-labelled pairs from the data kit's BoolQ questions: the question
with its own passage's sentence that shares most words with it (an answer-sized text that bears on the
question) and with its own passage (relevant), against the same texts of the other question that shares most
words with it (a nearby subject that does not answer it; not relevant).
Human ratings are never used. The log-odds are then spread so that the median relevant pair scores 0.9,
as for the fact checks.

    nlgeval-train calibrate-relevance runtime/nlgeval_runtime/embedded --data boolqa.jsonl.gz \
        --declaration training/configs/embedded-dimensions.json
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

#: the rag dimensions answered by the sentence encoder
RELEVANCE_DIMENSIONS = ("rag/answer_relevance", "rag/context_relevance")
SUPPORTED_MEDIAN = 0.9


def _sentences(passage: str) -> list[str]:
    from nlgeval_runtime.sentences import split_sentences

    return [s for s in split_sentences(passage) if len(s.split()) >= 5]


def _best_sentence(question: str, passage: str) -> str | None:
    words = set(re.findall(r"\w{3,}", question.lower()))
    options = _sentences(passage)
    if not options:
        return None
    return max(options, key=lambda s: len(words & set(re.findall(r"\w{3,}", s.lower()))))


def relevance_pairs(rows: list[dict], n: int, seed: int) -> list[dict]:
    """``{"question", "text", "label", "kind"}``: each question with its passage's best sentence and its passage
    (label 1), and with another question's (label 0)."""
    rng = random.Random(seed)
    rows = [r for r in rows if r.get("question") and r.get("passage")]
    rng.shuffle(rows)
    rows = rows[:n]
    out = []
    words = [set(re.findall(r"\w{4,}", r["question"].lower())) for r in rows]
    for k, row in enumerate(rows):
        # the other question that shares most words with this one: a passage on a nearby subject that does
        # not answer it, the hard case for a relevance score (ties: a seeded pick)
        others = [j for j in range(len(rows)) if j != k and rows[j]["passage"] != row["passage"]]
        other = rows[max(others, key=lambda j: (len(words[k] & words[j]), rng.random()))]
        question = row["question"].strip()
        question = question[0].upper() + question[1:] + ("" if question.endswith("?") else "?")
        for label, source in ((1, row), (0, other)):
            sentence = _best_sentence(source["question"], source["passage"])
            if sentence:
                out.append({"question": question, "text": sentence, "label": label, "kind": "sentence"})
            out.append({"question": question, "text": source["passage"], "label": label, "kind": "passage"})
    return out


def dialogue_pairs(dialogues, n: int, seed: int, history_turns: int = 3) -> dict[str, list[dict]]:
    """Pseudo-labelled pairs of the two dialogue dimensions the sentence encoder answers, from Topical-Chat
    conversations (never the rated replies): ``coherence``, the last turns of a conversation with its next
    reply (1) or with a reply of another conversation (0); ``groundedness``, a knowledge passage a reply
    cites with that reply when it shares content words with it (1), or with a reply of another conversation
    (0). Rows carry ``question`` (the history or the fact) and ``text`` (the reply)."""
    from nlgeval_runtime.claims import content_words

    rng = random.Random(seed)
    dialogues = [d for d in dialogues if len(d.turns) > history_turns]
    rng.shuffle(dialogues)
    dialogues = dialogues[:n]
    out: dict[str, list[dict]] = {"coherence": [], "groundedness": []}
    for k, dlg in enumerate(dialogues):
        other = dialogues[(k + 1 + rng.randrange(max(1, len(dialogues) - 1))) % len(dialogues)]
        at = rng.randrange(history_turns, len(dlg.turns))
        history = "\n".join(dlg.turns[at - history_turns : at])
        foreign = rng.choice(other.turns)
        out["coherence"].append({"question": history, "text": dlg.turns[at], "label": 1, "kind": "next reply"})
        out["coherence"].append({"question": history, "text": foreign, "label": 0, "kind": "other conversation"})
        for t, cited in enumerate(dlg.knowledge):
            reply_words = set(content_words(dlg.turns[t]))
            grounded = [c for c in cited if len(reply_words & set(content_words(c))) >= 3]
            if grounded:
                fact = grounded[0]
                out["groundedness"].append({"question": fact, "text": dlg.turns[t], "label": 1, "kind": "cites"})
                out["groundedness"].append({"question": fact, "text": foreign, "label": 0, "kind": "other"})
                break
    return out


def fit_calibration(cosines: list[float], labels: list[int], lexical: list[float] | None = None) -> dict:
    """``{"scale", "offset"}`` of sigmoid(scale * cosine + offset) (plus ``"lexical"``, the weight of the share
    of the text's content words found in the other text, when ``lexical`` is given), spread so the median
    relevant pair scores :data:`SUPPORTED_MEDIAN`."""
    from nlgeval_training.fact_checks import fit_logistic, median_spread

    rows = [[c] if lexical is None else [c, x] for c, x in zip(cosines, lexical or cosines)]
    weights = fit_logistic(rows, labels)
    z = [sum(w * v for w, v in zip(weights, [1.0, *row])) for row, y in zip(rows, labels) if y == 1]
    spread = median_spread(z, SUPPORTED_MEDIAN)
    block = {"scale": round(weights[1] * spread, 4), "offset": round(weights[0] * spread, 4)}
    if lexical is not None:
        block["lexical"] = round(weights[2] * spread, 4)
    return block


def calibrate_dialogue(folder: str | Path, data: str | Path, n: int = 400, seed: int = 0, threads: int = 2):
    """Fit the calibrations of dialogue coherence and groundedness (one each) on Topical-Chat pairs."""
    from nlgeval_runtime.embedding import load_embedder
    from nlgeval_runtime.factcheck import lexical_support
    from nlgeval_runtime.sentences import split_sentences

    from nlgeval_training.data import load_dialogues
    from nlgeval_training.fact_checks import auc

    embedder = load_embedder(_encoder_folder(folder, DIALOGUE_DIMENSIONS), device="cpu", threads=threads)
    blocks: dict[str, dict] = {}
    report: dict[str, dict] = {}
    cosine_only: dict[str, dict] = {}
    for name, pairs in dialogue_pairs(load_dialogues(data), n, seed).items():
        texts = list(dict.fromkeys([p["question"] for p in pairs] + [p["text"] for p in pairs]))
        vectors = dict(zip(texts, embedder.embed(texts)))
        if name == "groundedness":  # the best sentence of the fact, as the evaluator reads it
            parts = {p["question"]: split_sentences(p["question"]) or [p["question"]] for p in pairs}
            more = list(dict.fromkeys(t for ts in parts.values() for t in ts if t not in vectors))
            if more:
                vectors.update(zip(more, embedder.embed(more)))
            cosines = [max(float(vectors[t] @ vectors[p["text"]]) for t in parts[p["question"]]) for p in pairs]
        else:
            cosines = [float(vectors[p["question"]] @ vectors[p["text"]]) for p in pairs]
        labels = [p["label"] for p in pairs]
        # groundedness also reads the words: a reply that uses its fact repeats the fact's content words
        lexical = [lexical_support(p["text"], p["question"]) for p in pairs] if name == "groundedness" else None
        blocks[f"dialogue/{name}"] = fit_calibration(cosines, labels, lexical)
        report[f"dialogue/{name}"] = {"pairs": len(pairs), "auc": round(auc(cosines, labels), 4)}
        cosine_only[name] = fit_calibration(cosines, labels)
    # engagingness: each sentence's best relation to the fact or the history (cosine calibrations alone)
    blocks["dialogue/engagingness"] = {
        "against": {"fact": cosine_only["groundedness"], "context": cosine_only["coherence"]}
    }
    return blocks, report


def summary_pairs(articles: list[dict], n: int, seed: int, lead: int = 3) -> dict[str, list[dict]]:
    """Pseudo-labelled pairs of summarization relevance from CNN/DM articles (never SummEval's rated
    summaries): ``source``, an article with its own highlights (1), with its own last ``lead`` sentences (a
    summary of what the article says last, its minor details in news' inverted pyramid; 0) or with another
    article's highlights (0); ``reference``, the highlights with the article's first ``lead`` sentences (the
    lead, a summary by position; 1), its last ones (0) or another article's lead (0). Rows carry ``question``
    (the text compared with) and ``text`` (the summary)."""
    rng = random.Random(seed)
    rows = [a for a in articles if a.get("article") and a.get("highlights")]
    rng.shuffle(rows)
    rows = rows[:n]
    out: dict[str, list[dict]] = {"source": [], "reference": []}
    for k, row in enumerate(rows):
        other = rows[(k + 1 + rng.randrange(max(1, len(rows) - 1))) % len(rows)]
        highlights = " ".join(h.strip() for h in row["highlights"].split("\n") if h.strip())
        other_highlights = " ".join(h.strip() for h in other["highlights"].split("\n") if h.strip())
        out["source"].append({"question": row["article"], "text": highlights, "label": 1, "kind": "own"})
        out["source"].append({"question": row["article"], "text": other_highlights, "label": 0, "kind": "other"})
        sentences = _sentences(row["article"])
        own_lead, other_lead = " ".join(sentences[:lead]), " ".join(_sentences(other["article"])[:lead])
        tail = " ".join(sentences[-lead:]) if len(sentences) >= 3 * lead else ""
        if tail:
            out["source"].append({"question": row["article"], "text": tail, "label": 0, "kind": "own tail"})
        if own_lead and other_lead:
            out["reference"].append({"question": highlights, "text": own_lead, "label": 1, "kind": "lead"})
            out["reference"].append({"question": highlights, "text": other_lead, "label": 0, "kind": "other lead"})
            if tail:
                out["reference"].append({"question": highlights, "text": tail, "label": 0, "kind": "own tail"})
    return out


def paraphrase_pairs(rows: list[dict], n: int, seed: int) -> list[dict]:
    """Pseudo-labelled pairs of data-to-text informativeness ("informative according to the reference"): MRPC
    sentence pairs, a paraphrase carrying its sentence's information (1) or a pair on the same event that does
    not (0), plus a sentence with another pair's sentence (0)."""
    rng = random.Random(seed)
    rows = [r for r in rows if r.get("sentence1") and r.get("sentence2") and r.get("label") in (0, 1)]
    rng.shuffle(rows)
    rows = rows[:n]
    out = []
    for k, row in enumerate(rows):
        out.append({"question": row["sentence1"], "text": row["sentence2"], "label": int(row["label"]), "kind": "mrpc"})
        other = rows[(k + 1) % len(rows)]
        out.append({"question": row["sentence1"], "text": other["sentence2"], "label": 0, "kind": "other"})
    return out


def _cosines(embedder, pairs: list[dict]) -> list[float]:
    texts = list(dict.fromkeys([p["question"] for p in pairs] + [p["text"] for p in pairs]))
    vectors = dict(zip(texts, embedder.embed(texts)))
    return [float(vectors[p["question"]] @ vectors[p["text"]]) for p in pairs]


def calibrate_summaries(
    folder: str | Path,
    articles: str | Path,
    paraphrases: str | Path | None = None,
    n: int = 400,
    seed: int = 0,
    threads: int = 2,
) -> tuple[dict, dict]:
    """Fit summarization relevance's two calibrations (against the reference and against the document) on
    CNN/DM pairs, and data-to-text informativeness's (against the reference) on MRPC pairs when
    ``paraphrases`` is given."""
    from nlgeval_runtime.embedding import load_embedder

    from nlgeval_training.data import read_jsonl
    from nlgeval_training.fact_checks import auc

    embedder = load_embedder(_encoder_folder(folder, ("summarization/relevance",)), device="cpu", threads=threads)
    against: dict[str, dict] = {}
    report: dict[str, dict] = {}
    for argument, pairs in summary_pairs(list(read_jsonl(articles)), n, seed).items():
        cosines, labels = _cosines(embedder, pairs), [p["label"] for p in pairs]
        against[argument] = fit_calibration(cosines, labels)
        report[f"summarization/relevance against {argument}"] = {
            "pairs": len(pairs),
            "auc": round(auc(cosines, labels), 4),
        }
    blocks = {"summarization/relevance": {"against": against}}
    if paraphrases:
        pairs = paraphrase_pairs(list(read_jsonl(paraphrases)), n, seed)
        cosines, labels = _cosines(embedder, pairs), [p["label"] for p in pairs]
        blocks["data2text/informativeness"] = {"against": {"reference": fit_calibration(cosines, labels)}}
        report["data2text/informativeness against reference"] = {
            "pairs": len(pairs),
            "auc": round(auc(cosines, labels), 4),
        }
    return blocks, report


#: the dialogue dimensions answered by the sentence encoder
DIALOGUE_DIMENSIONS = ("dialogue/coherence", "dialogue/groundedness", "dialogue/engagingness")


def _encoder_folder(folder: str | Path, dimensions) -> Path:
    from nlgeval_runtime.modelfolder import ModelFolder

    declared = ModelFolder.open(Path(folder)).dimensions or {}
    subs = {declared["serves"][d].get("folder") for d in dimensions if d in declared.get("serves", {})}
    subs.discard(None)
    if len(subs) != 1:
        raise ValueError(f"{folder}: declare {', '.join(dimensions)} with one 'folder' holding the sentence encoder")
    return Path(folder) / subs.pop()


def calibrate(folder: str | Path, data: str | Path, n: int = 400, seed: int = 0, threads: int = 2) -> tuple[dict, dict]:
    """Fit the calibration of the encoder that ``folder``'s declaration names for the rag relevances."""
    from nlgeval_runtime.embedding import load_embedder

    from nlgeval_training.data import read_jsonl
    from nlgeval_training.fact_checks import auc

    embedder = load_embedder(_encoder_folder(folder, RELEVANCE_DIMENSIONS), device="cpu", threads=threads)
    pairs = relevance_pairs(list(read_jsonl(data)), n, seed)
    texts = list(dict.fromkeys([p["question"] for p in pairs] + [p["text"] for p in pairs]))
    vectors = dict(zip(texts, embedder.embed(texts)))
    cosines = [float(vectors[p["question"]] @ vectors[p["text"]]) for p in pairs]
    labels = [p["label"] for p in pairs]
    block = fit_calibration(cosines, labels)
    report = {
        "pairs": len(pairs),
        "auc": round(auc(cosines, labels), 4),
        "median_cosine": {
            f"{kind} {'relevant' if y else 'other question'}": round(
                sorted(c for c, p in zip(cosines, pairs) if p["kind"] == kind and p["label"] == y)[
                    sum(1 for p in pairs if p["kind"] == kind and p["label"] == y) // 2
                ],
                4,
            )
            for kind in ("sentence", "passage")
            for y in (1, 0)
        },
    }
    return block, report


def write_calibration(blocks: dict[str, dict], paths: list[Path], fitted_on: str) -> None:
    """Put each ``blocks[dimension]`` as that dimension's ``calibration`` in each declaration."""
    for path in paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        serves = (data.get("dimensions") or data)["serves"]
        for name, block in blocks.items():
            if name in serves and "against" in block:
                serves[name]["against"] = block["against"]
            elif name in serves:
                serves[name]["calibration"] = {**block, "fitted_on": fitted_on}
        indent, sort = (2, True) if "dimensions" in data else (1, False)
        path.write_text(json.dumps(data, indent=indent, sort_keys=sort) + "\n", encoding="utf-8")
