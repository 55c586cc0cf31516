"""Recordings the match tests build from the bundled ones: the same match, one thing changed."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from tests.support.provider import recording

POSTPONED_AT, RESCHEDULED_AT = 10.0, 20.0
POSTPONED = {
    "id": 10,
    "state": "POSTPONED",
    "name": "Postponed",
    "short_name": "POSTP",
    "developer_name": "POSTPONED",
}


def postponed_then_rescheduled(directory: Path) -> Path:
    """football-basic, postponed ten seconds in and rescheduled (not started, same kick-off) ten
    seconds later; then it plays as recorded."""
    header, *lines = recording("football-basic").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    before_kickoff = records[0]
    postponed = copy.deepcopy(before_kickoff)
    postponed["t"] = POSTPONED_AT
    postponed["fixture"]["state_id"] = POSTPONED["id"]
    postponed["fixture"]["state"] = POSTPONED
    rescheduled = copy.deepcopy(before_kickoff)
    rescheduled["t"] = RESCHEDULED_AT
    played = [record for record in records if record["t"] > RESCHEDULED_AT]
    path = directory / "football-postponed.jsonl"
    body = [header, *(json.dumps(r) for r in [before_kickoff, postponed, rescheduled, *played])]
    path.write_text("\n".join(body) + "\n")
    return path
