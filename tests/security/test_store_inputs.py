"""Store URLs and store files an attacker (or bad luck) hands the CLI: one line, exit 2,
no password, no traceback, and nothing created where it should not be."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lg_eval.cli._common import INPUT_ERROR
from lg_eval.errors import InvalidOptionError, StoreError
from lg_eval.experiments import open_store
from tests.security.conftest import WEATHER, invoke, squash

PASSWORD = "hunter2secret"


def _run(store: str, checkpointer: str, run_id: str = "r1") -> object:
    return invoke(
        "run", str(WEATHER), "--run-id", run_id, "--store", store,
        "--checkpointer", checkpointer, "--quiet",
    )  # fmt: skip


# --- malformed Postgres URLs (item 3) -----------------------------------------------------


@pytest.mark.parametrize(
    ("url", "shown", "problem"),
    [
        (
            f"postgresql://u:p%ZZ{PASSWORD}@127.0.0.1:5432/db",
            "postgresql://u:***@127.0.0.1:5432/db",
            'ProgrammingError: invalid percent-encoded token: "***"',
        ),
        (
            f"postgres://u:{PASSWORD}@[::1:5432/x",
            "postgres://u:***@[::1:5432/x",
            'ProgrammingError: end of string reached when looking for matching "]" in IPv6 '
            'host address in URI: "postgres://u:***@[::1:5432/x"',
        ),
    ],
)
@pytest.mark.parametrize("command", ["runs", "run"])
def test_a_malformed_postgres_store_url_is_refused_without_its_password(
    here: dict[str, str], url: str, shown: str, problem: str, command: str
) -> None:
    if command == "runs":
        result = invoke("runs", "--store", url)
    else:
        result = _run(url, here["checkpointer"])
    assert result.exit_code == INPUT_ERROR
    assert PASSWORD not in result.output
    assert squash(result.stderr) == squash(
        f"lg-eval: cannot open the results store {shown}: {problem}. Check the URL "
        "(postgresql://user:password@host:port/dbname, special characters in the password "
        "percent-encoded) and that the server is running."
    )


def test_an_unreachable_postgres_store_is_refused_without_its_password(tmp_path: Path) -> None:
    with pytest.raises(StoreError) as caught:
        open_store(f"postgresql://u:{PASSWORD}@127.0.0.1:1/db?connect_timeout=2")
    message = str(caught.value)
    assert PASSWORD not in message and caught.value.__cause__ is None
    assert message.startswith("cannot open the results store postgresql://u:***@127.0.0.1:1/")


# --- a keyword DSN is not a file name (item 4) --------------------------------------------


@pytest.mark.parametrize("command", ["runs", "run"])
def test_a_keyword_dsn_store_is_refused_and_creates_no_file(
    here: dict[str, str], tmp_path: Path, command: str
) -> None:
    dsn = f"host=127.0.0.1 port=5432 password={PASSWORD} dbname=lg"
    before = sorted(os.listdir(tmp_path))
    result = (
        invoke("runs", "--store", dsn) if command == "runs" else _run(dsn, here["checkpointer"])
    )
    assert result.exit_code == INPUT_ERROR
    assert PASSWORD not in result.output
    assert squash(result.stderr) == squash(
        "lg-eval: store: 'host=127.0.0.1 port=5432 password=*** dbname=lg' is a libpq "
        "keyword DSN; lg_eval takes Postgres as a URL: write "
        "postgresql://user:password@host:port/dbname (percent-encode special characters in "
        "the password). A SQLite file whose name has '=' in it is written sqlite:///name."
    )
    assert sorted(os.listdir(tmp_path)) == before


def test_a_sqlite_url_may_name_a_file_with_an_equals_sign(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path / 'a=b.sqlite'}") as store:
        assert store.runs() == []
    with pytest.raises(InvalidOptionError, match="libpq keyword DSN"):
        open_store("dbname=lg")


# --- corrupt store files (item 7) ---------------------------------------------------------


def _corrupt(kind: str, good: Path, target: Path) -> None:
    data = good.read_bytes()
    target.write_bytes(os.urandom(8192) if kind == "random bytes" else data[: len(data) // 2])


@pytest.fixture(scope="module")
def good_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding run r1 of the weather dataset (checkpointed WAL folded into the file)."""
    folder = tmp_path_factory.mktemp("good")
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        import sys

        sys.path.insert(0, str(WEATHER.parents[2]))
        result = _run(f"sqlite:///{folder / 'r.sqlite'}", f"sqlite:///{folder / 'c.sqlite'}")
        assert result.exit_code == 0
    finally:
        os.chdir(cwd)
    with open_store(folder / "r.sqlite") as store:
        store.query("PRAGMA wal_checkpoint(TRUNCATE)", ())
    return folder / "r.sqlite"


@pytest.mark.parametrize("kind", ["random bytes", "truncated"])
@pytest.mark.parametrize("command", ["runs", "report", "run", "sweep"])
def test_a_corrupt_store_is_an_input_error_in_every_command(
    here: dict[str, str], tmp_path: Path, good_store: Path, kind: str, command: str
) -> None:
    bad = tmp_path / "bad.sqlite"
    _corrupt(kind, good_store, bad)
    store = f"sqlite:///{bad}"
    args = {
        "runs": ["runs", "--store", store],
        "report": ["report", "r1", "--store", store],
        "run": ["run", str(WEATHER), "--store", store, "--checkpointer", here["checkpointer"]],
        "sweep": [
            "sweep", "--graph", "graphs.weather:build",
            "--checkpointer", f"sqlite:///{good_store.with_name('c.sqlite')}", "--store", store,
        ],
    }[command]  # fmt: skip
    result = invoke(*args, "--quiet") if command in ("run", "sweep") else invoke(*args)
    reason = "file is not a database" if kind == "random bytes" else "database disk image is"
    assert result.exit_code == INPUT_ERROR
    assert squash(result.stderr).startswith(
        squash(f"lg-eval: the results store {store} is not a usable SQLite database ({reason}")
    )
    assert squash(result.stderr).endswith(
        squash("it may be corrupt or another kind of file: move it aside, or pass another --store.")
    )
