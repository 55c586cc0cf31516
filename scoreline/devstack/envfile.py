"""`<data-dir>/env`: the running stack's addresses as `KEY=value` lines, read back by `Settings`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def write_env_file(path: Path, values: Mapping[str, str]) -> None:
    """Write atomically, so a command started mid-write never reads half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_suffix(".tmp")
    staging.write_text("".join(f"{key}={value}\n" for key, value in values.items()))
    staging.replace(path)


def read_env_file(path: Path) -> dict[str, str]:
    values: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#") and "=" in line:
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values
