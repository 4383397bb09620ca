"""Every Python block of README.md, CHANGELOG.md and docs/*.md runs, and prints what it shows.

Each ```python block is a complete program: it is run on its own (pytest-examples writes it
to a temporary file and executes it as ``__main__``), its ``print`` calls are captured, and
the ``#>`` comments under each ``print`` must be exactly what it printed. Blocks are also
linted with ruff (unused imports, undefined names).

    .venv/bin/python -m pytest tests/test_docs.py                    # check
    .venv/bin/python -m pytest tests/test_docs.py --update-examples  # rewrite the #> output

Blocks in other fences (```bash, ```text, plain ```) are not run.

A block runs as a reader's script would, from any folder: in an empty working directory,
with neither the repository on ``sys.path`` nor its ``graphs``, ``examples`` or ``tests``
packages importable. A block that needs a checkout of lg_eval says so on its first line
(:data:`CHECKOUT`) and runs from the repository's root.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest
from pytest_examples import CodeExample, EvalExample, find_examples

from lg_eval.evaluators import _registry

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "docs"]
CHECKOUT = "# Run from the root of a checkout of lg_eval"
"""How a block that needs the repository's files begins (the rest of the line says which)."""
LOCAL_PACKAGES = frozenset({"graphs", "examples", "tests"})


def _id(example: CodeExample) -> str:
    return f"{example.path.relative_to(ROOT)}:{example.start_line}"


@pytest.mark.parametrize("example", list(find_examples(*PAGES)), ids=_id)
def test_doc_example(
    example: CodeExample,
    eval_example: EvalExample,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    # No block may reach a real model: a judge created without judge= would need this.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("LG_EVAL_JUDGE_MODEL", raising=False)
    request.addfinalizer(_forgets_registrations())
    eval_example.set_config(line_length=100, target_version="py311", ruff_ignore=["E501"])
    eval_example.lint_ruff(example)  # from the repository: ruff reads its configuration
    if example.source.startswith(CHECKOUT):
        monkeypatch.chdir(ROOT)
    else:
        _anywhere(monkeypatch, tmp_path)
    error = None
    try:
        if eval_example.update_examples:
            eval_example.run_print_update(example)
        else:
            eval_example.run_print_check(example)
    except Exception as exc:  # the print-check failures are pytest outcomes, not Exceptions
        error = _explain(example, exc)
    if error:  # outside the except block: the Failed must not carry the exception as context
        pytest.fail(error, pytrace=False)


def _forgets_registrations() -> Callable[[], None]:
    """A reader's script runs in its own process: what a block registers (an evaluator of
    its own, an entry replaced) is undone by the returned call; what lg_eval's own modules
    register as a block first imports them (the judges) stays."""
    tables = (_registry._REGISTRY, _registry._NEEDS_REFERENCE, _registry._BUILTIN)
    saved = [dict(table) for table in tables]

    def undo() -> None:
        registry = _registry._REGISTRY
        module = {n: str(_registry._origin(registry[n])[0]) for n in registry if n not in saved[0]}
        theirs = [name for name, where in module.items() if not where.startswith("lg_eval.")]
        for table, before in zip(tables, saved, strict=True):
            for name in theirs:
                table.pop(name, None)
            table.update(before)

    return undo


def _anywhere(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Run as from ``folder``, a folder of the reader's: the repository is not on
    ``sys.path`` and its own packages cannot be imported (not even from ``sys.modules``)."""
    monkeypatch.chdir(folder)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if Path(p or ".").resolve() != ROOT])
    for name in [n for n in sys.modules if n.partition(".")[0] in LOCAL_PACKAGES]:
        monkeypatch.delitem(sys.modules, name)


def test_a_block_that_needs_a_checkout_says_why() -> None:
    for example in find_examples(*PAGES):
        first = example.source.splitlines()[0]
        if first.startswith(CHECKOUT):
            assert len(first) > len(CHECKOUT) + 10, f"{_id(example)}: say what it needs"


def _explain(example: CodeExample, exc: Exception) -> str:
    """The block's error with its traceback (pytest-examples' rewritten traceback can make
    pytest's own reporting crash, so it is formatted here)."""
    try:
        details = "".join(traceback.format_exception(exc))
    except Exception:  # a traceback whose positions do not match the code
        details = "".join(traceback.format_exception_only(exc))
    return f"{_id(example)} raised:\n{details}"


def test_readme_is_short() -> None:
    size = (ROOT / "README.md").stat().st_size
    assert size <= 12 * 1024, f"README.md is {size} bytes; keep it at most 12 KB (12,288 bytes)"


def test_doc_links_resolve() -> None:
    """Relative links between the pages point at files that exist."""
    import re

    broken = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text("utf-8")):
            if "://" in target:
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not broken, broken
