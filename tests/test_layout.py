"""The package's shape: a small root, floors, private modules by default, short modules.

Private by default: a module or name starting with ``_`` is internal to lg_eval and may be
imported anywhere inside it (never by users); a package's ``__init__`` is its public face.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import lg_eval

PACKAGE = Path(lg_eval.__file__).parent
ROOT = PACKAGE.parent

# The modules that are public import paths on purpose; every other module that is not a
# package's __init__ (its face) or a __main__ is named _x.
PUBLIC_MODULES = {
    "errors.py",  # the error tree users catch
    "compat/agentevals.py",  # `from agentevals.… import X` becomes an import from here
    "compat/openevals.py",  # `from openevals.… import X` likewise
    "testing/plugin.py",  # the pytest11 entry point (pyproject.toml)
    "messages.py",  # the message readers the evaluators use, for users' own checks
}


def test_the_root_exports_the_core_only() -> None:
    assert len(lg_eval.__all__) <= 30
    assert len(set(lg_eval.__all__)) == len(lg_eval.__all__)
    assert all(hasattr(lg_eval, name) for name in lg_eval.__all__)


def test_every_module_is_private_but_the_faces_and_the_public_ones() -> None:
    public = sorted(
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if path.name not in ("__init__.py", "__main__.py") and not path.name.startswith("_")
    )
    assert public == sorted(PUBLIC_MODULES)


def test_only_faces_declare_all() -> None:
    # A package's __init__ says what the package offers; a private module's names are its
    # package's business, and a public module's __all__ is its face.
    declaring = [
        path.relative_to(PACKAGE).as_posix()
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "__init__.py" and path.relative_to(PACKAGE).as_posix() not in PUBLIC_MODULES
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign)
        and "__all__"
        in ast.unparse(node.targets[0] if isinstance(node, ast.Assign) else node.target)
    ]
    assert declaring == []


def test_every_name_a_face_lists_is_importable_from_it() -> None:
    import importlib

    missing = []
    for path in sorted(PACKAGE.rglob("__init__.py")):
        name = ".".join(("lg_eval", *path.parent.relative_to(PACKAGE).parts))
        module = importlib.import_module(name)
        missing += [f"{name}.{n}" for n in getattr(module, "__all__", ()) if not hasattr(module, n)]
    assert missing == []


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


def test_the_experiments_package_is_a_dozen_private_modules_behind_its_init() -> None:
    # Each module one concept (run, case, store, results, ...); the __init__ is the public
    # face and the only one with __all__.
    folder = PACKAGE / "experiments"
    modules = sorted(path.name for path in folder.glob("*.py"))
    assert len(modules) <= 12
    assert all(name.startswith("_") for name in modules)
    with_all = [
        name
        for name in modules
        if any(
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
            for node in ast.parse((folder / name).read_text(encoding="utf-8")).body
        )
    ]
    assert with_all == ["__init__.py"]


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
    "_arguments": 1,
    "_describe": 1,
    "_effects": 1,
    "_retry_after": 1,
    "executors": 1,
    "_files": 1,
    "_heap": 1,
    "_daemons": 1,
    "_tool_results": 1,
    "_usage": 1,
    "_visible": 1,
    "_offline": 1,
    "stats": 1,
    "_urls": 1,
    "_importing": 1,
    # 2: the trajectory and feedback models
    "_trajectory": 2,
    "_feedback": 2,
    "_verdicts": 2,
    "_display": 2,
    "_reviews": 2,
    "calibration": 2,  # agreement with people's labels, on stats; no store, no model
    # 3: reading what users pass; threads into trajectories
    "_inputs": 3,
    "messages": 3,
    "_evaluator": 3,
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
        "from lg_eval.extract._thread import extract_thread\n"
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


def test_the_architecture_page_gives_every_unit_its_floor() -> None:
    units = {unit: floor for unit, floor in FLOORS.items() if unit not in ("__init__", "__main__")}
    assert _documented_floors() == units
