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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ValidationError

from lg_eval.errors import InvalidOptionError, TrajectoryFormatError
from lg_eval.evaluator import Evaluator, make_evaluator
from lg_eval.feedback import Feedback
from lg_eval.inputs import require
from lg_eval.trajectory import GraphTrajectory, InterruptRecord, ThreadTrajectory, Turn

QuestionMode = Literal["exact", "subset", "contains", "ignore"]
AnswerMode = Literal["exact", "subset", "ignore"]
FieldMode = Literal["exact", "subset", "contains", "ignore"]
FieldRule = FieldMode | Callable[[Any, Any], bool]
"""How one answer field is compared: a mode, or ``rule(actual, expected) -> bool``."""
HitlScope = Literal["turn", "thread"]

QUESTION_MODES: tuple[str, ...] = ("exact", "subset", "contains", "ignore")
ANSWER_MODES: tuple[str, ...] = ("exact", "subset", "ignore")
FIELD_MODES: tuple[str, ...] = ("exact", "subset", "contains", "ignore")
HITL_SCOPES: tuple[str, ...] = ("turn", "thread")

KEY = "hitl_match"
_SHOWN = 160  # longest payload repr a comment shows in full


def create_hitl_evaluator(
    *,
    questions: QuestionMode = "exact",
    answers: AnswerMode = "exact",
    answer_rules: Mapping[str, FieldRule] | None = None,
    ignore_fields: Sequence[str] = (),
    by: HitlScope = "turn",
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

    Raises:
        InvalidOptionError: an unknown mode, a bad rule or field path.
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
    dropped = _field_tree(_field_paths(ignore_fields))
    options = _Options(questions, answers, rules, dropped, by)

    def scorer(*, outputs: Any, reference_outputs: Any = None, **_: Any) -> Feedback:
        require(reference_outputs, "reference_outputs", KEY)
        expected = _read(reference_outputs, "reference_outputs")
        actual = _read(outputs, "outputs")
        return _judge(options, actual, expected)

    scorer.__doc__ = create_hitl_evaluator.__doc__
    return make_evaluator(KEY, scorer, reads="thread")


# --------------------------------------------------------------------------- options


@dataclass(frozen=True)
class _Options:
    questions: str
    answers: str
    rules: dict[str, FieldRule]
    dropped: dict[str, Any]
    by: str


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


def _field_tree(paths: list[str]) -> dict[str, Any]:
    """Dotted paths as nested dicts; ``None`` marks a dropped field."""
    tree: dict[str, Any] = {}
    for path in sorted(paths, key=lambda p: p.count(".")):  # a dropped parent wins
        node: dict[str, Any] | None = tree
        *parents, last = path.split(".")
        for part in parents:
            node = node.setdefault(part, {}) if node is not None else None
        if node is not None:
            node[last] = None
    return tree


def _drop(value: Any, tree: Mapping[str, Any]) -> Any:
    """``value`` without the fields ``tree`` names (list items share their list's path)."""
    if not tree:
        return value
    if isinstance(value, Mapping):
        return {
            key: item if key not in tree else _drop(item, tree[key])
            for key, item in value.items()
            if not (key in tree and tree[key] is None)
        }
    if isinstance(value, list | tuple):
        return [_drop(item, tree) for item in value]
    return value


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class _Side:
    """Per turn, the questions asked (``None``: not known) and the answer given."""

    questions: list[list[Any]] | None
    answers: list[Any] | None


_EXPECTED = (
    "a ThreadTrajectory (lg_eval.extract_thread), or a GraphTrajectory / dict carrying "
    "'interrupts' (per turn, a list of interrupt payloads) and/or 'resumes' (per turn, the "
    "resume value or None)"
)
_GRAPH_KEYS = frozenset(GraphTrajectory.model_fields)


def _read(value: Any, argument: str) -> _Side:
    if isinstance(value, ThreadTrajectory):
        return _from_thread(value)
    if isinstance(value, GraphTrajectory):
        return _from_graph(value, argument)
    if isinstance(value, Mapping):
        if "turns" in value:
            return _from_thread(_validated(ThreadTrajectory, value, argument))
        if "outputs" in value and isinstance(value["outputs"], Mapping | GraphTrajectory):
            return _read(value["outputs"], f"{argument}['outputs']")
        if not _GRAPH_KEYS.isdisjoint(value):
            return _from_graph(_validated(GraphTrajectory, value, argument), argument)
        raise TrajectoryFormatError(
            f"{argument} is a dict without 'turns', 'interrupts' or 'resumes'; the HITL "
            f"evaluator expects {_EXPECTED}."
        )
    raise TrajectoryFormatError(
        f"{argument} is a {type(value).__name__}; the HITL evaluator expects {_EXPECTED}."
    )


def _validated(
    model: type[ThreadTrajectory] | type[GraphTrajectory], data: Mapping[str, Any], argument: str
) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in exc.errors()[:3]
        )
        raise TrajectoryFormatError(  # not "{argument} ...": no field-lookup hint is due
            f"The HITL evaluator could not read {argument} as a {model.__name__}: {problems}. "
            f"It expects {_EXPECTED}."
        ) from exc


