"""Rows of the results store that do not read (#40 item 6): a run record, a case result or a
feedback row changed by hand, written by another program or cut short. Every command that
reads them gives one line naming the store, the run and the row, exit 2, never a traceback
and never the row's content (a stranger may have written it), on SQLite and Postgres.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from lg_eval.cli._common import INPUT_ERROR
from lg_eval.errors import StoreError
from lg_eval.experiments import open_store
from tests.security.conftest import WEATHER, invoke, squash

CONTENT = "bogus\x1b]0;owned\x07<script>"
DAMAGE: dict[str, tuple[str, str, str]] = {
    # what, SQL (one ? for the damaged value), the row as the message names it
    "a run record that is cut short": (
        "UPDATE lg_eval_runs SET info = ? WHERE run_id = 'r1'",
        '{"run_id": "r1", "dataset": "' + CONTENT,
        "record of run 'r1'",
    ),
    "a case result that does not validate": (
        "UPDATE lg_eval_cases SET result = ? WHERE run_id = 'r1' AND case_id = 'sunny-sf'",
        '{"run_id": "r1", "case_id": "sunny-sf", "status": ' + json.dumps(CONTENT) + "}",
        "case result (case 'sunny-sf', repetition 0) of run 'r1'",
    ),
    "a feedback row that does not validate": (  # JSON still: SQLite's index reads it
        "UPDATE lg_eval_scores SET row = ? WHERE run_id = 'r1' AND case_id = 'sunny-sf'",
        '{"evaluator": 1, "key": '
        + json.dumps(CONTENT)
        + ', "extra": '
        + json.dumps(CONTENT)
        + "}",
        "feedback row (case 'sunny-sf', repetition 0) of run 'r1'",
    ),
}


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, here: dict[str, str]) -> Iterator[str]:
    url = here["store"] if request.param == "sqlite" else request.getfixturevalue("pg_url")
    result = invoke(
        "run", str(WEATHER), "--run-id", "r1", "--store", url,
        "--checkpointer", here["checkpointer"], "--quiet",
    )  # fmt: skip
    assert result.exit_code in (0, 3), result.output
    yield url


def _damage(url: str, statement: str, value: str) -> None:
    with open_store(url) as store:
        store.execute_many(statement, [(value,)])


def _commands(url: str, here: dict[str, str]) -> list[tuple[str, ...]]:
    return [
        ("report", "r1", "--store", url),
        ("report", "r1", "--store", url, "--format", "json"),
        ("compare", "r1", "r1", "--store", url),
        ("run", str(WEATHER), "--run-id", "r1", "--store", url,
         "--checkpointer", here["checkpointer"], "--quiet"),
    ]  # fmt: skip


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_stored_row_that_does_not_read_is_one_line_naming_run_and_row(
    store_url: str, here: dict[str, str], damage: str
) -> None:
    statement, value, row = DAMAGE[damage]
    _damage(store_url, statement, value)
    commands = _commands(store_url, here)
    if "run record" in damage:
        commands.append(("runs", "--store", store_url))
    for command in commands:
        result = invoke(*command)
        assert result.exit_code == INPUT_ERROR, (command, result.output)
        message = squash(result.stderr)
        assert squash(f"holds a {row} that lg_eval cannot read") in message, (command, message)
        assert "Traceback" not in result.output and len(result.stderr.strip().splitlines()) == 1
        assert "bogus" not in result.output and "<script>" not in result.output
        assert "\x1b" not in result.output and "\x07" not in result.output
    with open_store(store_url) as store, pytest.raises(StoreError, match="cannot read"):
        store.load_run("r1")


def test_the_viewer_names_the_row_that_does_not_read(store_url: str) -> None:
    statement, value, row = DAMAGE["a case result that does not validate"]
    _damage(store_url, statement, value)
    from lg_eval.viewer import make_viewer

    server = make_viewer(store_url)
    server.start()
    try:
        import urllib.error
        import urllib.request

        with pytest.raises(urllib.error.HTTPError) as failed:
            urllib.request.urlopen(server.url + "case?run=r1&id=sunny-sf", timeout=300)
        body = failed.value.read().decode()
    finally:
        server.stop()
    assert failed.value.code == 500
    assert squash(f"holds a {row} that lg_eval cannot read") in squash(body)
    assert "bogus" not in body and "<script>" not in body
