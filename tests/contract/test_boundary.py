"""The boundary adapter: annotated contracts checked by ``validated`` raise the one typed
error, naming the argument and the value, before the function's body runs."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from lg_eval._arguments import Count, Flag, Fraction, Seconds, invalid_option, validated
from lg_eval.errors import InvalidOptionError

CALLS: list[tuple[object, ...]] = []


@validated
def configure(
    workers: Count, timeout: Seconds | None = None, *, share: Fraction = 1.0, on: Flag = False
) -> tuple[int, float | None, float, bool]:
    CALLS.append((workers, timeout, share, on))
    return workers, timeout, share, on


def test_good_arguments_arrive_as_their_types() -> None:
    assert configure(2, 3) == (2, 3.0, 1.0, False)
    assert configure(1, None, share=0, on=True) == (1, None, 0.0, True)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((True,), {}, "workers=True: input should be a valid integer."),
        (("3",), {}, "workers='3': input should be a valid integer."),
        ((0,), {}, "workers=0: input should be greater than or equal to 1."),
        ((1, math.nan), {}, "timeout=nan: input should be a finite number."),
        ((1, -1), {}, "timeout=-1: input should be greater than 0."),
        ((1,), {"share": 1.5}, "share=1.5: input should be less than or equal to 1."),
        ((1,), {"on": "yes"}, "on='yes': input should be a valid boolean."),
    ],
)
def test_a_bad_argument_is_named_before_the_body_runs(args, kwargs, message) -> None:
    CALLS.clear()
    with pytest.raises(InvalidOptionError) as raised:
        configure(*args, **kwargs)
    assert str(raised.value) == message
    assert CALLS == []


@given(st.one_of(st.text(), st.booleans(), st.floats(), st.none(), st.lists(st.integers())))
def test_anything_but_a_positive_integer_is_refused_as_a_count(value: object) -> None:
    with pytest.raises(InvalidOptionError, match=r"^workers="):
        configure(value)  # type: ignore[arg-type]


class Inner(BaseModel):
    x: int


def test_a_validation_error_raised_inside_the_body_is_not_taken_for_a_bad_argument() -> None:
    @validated
    def build(size: Count) -> Inner:
        return Inner(x="not a number")  # type: ignore[arg-type]

    with pytest.raises(Exception) as raised:
        build(1)
    assert type(raised.value).__name__ == "ValidationError"


def test_a_models_validation_error_becomes_one_line_naming_each_field() -> None:
    class Options(BaseModel):
        workers: Count
        share: Fraction = 1.0

    with pytest.raises(Exception) as raised:
        Options(workers=0, share=2)  # type: ignore[arg-type]
    error = invalid_option(raised.value)  # type: ignore[arg-type]
    assert str(error) == (
        "workers=0: input should be greater than or equal to 1; "
        "share=2: input should be less than or equal to 1."
    )