def _from_thread(thread: ThreadTrajectory) -> _Side:
    questions: list[list[Any]] = []
    answers: list[Any] = []
    pending: list[InterruptRecord] = []
    for turn in thread.turns:
        answers.append(_answer(turn, pending))
        pending = _in_path_order(turn.interrupts)
        questions.append([record.value for record in pending])
    return _Side(questions, answers)


def _in_path_order(records: list[InterruptRecord]) -> list[InterruptRecord]:
    """Interrupts sorted by node path; ties (one node, several tasks) keep their order."""
    return sorted(records, key=lambda record: record.path)


def _answer(turn: Turn, pending: list[InterruptRecord]) -> Any:
    """The resume value of a resume turn; a list when it answered several interrupts."""
    if turn.kind != "resume":
        return None
    if turn.resume:
        order = {record.id: n for n, record in enumerate(pending)}
        ids = sorted(turn.resume, key=lambda i: order.get(i, len(order)))
        values = [turn.resume[i] for i in ids]
    elif turn.resume_by_node:
        values = [turn.resume_by_node[path] for path in sorted(turn.resume_by_node)]
    else:
        return None
    return values[0] if len(values) == 1 else values


def _from_graph(trajectory: GraphTrajectory, argument: str) -> _Side:
    questions, answers = trajectory.interrupts, trajectory.resumes
    sizes = {
        name: len(items)
        for name, items in (
            ("interrupts", questions),
            ("resumes", answers),
            ("steps", trajectory.steps or None),
        )
        if items is not None
    }
    if len(set(sizes.values())) > 1:
        counts = ", ".join(f"{name!r} has {n}" for name, n in sizes.items())
        raise TrajectoryFormatError(
            f"The HITL evaluator could not read {argument}: its turn counts differ ({counts}); "
            "give one entry per turn (an empty list for a turn that asked nothing, None for "
            "a turn that was not a resume)."
        )
    return _Side(questions, answers)


# --------------------------------------------------------------------------- judging


def _judge(options: _Options, actual: _Side, expected: _Side) -> Feedback:
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
            f"outputs carries no interrupts, which the reference expects; pass {_EXPECTED}."
        )
    if check_answers and actual.answers is None:
        raise TrajectoryFormatError(
            f"outputs carries no resumes, which the reference expects; pass {_EXPECTED}."
        )
    side = _Comparison(options, check_questions, check_answers)
    if options.by == "thread":
        return side.thread(actual, expected, checked)
    return side.turns(actual, expected, checked)


def _wanted(options: _Options) -> str:
    if options.questions == "ignore":
        return "resumes (questions='ignore')"
    if options.answers == "ignore":
        return "interrupts (answers='ignore')"
    return "interrupts or resumes"


