"""The package's shape: a small root, and no private module used from another package."""

from __future__ import annotations

import ast
from pathlib import Path

import lg_eval

PACKAGE = Path(lg_eval.__file__).parent


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
