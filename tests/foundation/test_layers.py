"""The API process loads no worker code, even indirectly.

The arrows between packages are import-linter's contracts (pyproject.toml, run by `make lint`);
this checks what a started API process really has in `sys.modules`, which the static graph cannot
(an import inside a function, a plugin).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).parents[2]


def test_the_api_process_loads_no_worker_code() -> None:
    """Not even through another module: starting the app imports no `activities`, `workers` or
    `devkit` module (the API reaches match runs through `domain.match_run`, not the workflow;
    production has no devkit)."""
    probe = (
        "import sys, api.app, scoreline.temporal.match_runs; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('activities', 'workers', 'devkit')))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert loaded.stdout.strip() == "[]", loaded.stdout
