"""HITL match: what the graph asked the human, and what the human answered, turn by turn.

Two threads where a reviewer approved and rejected the same request have the
same flat trajectory (the same nodes ran), so graph matchers score them equal.
:func:`create_hitl_evaluator` compares the human's part instead: the payloads
the graph passed to ``interrupt()`` (the *questions*) and the ``resume`` values
it got back (the *answers*).

Both sides are read per turn. From a :class:`~lg_eval.ThreadTrajectory`, a
turn's questions are the payloads of the interrupts pending when it ended,
sorted by the interrupted node's path (parallel interrupts have no order of
their own); its answer is the resume value of a resume turn (``None`` for
other turns), or, when one resume answered several interrupts, the list of
their values in the order of the questions they answer. A
:class:`~lg_eval.GraphTrajectory` (or its dict) carries the same as its
optional ``interrupts`` (per turn, a list of payloads) and ``resumes`` (per
turn, the answer or ``None``); either left out is not checked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, get_args

from lg_eval._evaluator import Evaluator, make_evaluator
from lg_eval._feedback import Feedback
from lg_eval._inputs import require
from lg_eval.errors import InvalidOptionError
from lg_eval.evaluators._hitl_calls import Decide, check_calls, decision_of
from lg_eval.evaluators._hitl_judge import Options, judge
from lg_eval.evaluators._hitl_sides import read
from lg_eval.evaluators._hitl_values import (
    FieldMode as FieldMode,
)
from lg_eval.evaluators._hitl_values import (
    FieldRule as FieldRule,
)
from lg_eval.evaluators._hitl_values import (
    field_tree,
)

QuestionMode = Literal["exact", "subset", "contains", "ignore"]
AnswerMode = Literal["exact", "subset", "ignore"]
HitlScope = Literal["turn", "thread"]

QUESTION_MODES: tuple[QuestionMode, ...] = get_args(QuestionMode)
ANSWER_MODES: tuple[AnswerMode, ...] = get_args(AnswerMode)
FIELD_MODES = QUESTION_MODES
HITL_SCOPES: tuple[str, ...] = ("turn", "thread")

KEY = "hitl_match"


def create_hitl_evaluator(
    *,
    questions: QuestionMode = "exact",
    answers: AnswerMode = "exact",
    answer_rules: Mapping[str, FieldRule] | None = None,
    ignore_fields: Sequence[str] = (),
    by: HitlScope = "turn",
    calls_after_answer: bool = True,
    decision: Decide | None = None,
) -> Evaluator:
    """An evaluator comparing the questions a graph asked and the answers it got.

    ``outputs`` is the run: a ``ThreadTrajectory`` (or its dict), or a
    ``GraphTrajectory`` / dict carrying ``interrupts`` and ``resumes``;
    ``reference_outputs`` is the same, or a ``GraphTrajectory`` whose
    ``interrupts`` / ``resumes`` are ``None`` when not to be checked.

    ``questions`` (interrupt payloads):

    * ``exact``: equal payloads.
    * ``subset``: every expected field is present and equal in the asked payload,
      recursively for dicts (extra fields are fine); lists match item by item.
    * ``contains``: like ``subset``, and an expected string only has to be part
      of the asked one.
    * ``ignore``: questions are not checked.

    ``answers`` (resume values): ``exact``, ``subset`` (as for questions) or
    ``ignore``. ``answer_rules`` maps dotted field paths of the answer
    (``"comment"``, ``"decisions.type"``) to a mode (``exact``, ``subset``,
    ``contains``, ``ignore``) or to ``rule(actual, expected) -> bool``, which
    decides that field instead of ``answers``.

    ``ignore_fields``: dotted paths dropped from questions and answers, on both
    sides, before comparing (ids, timestamps). Paths start at the payload's top
    level; list items share their list's path (``"action_requests.description"``).

    ``by="turn"`` (default) compares turn by turn (the turn counts must agree);
    ``by="thread"`` compares all questions, and all answers, of the thread as
    two sequences, whatever turns they came in.

    In every turn, the number of questions must agree; several questions of
    one turn (parallel interrupts) are compared in the order of their nodes'
    paths, so list a reference's payloads in that order.

    The score is a bool under the key ``hitl_match``; the comment names the
    first difference (``Turn 2: answered 'reject', expected 'approve'.``);
    ``metadata["turns"]`` holds, per turn, the questions and the answer on both
    sides and whether each matched (``None``: not checked). A reference with
    neither ``interrupts`` nor ``resumes`` gives no score (``None``) and says so.

    ``calls_after_answer`` (default on) also checks what the run did after each
    answer, when ``outputs`` is a thread with messages: the calls the answer's own
    question asked about, at the depth where it was asked (a
    ``HumanInTheLoopMiddleware`` question names them, by ``tool_call_id`` or by its
    ``action_requests``; another payload asked by a root node is about the calls the
    state held unanswered then: those it names, else all), must be executed after
    an approval or an edit (an edit as edited) and must not be after a rejection
    or a ``respond``. A call is executed when its tool ran (a tool message answers
    it, not one written in the tool's place); see
    :func:`lg_eval.messages.call_outcomes`. ``decision(answer)`` returns
    ``"approve"``, ``"edit"``, ``"reject"``, ``"respond"`` or ``None`` (not
    checked) for a question's answer; the default reads ``True`` / ``False``,
    words such as ``approve`` / ``reject`` / ``yes`` / ``no``, ``{"type": ...}``-style
    dicts and LangChain's ``{"decisions": [...]}`` (one per named call, in order).
    ``metadata["calls_after_answer"]`` lists each checked call.

    Raises:
        InvalidOptionError: an unknown mode, a bad rule or field path, or a
            ``decision`` that is not callable.
    """
    _check_mode("questions", questions, QUESTION_MODES)
    _check_mode("answers", answers, ANSWER_MODES)
    _check_mode("by", by, HITL_SCOPES)
    rules = _answer_rules(answer_rules)
    if rules and answers == "ignore":
        raise InvalidOptionError(
            "answer_rules have no effect with answers='ignore'; drop them or choose "
            "answers='exact' or 'subset'."
        )
    if decision is not None and not callable(decision):
        raise InvalidOptionError(
            f"decision must be a function (answer) -> 'approve' | 'reject' | None, not "
            f"{type(decision).__name__}."
        )
    dropped = field_tree(_field_paths(ignore_fields))
    options = Options(questions, answers, rules, dropped, by)
    decide = decision or decision_of

    def scorer(*, outputs: Any, reference_outputs: Any = None, **_: Any) -> Feedback:
        require(reference_outputs, "reference_outputs", KEY)
        expected = read(reference_outputs, "reference_outputs")
        actual = read(outputs, "outputs")
        verdict = judge(options, actual, expected)
        if not calls_after_answer or verdict.score is None:
            return verdict
        thread = actual.thread
        return verdict if thread is None else check_calls(verdict, thread, decide)

    scorer.__doc__ = create_hitl_evaluator.__doc__
    return make_evaluator(KEY, scorer, reads="thread")


# --------------------------------------------------------------------------- options


def _check_mode(name: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise InvalidOptionError(
            f"{name}={value!r} is not allowed; use one of {', '.join(allowed)}."
        )


def _field_paths(paths: Any, option: str = "ignore_fields") -> list[str]:
    if isinstance(paths, str) or not isinstance(paths, Sequence | set | frozenset):
        raise InvalidOptionError(
            f"{option} takes a list of dotted field paths, not {type(paths).__name__} {paths!r}."
        )
    for path in paths:
        _check_path(path, option)
    return list(paths)


def _check_path(path: Any, option: str) -> None:
    if not isinstance(path, str) or not path or any(not part for part in path.split(".")):
        raise InvalidOptionError(
            f"{option}: {path!r} is not a dotted field path (like 'amount' or 'review.comment')."
        )


def _answer_rules(rules: Mapping[str, FieldRule] | None) -> dict[str, FieldRule]:
    if rules is None:
        return {}
    if not isinstance(rules, Mapping):
        raise InvalidOptionError(
            f"answer_rules must map field paths to rules, not {type(rules).__name__}."
        )
    for path, rule in rules.items():
        _check_path(path, "answer_rules")
        if not callable(rule) and rule not in FIELD_MODES:
            raise InvalidOptionError(
                f"answer_rules[{path!r}]={rule!r} is not allowed; use one of "
                f"{', '.join(FIELD_MODES)}, or a function (actual, expected) -> bool."
            )
    return dict(rules)
