"""Report and output files on a full disk: written whole or not at all, exit code 4."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from lg_eval._files import write_atomic
from lg_eval.cli._common import WRITE_FAILED
from lg_eval.errors import OutputWriteError
from tests.security.conftest import WEATHER, fill, invoke, squash


def _run(here: dict[str, str], run_id: str, *extra: str) -> object:
    return invoke(
        "run", str(WEATHER), "--run-id", run_id, "--store", here["store"],
        "--checkpointer", here["checkpointer"], "--quiet", *extra,
    )  # fmt: skip


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name != "filler")


@pytest.mark.parametrize("fmt", ["html", "md", "json", "junit"])
def test_report_to_a_full_disk_exits_4_and_leaves_the_old_file(
    here: dict[str, str], small_disk: Path, fmt: str
) -> None:
    assert _run(here, "r1").exit_code == 0
    target = small_disk / f"report.{fmt}"
    target.write_text("the previous report\n", encoding="utf-8")
    fill(small_disk)
    result = invoke("report", "r1", "--store", here["store"], "-f", fmt, "-o", str(target))
    assert result.exit_code == WRITE_FAILED
    assert squash(result.stderr) == squash(
        f"lg-eval: cannot write {target}: No space left on device; the file was left as it "
        "was (free space or fix the permissions, then run again)."
    )
    assert target.read_text(encoding="utf-8") == "the previous report\n"
    assert _leftovers(small_disk) == [target.name]


@pytest.mark.parametrize("option", ["--html", "--json", "--junit", "--md"])
def test_run_reports_to_a_full_disk_exit_4_not_the_gate_code(
    here: dict[str, str], small_disk: Path, option: str
) -> None:
    fill(small_disk)
    target = small_disk / "out" / "report"
    result = _run(here, "r1", option, str(target))
    assert result.exit_code == WRITE_FAILED
    assert "Traceback" not in result.output
    assert squash(result.stderr).startswith(squash(f"lg-eval: cannot write {target}: "))
    assert not target.exists()
    assert _leftovers(small_disk / "out") == []


def test_sweep_html_to_a_full_disk_exits_4(
    here: dict[str, str], small_disk: Path, tmp_path: Path
) -> None:
    assert _run(here, "r1").exit_code == 0  # threads to sweep
    fill(small_disk)
    target = small_disk / "sweep.html"
    result = invoke(
        "sweep", "--graph", "graphs.weather:build", "--checkpointer", here["checkpointer"],
        "--store", f"sqlite:///{tmp_path / 'sweep.sqlite'}", "--quiet", "--html", str(target),
    )  # fmt: skip
    assert result.exit_code == WRITE_FAILED
    assert squash(result.stderr).startswith(squash(f"lg-eval: cannot write {target}: "))
    assert _leftovers(small_disk) == []


def test_a_new_report_is_private_and_a_rewritten_one_keeps_its_mode(tmp_path: Path) -> None:
    fresh = write_atomic(tmp_path / "new.html", "<p>thread text</p>")
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o600
    shared = tmp_path / "shared.html"
    shared.write_text("old", encoding="utf-8")
    os.chmod(shared, 0o644)
    write_atomic(shared, "new")
    assert (shared.read_text(encoding="utf-8"), stat.S_IMODE(shared.stat().st_mode)) == (
        "new",
        0o644,
    )


def test_a_failed_write_raises_a_typed_error_naming_the_path(small_disk: Path) -> None:
    fill(small_disk)
    with pytest.raises(OutputWriteError, match=r"cannot write .*big\.txt: No space left"):
        write_atomic(small_disk / "big.txt", "x" * 100_000)
    assert _leftovers(small_disk) == []
