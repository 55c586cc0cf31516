"""The normaliser's modules import only the stdlib, pydantic and each other (workflow-sandbox safe)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

WORKFLOWS = Path(__file__).parents[2] / "workflows"
MODULES = ["snapshot", "normaliser", "provider_codes", "provider_payload"]
ALLOWED_PROJECT = {f"workflows.{name}" for name in MODULES}


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "relative imports hide what is imported"
            names.add(node.module or "")
    return names


@pytest.mark.parametrize("module", MODULES)
def test_imports_are_sandbox_safe(module: str) -> None:
    """Only stdlib, pydantic and the normaliser's own modules are imported."""
    for name in _imports(WORKFLOWS / f"{module}.py"):
        top = name.split(".")[0]
        assert top in sys.stdlib_module_names or top == "pydantic" or name in ALLOWED_PROJECT, name
