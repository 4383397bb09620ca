"""The package's shape: a small root, and no private module used from another package."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import lg_eval

PACKAGE = Path(lg_eval.__file__).parent
ROOT = PACKAGE.parent


def test_the_root_exports_the_core_only() -> None:
    assert len(lg_eval.__all__) <= 70
    assert len(set(lg_eval.__all__)) == len(lg_eval.__all__)
    assert all(hasattr(lg_eval, name) for name in lg_eval.__all__)


def test_no_private_module_is_imported_from_another_package() -> None:
    crossings = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).parts
        own = parts[0] if len(parts) > 1 else None  # None: a root module such as _effects.py
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.module):
                continue
            module = node.module.split(".")
            if module[0] != "lg_eval" or len(module) < 3 or module[1] == own:
                continue
            if any(part.startswith("_") for part in module[2:]):
                crossings.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.module}")
    assert crossings == []


def _imports(path: Path) -> list[ast.ImportFrom]:
    """Every ``from lg_eval... import ...`` of a module, function-level imports included."""
    return [
        node
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("lg_eval")
    ]


def _module_name(path: Path) -> str:
    parts = ("lg_eval", *path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def test_no_private_name_is_imported_from_another_module() -> None:
    # A private module may be imported within its package (`from lg_eval.x import _y` names
    # a module); a private *name* is its module's own business.
    crossings = [
        f"{path.relative_to(PACKAGE)}:{node.lineno} {node.module}.{alias.name}"
        for path in MODULES.values()
        for node in _imports(path)
        for alias in node.names
        if alias.name.startswith("_")
        and not alias.name.startswith("__")
        and f"{node.module}.{alias.name}" not in MODULES
    ]
    assert crossings == []


def _import_graph(prefix: str) -> dict[str, set[str]]:
    """Which modules under ``prefix`` each module under it imports (lazy imports included)."""
    nodes = [name for name in MODULES if name.startswith(prefix + ".")]
    edges: dict[str, set[str]] = {name: set() for name in nodes}
    for name in nodes:
        for node in _imports(MODULES[name]):
            assert node.module is not None
            for target in (node.module, *(f"{node.module}.{a.name}" for a in node.names)):
                if target in edges and target != name:
                    edges[name].add(target)
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The cycles of an import graph (Tarjan's strongly connected components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in edges[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while (top := stack.pop()) != node:
                component.append(top)
            if component:
                found.append(sorted([node, *component]))

    for node in edges:
        if node not in index:
            visit(node)
    return found


def test_the_experiments_package_has_no_import_cycle() -> None:
    assert _cycles(_import_graph("lg_eval.experiments")) == []


def test_the_cycle_check_finds_every_cycle_and_only_cycles() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": {"e"}, "f": set()}
    assert _cycles(edges) == [["a", "b", "c"]]


def test_no_module_is_over_600_lines() -> None:
    # A module does one job; past ~400 lines it is probably two, and none may pass 600.
    long = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 600
    }
    assert long == {}


def test_every_error_class_lives_in_the_error_tree() -> None:
    # An exception users may catch (named ...Error) is defined in lg_eval/errors.py under
    # LgEvalError; internal control-flow signals (FastPathUnavailable, ...) are named otherwise.
    import lg_eval.errors

    outside = [
        f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}"
        for path in MODULES.values()
        if path.name != "errors.py" or path.parent != PACKAGE
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ClassDef) and node.name.endswith("Error")
    ]
    assert outside == []
    tree = [getattr(lg_eval.errors, name) for name in lg_eval.errors.__all__]
    assert all(issubclass(error, lg_eval.errors.LgEvalError) for error in tree)
    assert sorted(lg_eval.errors.__all__) == sorted(
        name
        for name, value in vars(lg_eval.errors).items()
        if isinstance(value, type) and issubclass(value, Exception)
    )


def test_experiments_meets_datasets_play_and_urls_only_through_upstream() -> None:
    # lg_eval/experiments/_upstream.py is the one list of what the runner uses of them.
    below = ("lg_eval.datasets", "lg_eval.play", "lg_eval.urls")
    bypasses = [
        f"{path.relative_to(PACKAGE)}:{node.lineno} {node.module}"
        for name, path in MODULES.items()
        if name.startswith("lg_eval.experiments") and name != "lg_eval.experiments._upstream"
        for node in _imports(path)
        if node.module is not None and node.module.startswith(below)
    ]
    assert bypasses == []


# The floors of /work/shared/DESIGN.md, bottom up: a module may import its own floor and the
# floors below, never one above. Every top-level module and subpackage of lg_eval has a row
# (a new one fails test_every_unit_has_a_floor until it is placed). Where this differs from
# the map: `evaluator` reads its field through `inputs`, so it sits on floor 3 beside it;
# `display` renders the trajectory models, which import it lazily, so it shares their floor;
# `server` (a LangGraph Server as a source of threads) and `viewer` (a web rendering of
# reports, like the CLI an edge) are not on the map.
FLOORS: dict[str, int] = {
    # 1: typed errors, the effect core, executors and leaf helpers that know no lg_eval model
    "errors": 1,
    "arguments": 1,
    "describe": 1,
    "_effects": 1,
    "_retry_after": 1,
    "executors": 1,
    "_files": 1,
    "_heap": 1,
    "_threads": 1,
    "_tool_results": 1,
    "_usage": 1,
    "_visible": 1,
    "offline": 1,
    "stats": 1,
    "urls": 1,
    "importing": 1,
    # 2: the trajectory and feedback models
    "trajectory": 2,
    "feedback": 2,
    "verdicts": 2,
    "display": 2,
    "_reviews": 2,
    "calibration": 2,  # agreement with people's labels, on stats; no store, no model
    # 3: reading what users pass; threads into trajectories
    "inputs": 3,
    "messages": 3,
    "evaluator": 3,
    "extract": 3,
    # 4: datasets
    "datasets": 4,
    "scoring": 4,
    # 5: scoring, and playing cases
    "evaluators": 5,
    "judges": 5,
    "play": 5,
    "server": 5,
    # 6: eval nodes, experiments, the LangSmith and pytest edges
    "nodes": 6,
    "experiments": 6,
    "langsmith": 6,
    "testing": 6,
    # 7: reports and sweeps
    "reports": 7,
    "sweeps": 7,
    "replay": 7,  # forks production threads as sweeps list them, scores as experiments do
    "labels": 7,  # people's labels in the store, harvested from threads; a judge's agreement
    # 8: the shell, the viewer, and the package's own face
    "cli": 8,
    "viewer": 8,
    "__init__": 8,
    "__main__": 8,
    # 9: the agentevals / openevals drop-ins, over lg_eval's own evaluators; nothing imports them
    "compat": 9,
}


def _unit(path: Path) -> str:
    """The top-level module or subpackage ``path`` belongs to (``__init__`` for the root)."""
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def _units_imported(node: ast.ImportFrom) -> list[str]:
    assert node.module is not None
    parts = node.module.split(".")
    return [alias.name for alias in node.names] if len(parts) == 1 else [parts[1]]


def test_every_unit_has_a_floor() -> None:
    assert sorted({_unit(path) for path in MODULES.values()} - set(FLOORS)) == []


def _upward(path: Path, own: str) -> list[str]:
    """The imports of ``path`` (a module of unit ``own``) that reach a higher floor."""
    return [
        f"{path.name}:{node.lineno} {node.module} (floor {FLOORS[own]} imports {target}, "
        f"floor {FLOORS[target]})"
        for node in _imports(path)
        for target in _units_imported(node)
        if target in FLOORS and FLOORS[target] > FLOORS[own]
    ]


def test_no_layer_imports_a_higher_one() -> None:
    upward = [
        f"{path.parent.relative_to(PACKAGE)}/{line}"
        for path in MODULES.values()
        for line in _upward(path, _unit(path))
    ]
    assert upward == []


def test_nothing_imports_the_drop_ins() -> None:
    # lg_eval.compat gives the peers' bare dicts; lg_eval itself always uses its own evaluators.
    importers = [
        f"{path.relative_to(PACKAGE)}:{node.lineno}"
        for path in MODULES.values()
        if _unit(path) != "compat"
        for node in _imports(path)
        if "compat" in _units_imported(node)
    ]
    assert importers == []


def test_the_floor_check_finds_a_lazy_upward_import_and_only_that(tmp_path: Path) -> None:
    source = tmp_path / "mod.py"
    source.write_text(
        "from lg_eval import errors, trajectory\n"
        "from lg_eval.extract.thread import extract_thread\n"
        "def f():\n"
        "    from lg_eval.reports import build_report\n"
    )
    assert _upward(source, "extract") == [
        "mod.py:4 lg_eval.reports (floor 3 imports reports, floor 7)"
    ]


ARCHITECTURE = ROOT / "docs" / "architecture.md"


def _documented_floors() -> dict[str, int]:
    """The floors docs/architecture.md gives, read from its table's rows."""
    floors: dict[str, int] = {}
    for line in ARCHITECTURE.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].isdigit():
            for name in re.findall(r"`([a-z_]+)`", cells[1]):
                floors[name] = int(cells[0])
    return floors


def test_the_architecture_page_gives_every_public_unit_its_floor() -> None:
    public = {unit: floor for unit, floor in FLOORS.items() if not unit.startswith("_")}
    assert _documented_floors() == public
