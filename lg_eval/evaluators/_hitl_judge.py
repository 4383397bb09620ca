"""The HITL evaluator's verdict: questions and answers compared turn by turn or per thread."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lg_eval._feedback import Feedback
from lg_eval.errors import TrajectoryFormatError
from lg_eval.evaluators._hitl_sides import EXPECTED, Side
from lg_eval.evaluators._hitl_values import FieldRule, difference, drop, show


@dataclass(frozen=True)
class Options:
    questions: str
    answers: str
    rules: dict[str, FieldRule]
    dropped: dict[str, Any]
    by: str


def judge(options: Options, actual: Side, expected: Side) -> Feedback:
    check_questions = options.questions != "ignore" and expected.questions is not None
    check_answers = options.answers != "ignore" and expected.answers is not None
    checked = {"questions": check_questions, "answers": check_answers}
    if options.questions == options.answers == "ignore":
        return Feedback(score=True, metadata={"by": options.by, "checked": checked})
    if not (check_questions or check_answers):
        return Feedback(
            score=None,
            comment=f"Not scored: reference_outputs carries no {_wanted(options)} to check.",
            metadata={"by": options.by, "checked": checked},
        )
    if check_questions and actual.questions is None:
        raise TrajectoryFormatError(
            f"outputs carries no interrupts, which the reference expects; pass {EXPECTED}."
        )
    if check_answers and actual.answers is None:
        raise TrajectoryFormatError(
            f"outputs carries no resumes, which the reference expects; pass {EXPECTED}."
        )
    side = Comparison(options, check_questions, check_answers)
    if options.by == "thread":
        return side.thread(actual, expected, checked)
    return side.turns(actual, expected, checked)


def _wanted(options: Options) -> str:
    if options.questions == "ignore":
        return "resumes (questions='ignore')"
    if options.answers == "ignore":
        return "interrupts (answers='ignore')"
    return "interrupts or resumes"


Reason = tuple[str, str]
"""Why a value failed: which item of a turn or thread (``"question 2"``, or ``""``), and how."""


def labelled(label: str, reason: Reason) -> str:
    """``Turn 1: ...``, or ``Turn 1, question 2: ...`` when the turn asked several."""
    where, text = reason
    return f"{label}, {where}: {text}" if where else f"{label}: {text}"


@dataclass(frozen=True)
class Comparison:
    options: Options
    check_questions: bool
    check_answers: bool

    def turns(self, actual: Side, expected: Side, checked: dict[str, bool]) -> Feedback:
        actual_q = self._questions(actual.questions) if self.check_questions else None
        expected_q = self._questions(expected.questions) if self.check_questions else None
        actual_a = self._answers(actual.answers) if self.check_answers else None
        expected_a = self._answers(expected.answers) if self.check_answers else None
        n_actual = len(actual_q if actual_q is not None else actual_a or [])
        n_expected = len(expected_q if expected_q is not None else expected_a or [])
        rows: list[dict[str, Any]] = []
        reasons: list[str] = []  # per differing turn, its comment
        for n in range(max(n_actual, n_expected)):
            row: dict[str, Any] = {"turn": n}
            asked_why = answered_why = None
            if actual_q is not None and expected_q is not None:
                asked, wanted = _at(actual_q, n) or [], _at(expected_q, n) or []
                asked_why = self._questions_reason(asked, wanted)
                row.update(questions=asked, expected_questions=wanted)
                row["questions_match"] = asked_why is None
            else:
                row.update(questions=None, expected_questions=None, questions_match=None)
            if actual_a is not None and expected_a is not None:
                got, want = _at(actual_a, n), _at(expected_a, n)
                answered_why = self._answer_reason(got, want)
                row.update(answer=got, expected_answer=want, answer_match=answered_why is None)
            else:
                row.update(answer=None, expected_answer=None, answer_match=None)
            why = answered_why or asked_why  # a turn is answered first, then asks
            if n >= min(n_actual, n_expected):  # a turn only one side has
                for flag in ("questions_match", "answer_match"):
                    row[flag] = None if row[flag] is None else False
            elif why is not None:
                reasons.append(labelled(f"Turn {n + 1}", why))
            rows.append(row)
        metadata = {"by": "turn", "checked": checked, "turns": rows}
        if n_actual != n_expected:
            comment = f"Expected {n_expected} turns, got {n_actual}."
            return Feedback(score=False, comment=comment, metadata=metadata)
        return Feedback(score=not reasons, comment=_first(reasons, "turn"), metadata=metadata)

    def thread(self, actual: Side, expected: Side, checked: dict[str, bool]) -> Feedback:
        metadata: dict[str, Any] = {"by": "thread", "checked": checked}
        reasons: list[Reason] = []
        if self.check_questions:
            asked = [q for turn in self._questions(actual.questions) for q in turn]
            wanted = [q for turn in self._questions(expected.questions) for q in turn]
            why = self._questions_reason(asked, wanted)
            metadata.update(questions=asked, expected_questions=wanted, questions_match=not why)
            reasons += [why] if why else []
        if self.check_answers:
            given = [a for a in self._answers(actual.answers) if a is not None]
            wanted = [a for a in self._answers(expected.answers) if a is not None]
            why = self._answers_reason(given, wanted)
            metadata.update(answers=given, expected_answers=wanted, answers_match=not why)
            reasons += [why] if why else []
        comment = labelled("The thread", reasons[0]) if reasons else None
        return Feedback(score=not reasons, comment=comment, metadata=metadata)

    # ------------------------------------------------------------------ shaping

    def _questions(self, turns: list[list[Any]] | None) -> list[list[Any]]:
        return [[drop(q, self.options.dropped) for q in turn] for turn in turns or []]

    def _answers(self, answers: list[Any] | None) -> list[Any]:
        return [drop(a, self.options.dropped) for a in answers or []]

    # ------------------------------------------------------------------ reasons

    def _questions_reason(self, asked: list[Any], wanted: list[Any]) -> Reason | None:
        if len(asked) != len(wanted):
            return (
                "",
                f"expected {_count(len(wanted), 'question')}, the graph asked {_asked(asked)}.",
            )
        for n, (got, want) in enumerate(zip(asked, wanted, strict=True)):
            found = difference(got, want, self.options.questions, {})
            if found is not None:
                which = f"question {n + 1}" if len(asked) > 1 else ""
                return which, f"asked {show(got)}, expected {show(want)}{found}."
        return None

    def _answer_reason(self, got: Any, want: Any) -> Reason | None:
        if got is None and want is None:
            return None
        if got is None:
            return "", f"expected the answer {show(want)}, none was given."
        if want is None:
            return "", f"answered {show(got)}, expected no answer."
        found = difference(got, want, self.options.answers, self.options.rules)
        if found is None:
            return None
        return "", f"answered {show(got)}, expected {show(want)}{found}."

    def _answers_reason(self, given: list[Any], wanted: list[Any]) -> Reason | None:
        if len(given) != len(wanted):
            return "", f"expected {_count(len(wanted), 'answer')}, got {len(given) or 'none'}."
        for n, (got, want) in enumerate(zip(given, wanted, strict=True)):
            why = self._answer_reason(got, want)
            if why is not None:
                return (f"answer {n + 1}" if len(given) > 1 else "", why[1])
        return None


def _at(items: list[Any], n: int) -> Any:
    return items[n] if n < len(items) else None


def _count(n: int, noun: str) -> str:
    return f"no {noun}s" if n == 0 else f"1 {noun}" if n == 1 else f"{n} {noun}s"


def _asked(asked: list[Any]) -> str:
    return "none" if not asked else f"{len(asked)}: {', '.join(show(q) for q in asked)}"


def _first(reasons: list[str], unit: str) -> str | None:
    if not reasons:
        return None
    more = f" ({len(reasons) - 1} more {unit}(s) differ.)" if len(reasons) > 1 else ""
    return reasons[0] + more
