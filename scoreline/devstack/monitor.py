"""The demo's live view: one line per change of any match, with a progress bar and the pushes sent.

It watches what the outside world sees: the provider simulator's fixtures (normalised exactly as the
ingest normalises them) and the APNs simulator's delivered-push count. It is a viewer, not part of
the pipeline, and polls both once a second.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from workflows.normaliser import ProviderPayloadError, normalise_fixtures
from workflows.snapshot import MatchState, Snapshot

if TYPE_CHECKING:
    from scoreline.devstack.stack import DevStack

POLL_SECONDS = 1.0
BAR_WIDTH = 20
REGULATION_MINUTES = 90
MINUTES_PER_PROGRESS_LINE = 5
DONE_STATES = {
    MatchState.FINISHED,
    MatchState.CANCELLED,
    MatchState.ABANDONED,
    MatchState.POSTPONED,
    MatchState.AWARDED,
}


@dataclass(frozen=True)
class MatchLine:
    """What one printed line shows; a new line is printed only when this changes."""

    name: str
    state: str
    home: int
    away: int
    minute: int | None

    @classmethod
    def of(cls, snapshot: Snapshot) -> MatchLine:
        current = snapshot.scores.current if snapshot.scores else None
        return cls(
            name=snapshot.name or str(snapshot.fixture_id),
            state=snapshot.state.value,
            home=current.home if current else 0,
            away=current.away if current else 0,
            minute=snapshot.minute,
        )

    def news(self) -> tuple[str, int, int, int]:
        """What counts as a change worth a line: state, score, or five more minutes played."""
        return (self.state, self.home, self.away, (self.minute or 0) // MINUTES_PER_PROGRESS_LINE)

    def progress(self) -> float:
        if self.state in DONE_STATES:
            return 1.0
        return min((self.minute or 0) / REGULATION_MINUTES, 1.0)


def progress_bar(fraction: float) -> str:
    filled = round(fraction * BAR_WIDTH)
    return "[" + "#" * filled + "." * (BAR_WIDTH - filled) + f"] {fraction * 100:3.0f}%"


def render(line: MatchLine, pushes: int | None) -> str:
    minute = f"{line.minute}'" if line.minute is not None else "--"
    teams = line.name.replace(" vs ", f" {line.home}-{line.away} ", 1)
    sent = "?" if pushes is None else str(pushes)
    return (
        f"{time.strftime('%H:%M:%S')}  {teams:<44} {line.state:<17} {minute:>5}  "
        f"{progress_bar(line.progress())}  pushes={sent}"
    )


def fixture_ids(recordings: tuple[Path, ...]) -> list[int]:
    """The fixtures the recordings' headers announce."""
    ids: list[int] = []
    for recording in recordings:
        with recording.open() as lines:
            header = json.loads(lines.readline())
        ids += [int(fixture) for fixture in header.get("fixtures", ())]
    return ids


async def _snapshots(http: httpx.AsyncClient, provider: str, token: str, ids: list[int]) -> list[Snapshot]:
    response = await http.get(
        f"{provider}/v3/football/fixtures/multi/{','.join(map(str, ids))}",
        params={"include": "participants;scores;state;periods", "api_token": token},
    )
    response.raise_for_status()
    return [
        item for item in normalise_fixtures(response.json()) if not isinstance(item, ProviderPayloadError)
    ]


async def _pushes_delivered(http: httpx.AsyncClient, apns_admin: str) -> int | None:
    try:
        stats = (await http.get(f"{apns_admin}/_sim/stats")).json()
    except (httpx.HTTPError, ValueError):
        return None
    delivered = stats.get("by_status", {}).get("200", 0)
    return int(delivered)


async def watch_matches(stack: DevStack) -> None:
    """Print a line whenever a match's score or state changes, pushes go out, or time moves on."""
    ids = fixture_ids(stack.options.recordings)
    provider, apns_admin = stack.addresses["provider"], stack.addresses["apns-admin"]
    token = stack.child_env["PROVIDER_TOKEN"]
    print(
        f"watching {len(ids)} match(es) at {stack.options.speed:g}x; API {stack.addresses['api']}, "
        f"Temporal UI {stack.addresses['temporal-ui']}; Ctrl-C stops everything",
        flush=True,
    )
    shown: dict[int, MatchLine] = {}
    pushes_shown: int | None = None
    finished_announced = False
    async with httpx.AsyncClient(timeout=5) as http:
        while True:
            try:
                snapshots = await _snapshots(http, provider, token, ids)
            except httpx.HTTPError as error:
                print(f"{time.strftime('%H:%M:%S')}  provider not answering: {error!r}", flush=True)
                snapshots = []
            pushes = await _pushes_delivered(http, apns_admin)
            for snapshot in snapshots:
                line = MatchLine.of(snapshot)
                before = shown.get(snapshot.fixture_id)
                if before is None or before.news() != line.news() or pushes != pushes_shown:
                    shown[snapshot.fixture_id] = line
                    print(render(line, pushes), flush=True)
            pushes_shown = pushes
            if not finished_announced and ids and len(shown) == len(ids):
                if all(line.state in DONE_STATES for line in shown.values()):
                    finished_announced = True
                    print("all matches are over; the stack keeps running until Ctrl-C", flush=True)
            await asyncio.sleep(POLL_SECONDS)
