"""Deterministic code stays deterministic: `domain/` and `workflows/` whole, and the normaliser.

Workflow code replays: a clock, a random number, a file or a socket read in it takes a replay down
another path. The domain is shared with the workflows, and the SportMonks normaliser turns bytes
into domain snapshots the same way every time. So these modules import only the stdlib (minus
what reads the world), pydantic, temporalio (workflows only) and each other; activity classes may
come into a workflow only inside `workflow.unsafe.imports_passed_through()`.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).parents[2]
NORMALISER = (
    "activities/provider/normaliser.py",
    "activities/provider/codes.py",
    "activities/provider/payload.py",
)
MODULES = sorted(
    [
        *(str(path.relative_to(ROOT)) for path in (ROOT / "domain").rglob("*.py")),
        *(str(path.relative_to(ROOT)) for path in (ROOT / "workflows").rglob("*.py")),
        *NORMALISER,
    ]
)
READS_THE_WORLD = {
    "time",
    "random",
    "uuid",
    "os",
    "secrets",
    "socket",
    "pathlib",
    "io",
    "threading",
    "subprocess",
}
ALWAYS_ALLOWED = {"pydantic", "domain"}
CLOCK_METHODS = {"now", "utcnow", "today", "time", "perf_counter", "monotonic"}
"""Attribute calls that read a clock, unless they are `workflow.now()`'s deterministic one."""
CALLS_BANNED = {"print", "open", "input"}


def _top_level_and_passthrough_imports(path: Path) -> tuple[set[str], set[str]]:
    """Module names imported outside and inside `imports_passed_through()` blocks."""
    tree = ast.parse(path.read_text())
    passed: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.With) and any("imports_passed_through" in ast.unparse(i) for i in node.items):
            passed |= _imported(node.body)
    return _imported(list(ast.walk(tree))) - passed, passed


def _imported(nodes: list[ast.AST] | list[ast.stmt]) -> set[str]:
    names: set[str] = set()
    for node in nodes:
        for inner in ast.walk(node):
            if isinstance(inner, ast.Import):
                names.update(alias.name for alias in inner.names)
            elif isinstance(inner, ast.ImportFrom):
                assert inner.level == 0, "relative imports hide what is imported"
                names.add(inner.module or "")
    return names


def test_every_package_is_checked() -> None:
    """The purity test sees the modules it is meant to see."""
    assert {"domain/snapshot.py", "domain/rules/football.py", "workflows/match.py", *NORMALISER} <= set(
        MODULES
    )


@pytest.mark.parametrize("module", MODULES)
def test_imports_are_deterministic(module: str) -> None:
    """Only the stdlib (nothing that reads the world), pydantic, temporalio in workflows, and
    project modules of the same kind; activities only through the sandbox's passthrough."""
    path = ROOT / module
    outside, passed = _top_level_and_passthrough_imports(path)
    own = module.split("/")[0]
    allowed_project = ALWAYS_ALLOWED | {own} | ({"temporalio"} if own == "workflows" else set())
    if module in NORMALISER:
        allowed_project |= {name.removesuffix(".py").replace("/", ".") for name in NORMALISER}
    for name in outside:
        top = name.split(".")[0]
        assert top not in READS_THE_WORLD, f"{module} imports {name}"
        assert top in sys.stdlib_module_names or top in allowed_project or name in allowed_project, (
            f"{module} imports {name}"
        )
    for name in passed:
        top = name.split(".")[0]
        assert top in {"domain", "workflows", "activities", "pydantic"}, f"{module} passes {name} through"


@pytest.mark.parametrize("module", MODULES)
def test_no_clock_or_console(module: str) -> None:
    """No wall clock, no printing, no files: workflows read `workflow.now()`, the domain is given the time."""
    for node in ast.walk(ast.parse((ROOT / module).read_text())):
        if not isinstance(node, ast.Call):
            continue
        called = ast.unparse(node.func)
        assert called not in CALLS_BANNED, f"{module} calls {called}"
        if isinstance(node.func, ast.Attribute) and node.func.attr in CLOCK_METHODS:
            assert called.startswith("workflow."), f"{module} calls {called}"


@pytest.mark.parametrize("module", MODULES)
def test_no_module_state_is_rebound(module: str) -> None:
    """No `global` statements: the match workflow runs outside the sandbox (issue 15), so its runs
    share these modules, and a run that rebinds a module-level name would leak into the others."""
    for node in ast.walk(ast.parse((ROOT / module).read_text())):
        assert not isinstance(node, ast.Global), f"{module} rebinds module state at line {node.lineno}"
