"""`<data-dir>/env`: the running stack's addresses as `KEY=value` lines, read back by `Settings`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

ENV_FILE_MODE = 0o600
"""The file holds DATABASE_URL with its password and the provider token: only its owner reads it."""


def write_env_file(path: Path, values: Mapping[str, str]) -> None:
    """Write atomically, so a command started mid-write never reads half a file.

    The staging file is made private before a byte is written (a leftover one from a killed run
    may have any mode), and the rename keeps that mode.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_suffix(".tmp")
    descriptor = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, ENV_FILE_MODE)
    with os.fdopen(descriptor, "w") as file:
        os.fchmod(descriptor, ENV_FILE_MODE)
        file.write("".join(f"{key}={value}\n" for key, value in values.items()))
    staging.replace(path)


def read_env_file(path: Path) -> dict[str, str]:
    values: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#") and "=" in line:
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values