_Reason = tuple[str, str]
"""Why a value failed: which item of a turn or thread (``"question 2"``, or ``""``), and how."""


def _labelled(label: str, reason: _Reason) -> str:
    """``Turn 1: ...``, or ``Turn 1, question 2: ...`` when the turn asked several."""
    where, text = reason
    return f"{label}, {where}: {text}" if where else f"{label}: {text}"


@dataclass(frozen=True)
class _Comparison:
    options: _Options
    check_questions: bool
    check_answers: bool

    def turns(self, actual: _Side, expected: _Side, checked: dict[str, bool]) -> Feedback:
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
                reasons.append(_labelled(f"Turn {n + 1}", why))
            rows.append(row)
        metadata = {"by": "turn", "checked": checked, "turns": rows}
        if n_actual != n_expected:
            comment = f"Expected {n_expected} turns, got {n_actual}."
            return Feedback(score=False, comment=comment, metadata=metadata)
        return Feedback(score=not reasons, comment=_first(reasons, "turn"), metadata=metadata)

    def thread(self, actual: _Side, expected: _Side, checked: dict[str, bool]) -> Feedback:
        metadata: dict[str, Any] = {"by": "thread", "checked": checked}
        reasons: list[_Reason] = []
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
        comment = _labelled("The thread", reasons[0]) if reasons else None
        return Feedback(score=not reasons, comment=comment, metadata=metadata)

    # ------------------------------------------------------------------ shaping

    def _questions(self, turns: list[list[Any]] | None) -> list[list[Any]]:
        return [[_drop(q, self.options.dropped) for q in turn] for turn in turns or []]

    def _answers(self, answers: list[Any] | None) -> list[Any]:
        return [_drop(a, self.options.dropped) for a in answers or []]

    # ------------------------------------------------------------------ reasons

    def _questions_reason(self, asked: list[Any], wanted: list[Any]) -> _Reason | None:
        if len(asked) != len(wanted):
            return (
                "",
                f"expected {_count(len(wanted), 'question')}, the graph asked {_asked(asked)}.",
            )
        for n, (got, want) in enumerate(zip(asked, wanted, strict=True)):
            difference = _difference(got, want, self.options.questions, {})
            if difference is not None:
                which = f"question {n + 1}" if len(asked) > 1 else ""
                return which, f"asked {_show(got)}, expected {_show(want)}{difference}."
        return None

    def _answer_reason(self, got: Any, want: Any) -> _Reason | None:
        if got is None and want is None:
            return None
        if got is None:
            return "", f"expected the answer {_show(want)}, none was given."
        if want is None:
            return "", f"answered {_show(got)}, expected no answer."
        difference = _difference(got, want, self.options.answers, self.options.rules)
        if difference is None:
            return None
        return "", f"answered {_show(got)}, expected {_show(want)}{difference}."

    def _answers_reason(self, given: list[Any], wanted: list[Any]) -> _Reason | None:
        if len(given) != len(wanted):
            return "", f"expected {_count(len(wanted), 'answer')}, got {len(given) or 'none'}."
        for n, (got, want) in enumerate(zip(given, wanted, strict=True)):
            why = self._answer_reason(got, want)
            if why is not None:
                return (f"answer {n + 1}" if len(given) > 1 else "", why[1])
        return None


# --------------------------------------------------------------------------- values


@dataclass(frozen=True)
class _Mismatch:
    """Where a value fails its expectation: ``where`` is the field path comments name
    (with list positions, ``""`` for the whole value)."""

    where: str
    problem: Literal["differs", "missing", "unexpected", "length", "rule"]
    detail: str = ""

    def note(self) -> str:
        """`` (field 'amount')``-style note for a comment; ``""`` for the whole value."""
        field = f"field {self.where!r}"
        if self.problem == "missing":
            return f" ({field} missing)"
        if self.problem == "unexpected":
            return f" (unexpected {field})"
        if self.problem == "length":
            return f" ({field}: {self.detail})" if self.where else f" ({self.detail})"
        if self.problem == "rule":
            return f" ({field} failed its rule)" if self.where else " (failed its rule)"
        return f" ({field})" if self.where else ""


