"""``lg-eval`` reads like a shell tool: --version, -h, plain usage lines, named metavars,
one exit-code table, and a root command that starts without importing LangGraph."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import lg_eval
from lg_eval.cli import COMMANDS, app, load_command
from lg_eval.cli._common import EXIT_CODES

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()
HEAVY = ("langgraph", "langchain_core", "langsmith", "lg_eval.experiments", "lg_eval.extract")


def invoke(*args: str) -> Any:
    return runner.invoke(app, list(args), prog_name="lg-eval", catch_exceptions=False)


def leaves() -> list[list[str]]:
    """Every command path: ``["run"]``, ..., ``["dataset", "validate"]``."""
    paths = []
    for name, entry in COMMANDS.items():
        command = load_command(name, entry)
        subcommands = getattr(command, "commands", None)
        paths += [[name, sub] for sub in subcommands] if subcommands else [[name]]
    return paths


def test_version_prints_the_project_version() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    result = invoke("--version")
    assert result.exit_code == 0
    assert result.output == f"lg-eval {project['version']}\n"


@pytest.mark.parametrize("path", [[], ["run"], ["dataset"], ["dataset", "from-thread"]])
def test_dash_h_is_help(path: list[str]) -> None:
    short, long = invoke(*path, "-h"), invoke(*path, "--help")
    assert short.exit_code == long.exit_code == 0
    assert short.output == long.output
    assert short.output.startswith(f"Usage: lg-eval {' '.join(path)}".replace("  ", " "))


def test_usage_lines_name_arguments_in_capitals() -> None:
    assert invoke("run", "-h").output.startswith("Usage: lg-eval run [OPTIONS] DATASET\n")
    assert invoke("compare", "-h").output.startswith(
        "Usage: lg-eval compare [OPTIONS] RUN_A RUN_B\n"
    )
    assert invoke("dataset", "validate", "-h").output.startswith(
        "Usage: lg-eval dataset validate [OPTIONS] FILES...\n"
    )


def test_no_help_shows_braces_or_python_type_names() -> None:
    for path in leaves():
        text = invoke(*path, "-h").output
        options = text[text.index("Options:") :]
        assert not re.search(r"\{\w+\}|<(str|int|float|path|list\[.*?\]|\w+ range)>", options), (
            path,
            options,
        )


def test_option_values_are_named_for_what_they_take() -> None:
    text = " ".join(invoke("run", "-h").output.split())
    for shown in (
        "--graph MODULE:ATTR",
        "--checkpointer URL",
        "--threshold KEY=MIN",
        "--fail-under RATE",
        "--concurrency N",
        "--json FILE",
    ):
        assert shown in text
    assert "-f, --format [terminal|html|md|json|junit]" in invoke("report", "-h").output


def test_root_help_lists_every_command_and_the_exit_codes() -> None:
    text = invoke("--help").output
    commands = text[text.index("Commands:") : text.index("Exit codes:")]
    assert re.findall(r"^  (\S+)", commands, re.M) == list(COMMANDS)
    codes = text[text.index("Exit codes:") :].splitlines()[1:]
    assert [line.split()[0] for line in codes if line.strip()] == [
        "0", "1", "2", "3", "4", "5", "130"
    ]  # fmt: skip


def test_the_command_table_says_what_each_command_says_of_itself() -> None:
    for name, entry in COMMANDS.items():
        command = load_command(name, entry)
        first = " ".join((command.help or "").split("\n\n")[0].split())
        assert entry.summary == first, name


def test_the_docs_list_the_same_exit_codes() -> None:
    docs = (ROOT / "docs" / "experiments.md").read_text()
    listed = docs[docs.index("Exit codes (") :].split("\n\n")[1]
    assert [int(n) for n in re.findall(r"^- `(\d+)`", listed, re.M)] == [c for c, _ in EXIT_CODES]


def test_the_root_command_imports_no_langgraph() -> None:
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from lg_eval.cli import app\n"
        "assert CliRunner().invoke(app, ['--help']).exit_code == 0\n"
        f"print(sorted({{m.split('.')[0] if not m.startswith('lg_eval') else m for m in sys.modules"
        f" if m.startswith({HEAVY!r})}}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout == "[]\n"


def test_the_root_package_imports_its_names_on_first_use() -> None:
    from lg_eval.evaluators import graph_trajectory_strict_match
    from lg_eval.experiments import run_experiment

    assert lg_eval.run_experiment is run_experiment
    assert lg_eval.evaluators.graph_trajectory_strict_match is graph_trajectory_strict_match
    assert set(lg_eval.__all__) <= set(dir(lg_eval))
    for name in lg_eval.__all__:
        assert getattr(lg_eval, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        lg_eval.nope  # noqa: B018


def test_compare_prints_only_the_comparison(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))
    weather = ROOT / "examples" / "golden" / "weather.yaml"
    worse = tmp_path / "worse.yaml"
    expectation = 'output: {contains: [sunny, "75"]}'
    worse.write_text(weather.read_text().replace(expectation, "output: {contains: [rain]}", 1))
    store = ["--store", f"sqlite:///{tmp_path / 'results.sqlite'}"]
    for run_id, data in (("base", weather), ("worse", worse)):
        played = invoke(
            "run", str(data), "--run-id", run_id, *store, "--quiet",
            "--checkpointer", f"sqlite:///{tmp_path / 'cp.sqlite'}",
        )  # fmt: skip
        assert played.exit_code == 0, played.output
    compared = invoke("compare", "base", "worse", *store)
    assert compared.exit_code == 1
    text = " ".join(compared.output.split())
    assert "worse against base: pass rate 66.7% → 33.3%" in text
    assert "1 regressed, 0 improved, 0 added, 0 removed, 2 unchanged" in text
    row = next(line for line in compared.output.splitlines() if "regressed" in line)
    cells = [cell.strip() for cell in row.split("│")[1:4]]
    assert cells == ["sunny-sf", "regressed", "passed → failed"]
    assert "lg_eval report" not in text and "latency p50" not in text


def test_every_option_the_docs_name_exists() -> None:
    real = set(re.findall(r"--[a-z][a-z-]+", invoke("-h").output))
    for path in leaves():
        real |= set(re.findall(r"--[a-z][a-z-]+", invoke(*path, "-h").output))
    docs = " ".join(
        p.read_text() for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    )
    named = set(re.findall(r"`lg-eval [^`]*`|^lg-eval .*$", docs, re.M))
    options = {o for text in named for o in re.findall(r"--[a-z][a-z-]+", text)}
    assert sorted(options - real) == []
