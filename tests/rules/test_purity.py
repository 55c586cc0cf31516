"""The rule modules import only the stdlib, pydantic and `workflows.*` (workflow-sandbox safe)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

RULES = Path(__file__).parents[2] / "workflows" / "rules"
MODULES = sorted(path.name for path in RULES.glob("*.py"))


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "relative imports hide what is imported"
            names.add(node.module or "")
    return names


def test_every_module_is_checked() -> None:
    """The package is where we think it is, with the modules we expect."""
    assert {"__init__.py", "commands.py", "common.py", "cricket.py", "football.py"} <= set(MODULES)


@pytest.mark.parametrize("module", MODULES)
def test_imports_are_sandbox_safe(module: str) -> None:
    """Only the stdlib, pydantic and project workflow modules are imported."""
    for name in _imports(RULES / module):
        top = name.split(".")[0]
        assert top in sys.stdlib_module_names or top in ("pydantic", "workflows"), name


@pytest.mark.parametrize("module", MODULES)
def test_no_clock_randomness_or_io(module: str) -> None:
    """Rules are deterministic: no clock, no randomness, no files, no environment."""
    banned = {"datetime", "time", "random", "uuid", "os", "secrets", "socket", "pathlib", "io"}
    for name in _imports(RULES / module):
        assert name.split(".")[0] not in banned, name
    source = (RULES / module).read_text()
    for call in ("open(", "print("):
        assert f" {call}" not in source and f"({call}" not in source, call
