"""The layers meet only where they should: the API and the shared package never reach into the worker.

The API sends commands into workflows and serves reads; what it shares with the worker is the
domain, the database's read side and the one way to start a match (`scoreline.temporal.match_runs`).
So neither `api/` nor `scoreline/` (the shared package) imports `activities` or `workers`; only the
command line, the dev stack and the soak, which start the worker, may (the soak also reads the
recordings' expected states with the provider client's own status tables).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).parents[2]
STARTS_THE_WORKER = ("scoreline/cli/", "scoreline/devstack/", "scoreline/soak/")
MODULES = sorted(
    str(path.relative_to(ROOT))
    for package in ("api", "scoreline")
    for path in (ROOT / package).rglob("*.py")
    if not str(path.relative_to(ROOT)).startswith(STARTS_THE_WORKER)
)


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add(node.module or "")
    return names


def test_the_modules_are_found() -> None:
    """The check sees the API's routes and the shared package."""
    assert {"api/command_road.py", "api/routes/devices.py", "scoreline/temporal/match_runs.py"} <= set(
        MODULES
    )


@pytest.mark.parametrize("module", MODULES)
def test_no_reach_into_the_worker(module: str) -> None:
    """No import of `activities` or `workers`."""
    reached = {name for name in _imports(ROOT / module) if name.split(".")[0] in ("activities", "workers")}
    assert reached == set(), f"{module} imports {sorted(reached)}"


def test_the_api_process_loads_no_worker_code() -> None:
    """Not even through another module: starting the app imports no `activities` or `workers`
    module (the API reaches match runs through `workflows.match_types`, not the workflow)."""
    probe = (
        "import sys, api.app, scoreline.temporal.match_runs; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('activities', 'workers')))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert loaded.stdout.strip() == "[]", loaded.stdout
