"""The recording `bench/cricket.py` replays: the bundled real T20 copied to N live fixtures.

Not a bench itself. Every copy is the same IPL match (`recordings/cricket-t20.jsonl.gz`, one full
Cricket v2 fixture per line, its whole ball list repeated on every line) under its own provider id
(70001, 70002, …), with its ball and innings-total ids made unique to the copy, so the ingest
stores 100 matches' balls and not one match's balls 100 times. Copy `i` is shifted later by its
own offset in `[0, stagger)`: with a stagger of about one ball's gap the copies' balls arrive
spread evenly over time instead of 100 at once. Lines before the window's start are cut to the
last one (the state on show then); lines after its end are dropped, so the simulator loads only
what it will serve.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from devkit.simulators.provider.recording_file import read_recording
from tests.support.provider import recording

SOURCE = "cricket-t20"
FIRST_PROVIDER_ID = 70_001
BALL_ID_STRIDE = 10_000_000
"""Copy `i`'s ball and run ids are the original's plus `i * BALL_ID_STRIDE` (the real ids span ~1.2 M)."""
FIRST_INNINGS = (2400.0, 8510.0)
"""Replay times of the real T20's first ball and of its innings break (balls 1 to 129)."""


def provider_ids(count: int) -> list[int]:
    """The copies' provider fixture ids, in copy order."""
    return [FIRST_PROVIDER_ID + index for index in range(count)]


def offset_of(index: int, count: int, stagger: float) -> float:
    """Copy `index`'s shift in seconds: evenly spread over `[0, stagger)`, so balls do not bunch."""
    return stagger * index / max(count, 1)


def _source_lines() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    lines = [json.loads(line) for line in read_recording(recording(SOURCE)).splitlines() if line.strip()]
    return lines[0], [line for line in lines[1:] if "fixture" in line]


def _renumbered(fixture: dict[str, Any], provider_id: int, index: int) -> dict[str, Any]:
    """One line's fixture as copy `index` shows it: its own fixture, ball and run ids.

    Shallow copies: only top-level ids change, the nested players, teams and score rows are
    shared (the JSON written is the same, and copying 100 copies' ball lists deeply is slow).
    """
    out = dict(fixture)
    out["id"] = provider_id
    for relation in ("balls", "runs"):
        items = out.get(relation)
        if isinstance(items, list):
            out[relation] = [_renumbered_item(item, provider_id, index) for item in items]
    return out


def _renumbered_item(item: Any, provider_id: int, index: int) -> Any:
    if not isinstance(item, dict):
        return item
    out = dict(item)
    if "fixture_id" in out:
        out["fixture_id"] = provider_id
    if isinstance(out.get("id"), int):
        out["id"] += (index + 1) * BALL_ID_STRIDE
    return out


def _window(lines: list[dict[str, Any]], offset: float, start: float, end: float) -> list[dict[str, Any]]:
    """The lines shifted by `offset` that the window `[start, end]` shows (the one on show at `start` first)."""
    shown: list[dict[str, Any]] = []
    for line in lines:
        t = float(line["t"]) + offset
        if t <= start:
            shown[:] = [line]
        elif t <= end:
            shown.append(line)
    return shown


def write_copies(directory: Path, count: int, *, start: float, end: float, stagger: float) -> Path:
    """Write the N-copy recording (gzip JSON lines) into `directory` and return its path.

    Raises:
        ValueError: the window leaves the real match's first innings, or the stagger would.
    """
    if start - stagger < FIRST_INNINGS[0] or end > FIRST_INNINGS[1]:
        raise ValueError(f"the window must stay inside the first innings {FIRST_INNINGS} of replay time")
    header, lines = _source_lines()
    ids = provider_ids(count)
    out: list[dict[str, Any]] = []
    for index, provider_id in enumerate(ids):
        offset = offset_of(index, count, stagger)
        for line in _window(lines, offset, start, end):
            fixture = _renumbered(line["fixture"], provider_id, index)
            out.append({"t": round(float(line["t"]) + offset, 3), "fixture": fixture})
    out.sort(key=lambda line: float(line["t"]))
    path = directory / f"cricket-bench-{count}.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as handle:
        for line in [{**header, "name": f"bench: {header.get('name')} x{count}", "fixtures": ids}, *out]:
            handle.write(json.dumps(line, separators=(",", ":")) + "\n")
    return path
