"""A newcomer's typos in ``run``: one line, exit 2, before any case runs, nothing created.

A typo in ``--graph`` (a module that does not import, an attribute that is not there) is
caught as the same typo in the dataset's ``graph:`` is, and so is an evaluator name the
registry does not know: the message is the one ``dataset validate`` gives, naming the file
and the field, with the near name. Nothing is written: no ``.lg_eval`` folder, no store,
no checkpointer file, no run record.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lg_eval import run_experiment
from lg_eval.datasets import load_dataset
from lg_eval.errors import InvalidOptionError
from tests.cli.newcomer import ROOT, files, lg_eval

WEATHER = (ROOT / "examples" / "golden" / "weather.yaml").read_text()


@pytest.mark.parametrize(
    ("graph", "message"),
    [
        (
            "graphs.weather:bulid",
            "lg-eval: target 'graphs.weather:bulid': module 'graphs.weather' has no attribute "
            "'bulid' (did you mean 'build'?).",
        ),
        (
            "graphs.wether:build",
            "lg-eval: target 'graphs.wether:build': importing module 'graphs.wether' failed with "
            "ModuleNotFoundError: No module named 'graphs.wether'.",
        ),
    ],
    ids=["attribute", "module"],
)
def test_a_graph_typo_is_one_line_and_exit_2_and_stores_nothing(
    folder: Path, graph: str, message: str
) -> None:
    (folder / "weather.yaml").write_text(WEATHER)
    before = files(folder)
    result = lg_eval("run", "weather.yaml", "--graph", graph)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [message]
    assert result.stdout == ""
    assert files(folder) == before == ["weather.yaml"]


def test_the_same_typo_in_the_dataset_file_creates_nothing_either(folder: Path) -> None:
    (folder / "weather.yaml").write_text(
        WEATHER.replace("graph: graphs.weather:build", "graph: graphs.weather:bulid")
    )
    result = lg_eval("run", "weather.yaml")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "lg-eval: target 'graphs.weather:bulid': module 'graphs.weather' has no attribute "
        "'bulid' (did you mean 'build'?)."
    ]
    assert files(folder) == ["weather.yaml"]


def test_an_unknown_evaluator_gets_the_near_name_with_file_and_field(folder: Path) -> None:
    text = WEATHER.replace("  - graph_trajectory_strict_match\n", "  - graph_trajectory_strict\n")
    (folder / "weather.yaml").write_text(text)
    result = lg_eval("run", "weather.yaml")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "lg-eval: weather.yaml: evaluators[0]: no evaluator is registered as "
        "'graph_trajectory_strict'; did you mean 'graph_trajectory_strict_match'?"
    ]
    validated = lg_eval("dataset", "validate", "weather.yaml")
    assert validated.stderr.splitlines() == result.stderr.splitlines()
    assert files(folder) == ["weather.yaml"]  # no run left "running" in a new store


def test_a_case_evaluator_typo_names_the_case(folder: Path) -> None:
    text = WEATHER.replace(
        "    tags: [hitl]\n", "    tags: [hitl]\n    evaluators: [exact_mach]\n", 1
    )
    (folder / "weather.yaml").write_text(text)
    result = lg_eval("run", "weather.yaml")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "lg-eval: weather.yaml: case 'sunny-sf', evaluators[0]: no evaluator is registered as "
        "'exact_mach'; did you mean 'exact_match'?"
    ]
    assert files(folder) == ["weather.yaml"]


def test_the_python_api_raises_the_typed_error_and_stores_nothing(folder: Path) -> None:
    (folder / "weather.yaml").write_text(WEATHER)
    dataset = load_dataset(folder / "weather.yaml")
    with pytest.raises(InvalidOptionError, match=r"no attribute 'bulid' \(did you mean 'build'"):
        run_experiment("graphs.weather:bulid", dataset)
    assert files(folder) == ["weather.yaml"]
