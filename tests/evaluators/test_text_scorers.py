"""Text scorers for final answers."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage

from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators import (
    TEXT_METRICS,
    bleu,
    contains,
    create_keywords_evaluator,
    create_text_evaluator,
    exact_match,
    levenshtein,
    rouge_l,
    token_overlap,
    word_error_rate,
)
from lg_eval.evaluators import _text as text_module
from lg_eval.evaluators._text import _Automaton


@pytest.mark.parametrize(
    ("evaluator", "outputs", "reference", "score"),
    [
        (exact_match, "  Paris ", "paris", True),
        (exact_match, "Paris.", "paris", False),
        (contains, "The capital is PARIS.", "paris", True),
        (contains, "Lyon", "paris", False),
        (levenshtein, "kitten", "sitting", 1 - 3 / 7),
        (levenshtein, "ABC", "abc", 1.0),
        (rouge_l, "the cat sat on the mat", "the cat is on the mat", 5 / 6),
        (bleu, "the cat sat on the mat", "the cat sat on the mat", 1.0),
        (word_error_rate, "the cat sat", "the cat sat on the mat", 0.5),
        (word_error_rate, "a b c d e f g", "a b", 0.0),
        (token_overlap, "the cat", "the cat sat", 0.8),
    ],
)
def test_exact_scores(evaluator, outputs, reference, score):
    result = evaluator(outputs=outputs, reference_outputs=reference)
    assert result["score"] == pytest.approx(score)


def test_unicode_is_normalized_before_comparing():
    composed, decomposed = "Café crème", "Cafe\u0301 cre\u0300me"
    assert exact_match(outputs=composed, reference_outputs=decomposed)["score"] is True
    assert levenshtein(outputs="straße", reference_outputs="STRASSE")["score"] == 1.0


def test_bleu_brevity_penalty_and_smoothing():
    short = bleu(outputs="the cat", reference_outputs="the cat sat on the mat")
    assert 0 < short["score"] < 0.2
    assert bleu(outputs="dog", reference_outputs="the cat")["score"] == 0.0


def test_bleu_uses_every_reference():
    result = bleu(
        outputs="a cat sat on a mat",
        reference_outputs=["the cat sat on the mat", "a cat sat on a mat"],
    )
    assert result["score"] == 1.0


def test_other_metrics_take_the_best_reference():
    result = exact_match(outputs="Paris", reference_outputs=["Lyon", "paris"])
    assert result["score"] is True


def test_word_error_rate_metadata_counts_edits():
    result = word_error_rate(outputs="the dog sat", reference_outputs="the cat sat down")
    assert result["metadata"] == {"wer": 0.5, "substitutions": 1, "deletions": 1, "insertions": 0}


@pytest.mark.parametrize("metric", TEXT_METRICS)
def test_nothing_to_compare_scores_zero_with_a_comment(metric):
    evaluator = create_text_evaluator(metric)
    no_reference = evaluator(outputs="answer", reference_outputs=None)
    no_answer = evaluator(outputs="  ", reference_outputs="answer")
    assert no_reference["score"] == 0 and no_answer["score"] == 0
    assert no_reference["comment"] == "No reference answer to compare against."
    assert no_answer["comment"] == "The output has no answer text to compare."


def test_answers_are_read_from_messages_and_answer_fields():
    messages = [HumanMessage("capital?"), AIMessage("Paris")]
    assert exact_match(outputs=messages, reference_outputs="paris")["score"] is True
    assert (
        exact_match(outputs={"messages": messages}, reference_outputs={"answer": "Paris"})["score"]
        is True
    )
    assert exact_match(outputs={"output": "Paris"}, reference_outputs="paris")["score"] is True


def test_case_sensitive_option():
    evaluator = create_text_evaluator("exact_match", case_sensitive=True)
    assert evaluator(outputs="Paris", reference_outputs="paris")["score"] is False


def test_unknown_metric_is_rejected():
    with pytest.raises(InvalidOptionError, match="exact_match, contains"):
        create_text_evaluator("meteor")  # type: ignore[arg-type]


def test_keywords_all_and_any():
    all_mode = create_keywords_evaluator(["paris", "FRANCE", "berlin"])
    result = all_mode(outputs="Paris is in France.")
    assert result["score"] == pytest.approx(2 / 3)
    assert result["comment"] == "Keywords not found: berlin."
    any_mode = create_keywords_evaluator(["berlin", "france"], mode="any")
    assert any_mode(outputs="Paris is in France.")["score"] == 1.0
    assert any_mode(outputs="Rome")["score"] == 0.0


def test_keywords_from_reference_and_nothing_to_look_for():
    evaluator = create_keywords_evaluator()
    assert evaluator(outputs="Zürich", reference_outputs={"keywords": ["zürich"]})["score"] == 1.0
    assert evaluator(outputs="x", reference_outputs=[])["comment"] == "No keywords to look for."


def test_keywords_option_errors():
    with pytest.raises(InvalidOptionError, match="all, any"):
        create_keywords_evaluator(["a"], mode="most")  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match="non-empty keyword strings"):
        create_keywords_evaluator(["a", ""])


async def test_async_twin_of_a_text_scorer():
    result = await exact_match.as_async()(outputs="a", reference_outputs="A")
    assert result == {"key": "exact_match", "score": True, "comment": None, "metadata": None}


# --------------------------------------------------------------------------- big inputs


def _random_text(n: int, seed: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice("abcdefghij  ") for _ in range(n))


def test_levenshtein_on_two_600kb_texts_far_apart_is_banded_and_not_a_guess():
    """The banded computation (linear in the length) is taken and says it stopped; its
    time is measured by ``tests/benchmarks/bench_text.py``."""
    a, b = _random_text(600_000, 1), _random_text(600_000, 2)
    result = levenshtein(outputs=a, reference_outputs=b)
    assert result["score"] is None
    assert result["metadata"]["error"]["type"] == "too_large"
    assert "more than 50000 edits apart" in result["comment"]


def test_levenshtein_on_two_600kb_texts_close_together_is_exact():
    a = _random_text(600_000, 1)
    result = levenshtein(outputs=a, reference_outputs=a[:1000] + "XYZ" + a[1000:])
    assert result["metadata"]["distance"] == 3
    assert result["score"] == 1 - 3 / 600_003


def test_many_keywords_over_a_megabyte_are_found_in_one_pass(monkeypatch):
    """One automaton pass over the text, not a scan per keyword (timed by
    ``tests/benchmarks/bench_text.py``)."""
    text = _random_text(1_000_000, 3)
    keywords = sorted({_random_text(9, seed).strip() or "x" for seed in range(10_000)})
    evaluator = create_keywords_evaluator(keywords)
    passes: list[int] = []
    found_in = text_module._Automaton.found_in

    def counted(self: Any, scanned: str) -> set[str]:
        passes.append(len(scanned))
        return found_in(self, scanned)

    monkeypatch.setattr(text_module._Automaton, "found_in", counted)
    result = evaluator(outputs=text)
    assert passes == [len(text)]
    found = set(result["metadata"]["found"])
    assert found.isdisjoint(result["metadata"]["missing"])
    for keyword in keywords[::50]:  # the naive check, on a sample (on all it takes the 11 s)
        assert (keyword in found) == (keyword in text)
    assert result["score"] == len(found) / len(keywords)


@settings(max_examples=150, deadline=None)
@given(
    keywords=st.lists(st.text("abc", max_size=4), min_size=8, max_size=20),
    text=st.text("abc", max_size=40),
)
def test_the_keyword_automaton_finds_exactly_the_substrings(keywords, text):
    wanted = frozenset(k for k in keywords if k)
    assert _Automaton(wanted).found_in(text) == {k for k in wanted if k in text}
