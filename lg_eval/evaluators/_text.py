"""Text scorers for final answers: exact, contains, keywords, edit distance, ROUGE-L, BLEU, WER.

Each compares the answer in ``outputs`` (a string, the last AI message of a
trajectory, or an ``answer`` / ``output`` field) with ``reference_outputs``.
Texts are Unicode-normalized (NFC), trimmed and, unless ``case_sensitive``,
case-folded; word metrics split on word characters. When there is nothing to
compare (no answer or no reference) the score is 0 (``False`` for yes/no
scorers) and the comment says which side was missing. A list of reference
strings scores against the best one (BLEU uses them all, as BLEU does).
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, get_args

from rapidfuzz.distance import LCSseq, Levenshtein

from lg_eval._evaluator import Evaluator, make_evaluator
from lg_eval._feedback import BOOL, UNIT, Feedback
from lg_eval._inputs import describe_list, text_arg
from lg_eval.errors import InvalidOptionError

_WORD = re.compile(r"\w+")


def normalize_text(text: str, *, case_sensitive: bool = False) -> str:
    """NFC-normalize and trim ``text``; case-fold it unless ``case_sensitive``."""
    text = unicodedata.normalize("NFC", text).strip()
    return text if case_sensitive else text.casefold()


def words(text: str) -> list[str]:
    """The word tokens of an already-normalized text."""
    return _WORD.findall(text)


# --------------------------------------------------------------------------- metrics


def _exact(answer: str, reference: str) -> Feedback:
    return Feedback(
        score=answer == reference, comment=None if answer == reference else "The answer differs."
    )


def _contains(answer: str, reference: str) -> Feedback:
    found = reference in answer
    return Feedback(
        score=found, comment=None if found else "The answer does not contain the reference text."
    )


EXACT_EDIT_CELLS = 4 * 10**9
"""Texts whose lengths multiply to at most this are compared exactly (about 0.2 s)."""
BAND_EDIT_CELLS = 3 * 10**10
"""Longer texts are compared exactly up to ``BAND_EDIT_CELLS / longer length`` edits (50,000
for two 600,000-character texts); texts further apart than that get ``score=None``."""


def _levenshtein(answer: str, reference: str) -> Feedback:
    longer = max(len(answer), len(reference))
    if len(answer) * len(reference) <= EXACT_EDIT_CELLS:
        distance = Levenshtein.distance(answer, reference)
    else:  # a banded computation: linear in the texts' length for a bounded distance
        band = BAND_EDIT_CELLS // longer
        distance = Levenshtein.distance(answer, reference, score_cutoff=band, score_hint=1000)
        if distance > band:
            message = (
                f"the texts ({len(answer)} and {len(reference)} characters) are more than "
                f"{band} edits apart, too far to measure exactly at this length"
            )
            return Feedback(
                score=None,
                comment=f"Not scored: {message}.",
                metadata={"error": {"type": "too_large", "message": message}},
            )
    value = 1.0 - distance / longer
    comment = f"{distance} character edits apart." if distance else None
    return Feedback(score=value, comment=comment, metadata={"distance": distance})


def _rouge_l(answer: str, reference: str) -> Feedback:
    got, want = words(answer), words(reference)
    common = LCSseq.similarity(got, want)
    precision = common / len(got) if got else 0.0
    recall = common / len(want) if want else 0.0
    total = precision + recall
    value = 2 * precision * recall / total if total else 0.0
    comment = None if value == 1.0 else f"Longest common word sequence: {common} words."
    return Feedback(
        score=value,
        comment=comment,
        metadata={"lcs": common, "precision": precision, "recall": recall},
    )


def _word_error_rate(answer: str, reference: str) -> Feedback:
    got, want = words(answer), words(reference)
    ops = Counter(op.tag for op in Levenshtein.editops(want, got))
    errors = sum(ops.values())
    rate = errors / len(want) if want else float(bool(got))
    metadata = {
        "wer": rate,
        "substitutions": ops["replace"],
        "deletions": ops["delete"],
        "insertions": ops["insert"],
    }
    comment = f"Word error rate {rate:.2f} ({errors} word edits)." if errors else None
    return Feedback(score=max(0.0, 1.0 - rate), comment=comment, metadata=metadata)


def _token_overlap(answer: str, reference: str) -> Feedback:
    got, want = Counter(words(answer)), Counter(words(reference))
    shared = sum((got & want).values())
    precision = shared / sum(got.values()) if got else 0.0
    recall = shared / sum(want.values()) if want else 0.0
    total = precision + recall
    value = 2 * precision * recall / total if total else 0.0
    missing = sorted((want - got).keys())
    comment = f"Reference words missing: {describe_list(missing, 5)}." if missing else None
    return Feedback(
        score=value, comment=comment, metadata={"precision": precision, "recall": recall}
    )


def sentence_bleu(answer: str, references: Sequence[str], max_n: int = 4) -> float:
    """Sentence BLEU with add-one smoothing above unigrams and the brevity penalty."""
    candidate = words(answer)
    refs = [words(reference) for reference in references]
    if not candidate or not any(refs):
        return 0.0
    logs = []
    for n in range(1, max_n + 1):
        grams = Counter(_ngrams(candidate, n))
        ceiling: Counter[tuple[str, ...]] = Counter()
        for ref in refs:
            ceiling |= Counter(_ngrams(ref, n))
        clipped, total = sum((grams & ceiling).values()), sum(grams.values())
        if n == 1 and not clipped:
            return 0.0
        logs.append(math.log(clipped / total if n == 1 else (clipped + 1) / (total + 1)))
    closest = min((abs(len(ref) - len(candidate)), len(ref)) for ref in refs)[1]
    penalty = 1.0 if len(candidate) > closest else math.exp(1 - closest / len(candidate))
    return penalty * math.exp(sum(logs) / max_n)


def _ngrams(tokens: list[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


_Metric = Callable[[str, str], Feedback]
_METRICS: dict[str, tuple[_Metric | None, bool]] = {  # name -> (metric, yes/no score)
    "exact_match": (_exact, True),
    "contains": (_contains, True),
    "levenshtein": (_levenshtein, False),
    "rouge_l": (_rouge_l, False),
    "bleu": (None, False),
    "word_error_rate": (_word_error_rate, False),
    "token_overlap": (_token_overlap, False),
}
TextMetric = Literal[
    "exact_match", "contains", "levenshtein", "rouge_l", "bleu", "word_error_rate", "token_overlap"
]
TEXT_METRICS: tuple[TextMetric, ...] = get_args(TextMetric)


def create_text_evaluator(metric: TextMetric, *, case_sensitive: bool = False) -> Evaluator:
    """A text scorer by name, with its options. The key is the metric name.

    * ``exact_match``: the answer equals the reference (bool).
    * ``contains``: the answer contains the reference (bool).
    * ``levenshtein``: ``1 - character edit distance / longer length``.
    * ``rouge_l``: ROUGE-L F1 (longest common word subsequence).
    * ``bleu``: sentence BLEU-4, add-one smoothed above unigrams, brevity penalty.
    * ``word_error_rate``: ``1 - WER``, never below 0 (the raw WER is in metadata).
    * ``token_overlap``: F1 of the word multisets (SQuAD-style token overlap).

    Raises:
        InvalidOptionError: an unknown metric name.
    """
    if not isinstance(metric, str) or metric not in _METRICS:
        raise InvalidOptionError(
            f"metric={metric!r} is not allowed; use one of {', '.join(TEXT_METRICS)}."
        )
    function, binary = _METRICS[metric]
    empty = False if binary else 0.0

    def scorer(*, outputs: Any, reference_outputs: Any = None, **_: Any) -> Feedback:
        answer = text_arg(outputs, "outputs")
        references = [r for r in reference_texts(reference_outputs) if r and r.strip()]
        if not answer or not answer.strip():
            return Feedback(score=empty, comment="The output has no answer text to compare.")
        if not references:
            return Feedback(score=empty, comment="No reference answer to compare against.")
        answer = normalize_text(answer, case_sensitive=case_sensitive)
        references = [normalize_text(r, case_sensitive=case_sensitive) for r in references]
        if function is None:
            value = sentence_bleu(answer, references)
            return Feedback(score=value, comment=None if value == 1.0 else f"BLEU {value:.2f}.")
        return max((function(answer, r) for r in references), key=lambda s: float(s.score or 0))

    scorer.__doc__ = create_text_evaluator.__doc__
    return make_evaluator(metric, scorer, reads="output", score_range=BOOL if binary else UNIT)


def reference_texts(value: Any) -> list[str]:
    """One or more reference texts: a list of strings, a dataset's ``{equals: text}``, or
    anything :func:`text_arg` reads. A dataset's ``{contains: [...]}`` lists keywords, not
    a text to compare with: an InvalidOptionError says to use ``keywords``."""
    if isinstance(value, list | tuple) and value and all(isinstance(v, str) for v in value):
        return list(value)
    if isinstance(value, Mapping) and set(value) == {"equals"}:
        return reference_texts(value["equals"])
    if isinstance(value, Mapping) and set(value) == {"contains"}:
        raise InvalidOptionError(
            "reference_outputs is {contains: [...]}, keywords to look for, not a text to "
            "compare the answer with: use the keywords evaluator, or give the text."
        )
    text = text_arg(value, "reference_outputs")
    return [] if text is None else [text]


def create_keywords_evaluator(
    keywords: Sequence[str] | None = None,
    *,
    mode: Literal["all", "any"] = "all",
    case_sensitive: bool = False,
) -> Evaluator:
    """Whether the answer mentions the keywords (substring match, case-insensitive by default).

    ``mode="all"`` scores the share of keywords found (1.0 when all are);
    ``"any"`` scores 1.0 when at least one is found, else 0.0. Keywords come
    from this option or, when ``None``, from ``reference_outputs`` (a list of
    strings, a dict with ``"keywords"``, or a dataset's ``{contains: [...]}`` under
    ``output``). Key ``keywords``.

    Raises:
        InvalidOptionError: an unknown mode, or keywords that are not strings.
    """
    if mode not in ("all", "any"):
        raise InvalidOptionError(f"mode={mode!r} is not allowed; use one of all, any.")
    fixed = None if keywords is None else _keywords(keywords, "keywords")

    def scorer(*, outputs: Any, reference_outputs: Any = None, **_: Any) -> Feedback:
        wanted = fixed if fixed is not None else _keywords(reference_outputs, "reference_outputs")
        answer = text_arg(outputs, "outputs")
        if not wanted:
            return Feedback(score=0.0, comment="No keywords to look for.")
        if not answer:
            return Feedback(score=0.0, comment="The output has no answer text to search.")
        text = normalize_text(answer, case_sensitive=case_sensitive)
        folded = [normalize_text(k, case_sensitive=case_sensitive) for k in wanted]
        present = _present(frozenset(folded), text)
        found = [k for k, f in zip(wanted, folded, strict=True) if f in present]
        missing = [k for k, f in zip(wanted, folded, strict=True) if f not in present]
        value = len(found) / len(wanted) if mode == "all" else float(bool(found))
        comment = None if value == 1.0 else f"Keywords not found: {describe_list(missing, 5)}."
        return Feedback(score=value, comment=comment, metadata={"found": found, "missing": missing})

    scorer.__doc__ = create_keywords_evaluator.__doc__
    return make_evaluator("keywords", scorer, reads="output", score_range=UNIT)


_SCAN_CELLS = 2 * 10**7
"""Up to this many keyword-times-text characters, each keyword is searched on its own (fast
C searches); beyond it, one Aho-Corasick pass over the text finds them all."""


def _present(keywords: frozenset[str], text: str) -> set[str]:
    """The keywords that occur in ``text`` (as substrings)."""
    if len(keywords) * len(text) <= _SCAN_CELLS or len(keywords) < 8:
        return {k for k in keywords if k in text}
    return _automaton(keywords).found_in(text) | ({""} & keywords)  # "" is in every text


@functools.lru_cache(maxsize=8)  # a factory's fixed keywords are compiled once
def _automaton(keywords: frozenset[str]) -> _Automaton:
    return _Automaton(keywords)


class _Automaton:
    """An Aho-Corasick automaton over the keywords: which occur in a text, in one pass."""

    def __init__(self, keywords: frozenset[str]) -> None:
        self.goto: list[dict[str, int]] = [{}]
        self.ends: list[list[str]] = [[]]  # keywords ending at each node
        for keyword in keywords:
            node = 0
            for char in keyword:
                nxt = self.goto[node].get(char)
                if nxt is None:
                    nxt = len(self.goto)
                    self.goto[node][char] = nxt
                    self.goto.append({})
                    self.ends.append([])
                node = nxt
            self.ends[node].append(keyword)
        self.fail = [0] * len(self.goto)
        queue = list(self.goto[0].values())
        for node in queue:  # breadth first: a node's fail link is set before its children's
            for char, child in self.goto[node].items():
                link = self.fail[node]
                while link and char not in self.goto[link]:
                    link = self.fail[link]
                target = self.goto[link].get(char, 0)
                self.fail[child] = target if target != child else 0
                queue.append(child)

    def found_in(self, text: str) -> set[str]:
        goto, fail = self.goto, self.fail
        visited = bytearray(len(goto))
        node = 0
        for char in text:
            while node and char not in goto[node]:
                node = fail[node]
            node = goto[node].get(char, 0)
            visited[node] = 1
        found: set[str] = set()
        done = bytearray(len(goto))  # nodes whose fail chain has been collected
        for start in range(len(goto)):
            node = start if visited[start] else 0
            while node and not done[node]:
                done[node] = 1
                found.update(self.ends[node])
                node = fail[node]
        return found


def _keywords(value: Any, where: str) -> list[str]:
    if isinstance(value, Mapping) and "keywords" in value:
        value = value["keywords"]
    elif isinstance(value, Mapping) and set(value) == {"contains"}:  # a dataset's output
        value = value["contains"]
    if isinstance(value, str):
        value = [value]
    if value is None:
        return []
    if not isinstance(value, Sequence) or not all(isinstance(k, str) and k for k in value):
        raise InvalidOptionError(f"{where} must be a list of non-empty keyword strings.")
    return list(value)


exact_match = create_text_evaluator("exact_match")
contains = create_text_evaluator("contains")
levenshtein = create_text_evaluator("levenshtein")
rouge_l = create_text_evaluator("rouge_l")
word_error_rate = create_text_evaluator("word_error_rate")
token_overlap = create_text_evaluator("token_overlap")
bleu = create_text_evaluator("bleu")
