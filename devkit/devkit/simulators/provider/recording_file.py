"""Opening a recording file, plain (`NAME.jsonl`) or gzip-compressed (`NAME.jsonl.gz`).

Cricket recordings repeat the whole ball list on every line, so they are kept compressed. Every
tool that reads recordings opens them here, so both forms work everywhere. The gzip magic bytes
decide, not the name, so a compressed file is read whatever it is called.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import TextIO

GZIP_MAGIC = b"\x1f\x8b"
RECORDING_SUFFIXES = (".jsonl.gz", ".jsonl")


def is_compressed(path: Path) -> bool:
    """True if the file starts with the gzip magic bytes.

    Raises:
        OSError: The file cannot be read.
    """
    with path.open("rb") as handle:
        return handle.read(len(GZIP_MAGIC)) == GZIP_MAGIC


def open_recording(path: Path) -> TextIO:
    """The recording's text, line by line, decompressed if it is gzip.

    Raises:
        OSError: The file cannot be read (a bad gzip stream raises `gzip.BadGzipFile`, an
            `OSError`, while reading; a cut one `EOFError`).
    """
    if is_compressed(path):
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open(encoding="utf-8")


def read_recording(path: Path) -> str:
    """The whole recording's text, decompressed if it is gzip."""
    with open_recording(path) as handle:
        return handle.read()


def recording_name(path: Path) -> str:
    """The recording's name without `.jsonl` or `.jsonl.gz` (`NAME.expected.json` sits beside it)."""
    for suffix in RECORDING_SUFFIXES:
        if path.name.endswith(suffix):
            return path.name[: -len(suffix)]
    return path.stem


def find_recording(directory: Path, name: str) -> Path:
    """`directory/NAME.jsonl`, or `NAME.jsonl.gz` when only the compressed one exists."""
    for suffix in reversed(RECORDING_SUFFIXES):
        candidate = directory / f"{name}{suffix}"
        if candidate.exists():
            return candidate
    return directory / f"{name}.jsonl"
