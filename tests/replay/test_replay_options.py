"""Input contracts of the replay options: a typed error naming the option, or a value."""

from __future__ import annotations

from pathlib import Path

import aiosqlite
import pytest
from hypothesis import given
from hypothesis import strategies as st
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from lg_eval.errors import InvalidOptionError
from lg_eval.replay import ForkSpec, replay_threads
from tests.replay import helpers


@given(st.text(max_size=30))
def test_any_fork_text_parses_and_round_trips_or_is_a_typed_error(text: str) -> None:
    try:
        spec = ForkSpec.parse(text)
    except InvalidOptionError as exc:
        assert str(exc).startswith(f"fork {text!r}: use last-interrupt, turn:N")
        return
    assert ForkSpec.parse(str(spec)) == spec


@pytest.mark.parametrize(
    "text", ["turn:\u0663", "turn:-1", "turn:0", "turn:01", "turn:", "before:", "before:a b"]
)
def test_near_misses_are_refused(text: str) -> None:
    with pytest.raises(InvalidOptionError, match="use last-interrupt, turn:N"):
        ForkSpec.parse(text)


@given(
    st.integers(min_value=1, max_value=10**6),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]*", fullmatch=True),
)
def test_every_turn_number_and_node_name_parses(turn: int, node: str) -> None:
    assert ForkSpec.parse(f"turn:{turn}") == ForkSpec("turn", turn=turn)
    assert ForkSpec.parse(f"before:{node}") == ForkSpec("before", node=node)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"thread_ids": "t001"},
            "thread_ids='t001': 'str' instances are not allowed as a Sequence value.",
        ),
        ({"thread_ids": [1, 2]}, "thread_ids[0]=1: input should be a valid string;"),
        ({"concurrency": True}, "concurrency=True: input should be a valid integer."),
        ({"concurrency": 2.5}, "concurrency=2.5: input should be a valid integer."),
        ({"concurrency": 0}, "concurrency=0: input should be greater than or equal to 1."),
        ({"limit": -1}, "limit=-1: input should be greater than or equal to 0."),
        ({"limit": "5"}, "limit='5': input should be a valid integer."),
        ({"run": "  "}, "run='  ': use a non-blank text."),
        (
            {"on_new_question": "ask"},
            "on_new_question='ask': input should be 'stop' or 'reviewer'.",
        ),
        ({"target": 42}, "target: a checkpointer (saver) or its URL, not 42"),
        (
            {"thread_ids": ["t001"], "since": "1d"},
            "thread_ids names the threads to replay; since, until and metadata choose",
        ),
        ({"thread_ids": ["t001"], "metadata": {"team": "a"}}, "thread_ids names the threads"),
    ],
)
def test_bad_options_name_the_option_and_what_it_takes(
    options: dict[str, object], message: str
) -> None:
    with pytest.raises(InvalidOptionError) as caught:
        replay_threads(helpers.build_v2, InMemorySaver(), **options)  # type: ignore[arg-type]
    assert str(caught.value).startswith(message)


async def test_an_async_saver_is_refused_naming_the_fix(tmp_path: Path) -> None:
    async with aiosqlite.connect(tmp_path / "a.sqlite") as conn:
        with pytest.raises(InvalidOptionError, match="AsyncSqliteSaver is async only"):
            replay_threads(helpers.build_v2, AsyncSqliteSaver(conn))
