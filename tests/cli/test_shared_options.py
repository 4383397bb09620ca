"""An option that several commands take reads the same in each: one ``--help`` entry and
one error for a bad value, word for word, whichever command is run."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.sqlite import SqliteSaver
from typer.testing import CliRunner

from lg_eval.cli import app

ROOT = Path(__file__).resolve().parents[2]
WEATHER = ROOT / "examples" / "golden" / "weather.yaml"
GRAPH = "tests.sweeps.helpers:build"
runner = CliRunner()

# option -> (the commands that take it, its help entry as every one of them prints it)
HELP: dict[str, tuple[tuple[str, ...], str]] = {
    "--store": (
        ("run", "sweep", "runs", "report", "compare", "view"),
        "--store URL Results store URL (default .lg_eval/results.sqlite).",
    ),
    "--run-id": (("run", "sweep"), "--run-id RUN_ID Name the run; the same id again resumes it."),
    "--json": (("run", "sweep"), "--json FILE Write the JSON report."),
    "--html": (("run", "sweep"), "--html FILE Write the HTML report."),
    "--quiet": (
        ("run", "sweep"),
        "--quiet / --no-quiet No progress and no summary table. [default: no-quiet]",
    ),
    "--redact-pattern": (
        ("run", "sweep"),
        "--redact-pattern REGEX A regex removed from thread text before it is stored (repeatable).",
    ),
    "--no-cache": (("run", "sweep"), "--no-cache Call judge models even for cached prompts."),
    "--executor": (
        ("run", "sweep"),
        "--executor [local|ray] local (this process) or ray (the work in partitions on Ray). "
        "[default: local]",
    ),
    "--ray-address": (
        ("run", "sweep"),
        "--ray-address ADDRESS With --executor ray: the cluster (default: local Ray).",
    ),
    "--judge-rpm": (
        ("run", "sweep"),
        "--judge-rpm N Judge requests per minute, across every worker. [x>=1]",
    ),
    "--judge-tpm": (
        ("run", "sweep"),
        "--judge-tpm N Judge tokens per minute, across every worker. [x>=1]",
    ),
    "--judge-concurrency": (
        ("run", "sweep"),
        "--judge-concurrency N Judge calls in flight at once, in all. [x>=1]",
    ),
    "--api-key": (
        ("run", "sweep"),
        "--api-key KEY With --server: its API key (default $LANGGRAPH_API_KEY); never shown.",
    ),
    "--header": (
        ("run", "sweep"),
        "--header NAME=VALUE With --server: a header sent with every request (repeatable).",
    ),
    "--evaluator": (
        ("sweep", "replay"),
        "--evaluator NAME A registry name or module:attr (repeatable; default redundancy), "
        "with its options after a colon: call_budget:max_tool_calls=2 or "
        "keywords:keywords=[refund],mode=any (values read as YAML: numbers, true, [lists]).",
    ),
    "--since": (
        ("sweep", "replay"),
        "--since WHEN Newest checkpoint at or after: 24h, 30m, 7d or ISO 8601.",
    ),
    "--until": (("sweep", "replay"), "--until WHEN Newest checkpoint before this time."),
    "--metadata": (
        ("sweep", "replay"),
        "--metadata KEY=VALUE Only threads whose metadata has KEY=VALUE: one of their "
        "checkpoints', or a server thread's own (repeatable; all must match).",
    ),
    "--reviewer-model": (
        ("run", "replay"),
        "--reviewer-model PROVIDER:MODEL A chat model ('provider:model') playing "
        "--reviewer-persona, to answer a dataset's turns written `resume: {reviewer: true}` "
        "and the questions a replayed thread's humans never answered (without it a replay "
        "stops there).",
    ),
    "--reviewer-persona": (
        ("run", "replay"),
        "--reviewer-persona TEXT Who the simulated reviewer is. "
        "[default: a careful human reviewer]",
    ),
    "--reviewer-instructions": (
        ("run", "replay"),
        "--reviewer-instructions TEXT How the simulated reviewer decides.",
    ),
    "--format": (
        ("report", "compare"),
        "-f, --format [terminal|html|md|json|junit] Output format. [default: terminal]",
    ),
    "--output": (("report", "compare"), "-o, --output FILE Write to this file (else stdout)."),
}


def help_entries(command: str) -> dict[str, str]:
    """``command -h``'s option entries by long name, each on one line (printed wide, so no
    entry wraps and the text compares whole)."""
    text = runner.invoke(app, [command, "-h"], catch_exceptions=False, terminal_width=1000).output
    entries = {}
    for block in re.split(r"\n(?=  -)", text[text.index("Options:") :])[1:]:
        entry = " ".join(block.split())
        found = re.match(r"(?:-\w, )?(--[\w-]+)", entry)
        assert found is not None, entry
        entries[found.group(1)] = entry
    return entries


@pytest.mark.parametrize("option", list(HELP))
def test_a_shared_option_has_one_help_entry_in_every_command(option: str) -> None:
    commands, expected = HELP[option]
    assert {command: help_entries(command).get(option) for command in commands} == {
        command: expected for command in commands
    }


@pytest.fixture
def where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A real SQLite checkpointer (no threads yet) and a results store under tmp_path."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))
    conn = sqlite3.connect(tmp_path / "cp.sqlite")
    SqliteSaver(conn).setup()
    conn.close()
    return {
        "checkpointer": f"sqlite:///{tmp_path / 'cp.sqlite'}",
        "store": f"sqlite:///{tmp_path / 'results.sqlite'}",
    }


def base(command: str, where: dict[str, str]) -> list[str]:
    """A valid invocation of ``command``, to which one bad option is added."""
    cp, store = where["checkpointer"], where["store"]
    return {
        "run": ["run", str(WEATHER), "--checkpointer", cp, "--store", store, "--quiet"],
        "sweep": ["sweep", "--graph", GRAPH, "--checkpointer", cp, "--store", store, "--quiet"],
        "replay": ["replay", "--graph", GRAPH, "--checkpointer", cp, "--quiet"],
        "runs": ["runs"],
        "report": ["report", "nightly"],
        "compare": ["compare", "nightly", "nightly-2"],
        "view": ["view", "--port", "0"],
    }[command]


def failure(command: str, where: dict[str, str], *bad: str) -> tuple[int, str]:
    result: Any = runner.invoke(app, [*base(command, where), *bad], catch_exceptions=False)
    return result.exit_code, result.stderr


TIME = "use a duration before now (90s, 30m, 24h, 7d, 2w) or ISO 8601."
REGISTRY_MODULE = (
    "evaluator 'nowhere:judge': importing module 'nowhere' failed with ModuleNotFoundError: "
    "No module named 'nowhere' (is the directory holding it on sys.path? run from the "
    "project root)."
)
# (the commands, the bad option and value, the one line each of them prints, exit code 2)
ERRORS: list[tuple[tuple[str, ...], tuple[str, ...], str]] = [
    (("sweep", "replay"), ("--since", "yesterday"), f"--since: time 'yesterday': {TIME}"),
    (("sweep", "replay"), ("--until", "soon"), f"--until: time 'soon': {TIME}"),
    (("sweep", "replay"), ("--metadata", "team"), "--metadata takes KEY=VALUE, got 'team'"),
    (
        ("sweep", "replay"),
        ("--metadata", "team name=x"),
        "metadata key 'team name': letters, digits, _ . - only.",
    ),
    (("sweep", "replay"), ("--evaluator", "nowhere:judge"), REGISTRY_MODULE),
    (("run", "sweep"), ("--executor", "spark"), "--executor 'spark': use local or ray."),
    (("run", "sweep"), ("--ray-address", "auto"), "--ray-address needs --executor ray."),
    (
        ("run", "sweep", "runs", "report", "compare", "view"),
        ("--store", "ftp://results"),
        "store='ftp://results': 'ftp' is not a results store scheme; use "
        "sqlite:///file.sqlite, a path, or postgresql://...",
    ),
]


@pytest.mark.parametrize(
    ("commands", "bad", "message"), ERRORS, ids=[" ".join(e[1]) for e in ERRORS]
)
def test_a_bad_value_of_a_shared_option_is_the_same_error_in_every_command(
    where: dict[str, str], commands: tuple[str, ...], bad: tuple[str, ...], message: str
) -> None:
    assert {command: failure(command, where, *bad) for command in commands} == {
        command: (2, f"lg-eval: {message}\n") for command in commands
    }


@pytest.mark.parametrize("option", ["--judge-rpm", "--judge-tpm", "--judge-concurrency"])
def test_a_judge_limit_below_one_is_the_same_usage_error_in_run_and_sweep(
    where: dict[str, str], option: str
) -> None:
    errors = {command: failure(command, where, option, "0") for command in ("run", "sweep")}
    expected = f"Error: Invalid value for '{option}': Input should be greater than or equal to 1"
    assert {c: (code, text.splitlines()[-1]) for c, (code, text) in errors.items()} == {
        "run": (2, expected),
        "sweep": (2, expected),
    }


def test_replay_refuses_a_bad_since_even_when_it_names_its_threads(
    where: dict[str, str],
) -> None:
    # --thread names the threads, so the time filter is not used; a bad one is still an
    # error, as in sweep, rather than passing unseen.
    code, text = failure("replay", where, "--thread", "t001", "--since", "yesterday")
    assert (code, text) == (2, f"lg-eval: --since: time 'yesterday': {TIME}\n")


@pytest.mark.parametrize("chooser", [("--since", "1d"), ("--until", "2h"), ("--metadata", "a=b")])
def test_replay_refuses_named_threads_with_a_filter_that_would_be_ignored(
    where: dict[str, str], chooser: tuple[str, str]
) -> None:
    code, text = failure("replay", where, "--thread", "t001", *chooser)
    assert (code, text) == (
        2,
        "lg-eval: --thread names the threads to replay; --since, --until and --metadata "
        "choose among all threads, so they would be ignored: give one or the other.\n",
    )


@pytest.fixture(scope="module")
def empty_checkpointer(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("shared") / "cp.sqlite"
    conn = sqlite3.connect(path)
    SqliteSaver(conn).setup()
    conn.close()
    return f"sqlite:///{path}"


def outcome(command: str, checkpointer: str, option: str, value: str) -> tuple[int, str]:
    """The exit code, and the error line when the command refused its input."""
    args = ["--graph", GRAPH, "--checkpointer", checkpointer, "--quiet", option, value]
    if command == "sweep":
        args += ["--store", checkpointer.replace("cp.sqlite", "results.sqlite")]
    result: Any = runner.invoke(app, [command, *args], catch_exceptions=False)
    return result.exit_code, result.stderr if result.exit_code else ""


@settings(max_examples=30, deadline=None)
@given(
    option=st.sampled_from(["--since", "--until", "--metadata"]),
    value=st.one_of(
        st.text(max_size=24),
        st.builds("{}={}".format, st.text(max_size=12), st.text(max_size=12)),
    ).filter(lambda v: not v.startswith("-")),
)
def test_sweep_and_replay_take_or_refuse_the_same_filter_values(
    empty_checkpointer: str, option: str, value: str
) -> None:
    sweep = outcome("sweep", empty_checkpointer, option, value)
    assert outcome("replay", empty_checkpointer, option, value) == sweep
    assert sweep[0] in (0, 2)
    if sweep[0] == 2:
        assert sweep[1].startswith("lg-eval: ") and option.lstrip("-") in sweep[1]