def _difference(
    actual: Any, expected: Any, mode: str, rules: Mapping[str, FieldRule]
) -> str | None:
    """The note on where ``actual`` fails ``expected`` (see :meth:`_Mismatch.note`), or
    ``None`` when it matches."""
    found = _compare(actual, expected, mode, rules, (), "")
    return None if found is None else found.note()


def _compare(
    actual: Any,
    expected: Any,
    mode: str,
    rules: Mapping[str, FieldRule],
    path: tuple[str, ...],
    shown: str,
) -> _Mismatch | None:
    """The first place ``actual`` fails ``expected`` under ``mode``, or ``None``.

    ``path`` is the rule path (dict keys only: list items share their list's
    path), ``shown`` the path comments name (with list positions).
    """
    rule = rules.get(".".join(path)) if path else None
    if callable(rule):
        return None if rule(actual, expected) else _Mismatch(shown, "rule")
    mode = rule or mode
    if mode == "ignore":
        return None
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        return _compare_fields(actual, expected, mode, rules, path, shown)
    if isinstance(actual, list | tuple) and isinstance(expected, list | tuple):
        if len(actual) != len(expected):
            return _Mismatch(shown, "length", f"{len(actual)} items, expected {len(expected)}")
        for n, (got, want) in enumerate(zip(actual, expected, strict=True)):
            found = _compare(got, want, mode, rules, path, f"{shown}[{n}]")
            if found is not None:
                return found
        return None
    if mode == "contains" and isinstance(actual, str) and isinstance(expected, str):
        matched = expected in actual
    else:
        matched = _equal(actual, expected)
    return None if matched else _Mismatch(shown, "differs")


def _compare_fields(
    actual: Mapping[Any, Any],
    expected: Mapping[Any, Any],
    mode: str,
    rules: Mapping[str, FieldRule],
    path: tuple[str, ...],
    shown: str,
) -> _Mismatch | None:
    """Expected fields must be present and match; ``exact`` also forbids extra ones. A
    field whose rule is ``ignore`` may be absent or extra."""
    for key, want in expected.items():
        sub = (*path, str(key))
        if key not in actual:
            if rules.get(".".join(sub)) != "ignore":
                return _Mismatch(_join(shown, key), "missing")
            continue
        found = _compare(actual[key], want, mode, rules, sub, _join(shown, key))
        if found is not None:
            return found
    if mode == "exact":
        for key in actual:
            if key not in expected and rules.get(".".join((*path, str(key)))) != "ignore":
                return _Mismatch(_join(shown, key), "unexpected")
    return None


def _equal(actual: Any, expected: Any) -> bool:
    """``==``, except that a bool never equals a number (``True`` is not ``1`` here)."""
    if isinstance(actual, bool) != isinstance(expected, bool):
        return False
    return bool(actual == expected)


def _join(shown: str, key: Any) -> str:
    return f"{shown}.{key}" if shown else str(key)


def _at(items: list[Any], n: int) -> Any:
    return items[n] if n < len(items) else None


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN else f"{text[: _SHOWN - 3]}..."


def _count(n: int, noun: str) -> str:
    return f"no {noun}s" if n == 0 else f"1 {noun}" if n == 1 else f"{n} {noun}s"


def _asked(asked: list[Any]) -> str:
    return "none" if not asked else f"{len(asked)}: {', '.join(_show(q) for q in asked)}"


def _first(reasons: list[str], unit: str) -> str | None:
    if not reasons:
        return None
    more = f" ({len(reasons) - 1} more {unit}(s) differ.)" if len(reasons) > 1 else ""
    return reasons[0] + more


__all__ = [
    "ANSWER_MODES",
    "FIELD_MODES",
    "HITL_SCOPES",
    "QUESTION_MODES",
    "AnswerMode",
    "FieldRule",
    "QuestionMode",
    "create_hitl_evaluator",
]
