"""Sample fixtures for the normaliser tests.

`sample_fixtures.json` holds three real-shaped fixtures copied from the example recordings (so the
unit tests stay small); the full recordings are the ones bundled in `recordings/`.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
REPO = HERE.parent.parent

RECORDINGS_DIR = REPO / "recordings"


@cache
def _samples() -> dict[str, dict[str, Any]]:
    data: dict[str, dict[str, Any]] = json.loads((HERE / "sample_fixtures.json").read_text())
    return data


def sample(name: str = "football-basic") -> dict[str, Any]:
    """A fresh deep copy of a sample fixture (tests mutate it freely)."""
    return copy.deepcopy(_samples()[name])


def sample_names() -> list[str]:
    """The names of the checked-in sample fixtures."""
    return sorted(_samples())


def recording_files() -> list[Path]:
    """Every example recording (`*.jsonl`) bundled with the repository."""
    files = sorted(RECORDINGS_DIR.glob("*.jsonl"))
    assert files, f"no recordings in {RECORDINGS_DIR}"
    return files


def recording_lines(path: Path) -> list[dict[str, Any]]:
    """The lines of a recording after its header."""
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return lines[1:]
