"""The demo's live view: one line per change of any match, with a progress bar and the pushes sent.

It shows what Scoreline made of the provider's feed — the read API's match view (state, score,
minute and log version), fed by the match workflows — and the APNs simulator's delivered-push count.
It is a viewer, not part of the pipeline, and polls both once a second.

It also runs the demo's phones (`demo_phones`): a few simulated devices that follow every watched
match, so the Live Activity pushes it counts really go out.

Besides the recordings' fixtures it watches the ones announced while it runs (`AnnouncedMatches`:
the demo's scripted desk adds its match). A desk-scored match's view carries no running minute, so
for those the announcer's clock stands in for the minute.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from devkit.devstack.demo_phones import PHONES, run_demo_phones
from domain.cricket.board import cricket_fixture_id
from domain.snapshot import MatchState
from scoreline.readmodel.views import MatchView

if TYPE_CHECKING:
    from devkit.devstack.stack import DevStack

POLL_SECONDS = 1.0
BAR_WIDTH = 20
REGULATION_MINUTES = 90
MINUTES_PER_PROGRESS_LINE = 5
PUSH_LINE_SECONDS = 5.0
"""Pushes going out between match lines get a line of their own, at most this often."""
DONE_STATES = {
    MatchState.FINISHED,
    MatchState.CANCELLED,
    MatchState.ABANDONED,
    MatchState.POSTPONED,
    MatchState.AWARDED,
}


@dataclass
class AnnouncedMatches:
    """Fixtures announced while the monitor runs, with their announcer's match clock.

    `expected` is how many the announcer means to add (for the header line); `closed` says nothing
    more will be announced (also when the announcer gave up), so "all matches are over" waits for it.
    """

    expected: int
    ids: list[int] = field(default_factory=list)
    clocks: dict[int, int] = field(default_factory=dict)
    closed: bool = False

    def announce(self, fixture_id: int) -> None:
        if fixture_id not in self.ids:
            self.ids.append(fixture_id)

    def tick(self, fixture_id: int, minute: int) -> None:
        """The match minute the announcer's clock shows for `fixture_id`."""
        self.clocks[fixture_id] = minute

    def close(self) -> None:
        self.closed = True


@dataclass(frozen=True)
class MatchLine:
    """What one printed line shows; a new line is printed only when this changes.

    A cricket match shows its batting line (`176/4 (18.4)`) where football shows the minute, gets
    a line per completed over rather than per five minutes, and fills its bar ball by ball.
    """

    name: str
    state: str
    home: int
    away: int
    minute: int | None
    version: int
    cricket: str | None = None
    wickets: int = 0
    """Cricket: wickets of the innings in play."""
    balls: int = 0
    """Cricket: legal balls bowled so far, every innings."""
    balls_scheduled: int | None = None

    @classmethod
    def of(cls, view: MatchView, before: MatchLine | None, clock: int | None = None) -> MatchLine:
        """At breaks the provider has no running minute; the bar keeps the last one. `clock` stands
        in when the view has none (a desk-scored match)."""
        minute = view.minute if view.minute is not None else clock
        if minute is None and before is not None:
            minute = before.minute
        line = cls(
            name=view.fixture.name,
            state=view.state.value,
            home=view.score.home,
            away=view.score.away,
            minute=minute,
            version=view.version,
        )
        if not view.innings:
            return line
        current = view.innings[-1]
        overs = SCHEDULED_OVERS.get(view.format or "")
        return replace(
            line,
            minute=None,
            cricket=f"{current.runs}/{current.wickets} ({current.overs})",
            wickets=current.wickets,
            balls=sum(_legal_balls(innings.overs) for innings in view.innings if not innings.super_over),
            balls_scheduled=2 * 6 * overs if overs else None,
        )

    def news(self) -> tuple[str, int, int, int]:
        """What counts as a change worth a line: state, score, five more minutes played; in
        cricket the state, a wicket or an over."""
        if self.cricket is not None:
            return (self.state, self.wickets, 0, self.balls // 6)
        return (self.state, self.home, self.away, (self.minute or 0) // MINUTES_PER_PROGRESS_LINE)

    def progress(self) -> float:
        if self.state in DONE_STATES:
            return 1.0
        if self.cricket is not None:
            return min(self.balls / self.balls_scheduled, 1.0) if self.balls_scheduled else 0.0
        return min((self.minute or 0) / REGULATION_MINUTES, 1.0)


SCHEDULED_OVERS = {"T10": 10, "T20": 20, "T20I": 20, "ODI": 50, "List A": 50}
"""Overs a side in the limited-overs formats (a Test's bar stays empty until it is over)."""


def _legal_balls(overs: str) -> int:
    completed, _, balls = overs.partition(".")
    return int(completed or 0) * 6 + int(balls or 0)


def progress_bar(fraction: float) -> str:
    filled = round(fraction * BAR_WIDTH)
    return "[" + "#" * filled + "." * (BAR_WIDTH - filled) + f"] {fraction * 100:3.0f}%"


def render(line: MatchLine, pushes: int | None) -> str:
    minute = line.cricket or (f"{line.minute}'" if line.minute is not None else "--")
    # A cricket score is an innings (`176/4 (18.4)`, in the minute's column), not a pair of goals.
    score = " v " if line.cricket is not None else f" {line.home}-{line.away} "
    teams = line.name.replace(" vs ", score, 1)
    sent = "?" if pushes is None else str(pushes)
    return (
        f"{time.strftime('%H:%M:%S')}  {teams:<44} {line.state:<17} {minute:>5}  "
        f"{progress_bar(line.progress())}  v{line.version:<4} pushes={sent}"
    )


def push_line(pushes: int, before: int | None) -> str:
    """The line for pushes that went out since the last line showed the count."""
    more = f" (+{pushes - before})" if before is not None and pushes > before else ""
    return (
        f"{time.strftime('%H:%M:%S')}  Live Activity pushes delivered to the APNs simulator: {pushes}{more}"
    )


def fixture_ids(recordings: tuple[Path, ...]) -> list[int]:
    """The fixtures the recordings' headers announce (football and cricket, plain or gzip), by
    Scoreline's ids (a cricket fixture's is offset, `cricket_fixture_id`)."""
    from devkit.simulators.provider.recording_file import open_recording

    ids: list[int] = []
    for recording in recordings:
        with open_recording(recording) as lines:
            header = json.loads(lines.readline())
        cricket = header.get("sport") == "cricket"
        ids += [
            cricket_fixture_id(int(fixture)) if cricket else int(fixture)
            for fixture in header.get("fixtures", ())
        ]
    return ids


async def _matches(http: httpx.AsyncClient, api: str, ids: list[int]) -> list[MatchView]:
    """The API's view of each match it knows yet (a match appears once its workflow ingested it)."""
    views = []
    for fixture_id in ids:
        response = await http.get(f"{api}/v1/matches/{fixture_id}")
        if response.status_code == 404:
            continue
        response.raise_for_status()
        views.append(MatchView.model_validate(response.json()))
    return views


async def _pushes_delivered(http: httpx.AsyncClient, apns_admin: str) -> int | None:
    try:
        stats = (await http.get(f"{apns_admin}/_sim/stats")).json()
    except (httpx.HTTPError, ValueError):
        return None
    delivered = stats.get("pushes", {}).get("by_status", {}).get("200", 0)
    return int(delivered)


async def watch_matches(stack: DevStack, announced: AnnouncedMatches | None = None) -> None:
    """Print a line whenever a match's score or state changes, pushes go out, or time moves on.

    Watches the recordings' fixtures and, when given, the ones `announced` while it runs.
    """
    recorded = fixture_ids(stack.options.recordings)
    api, apns_admin = stack.addresses["api"], stack.addresses["apns-admin"]
    total = len(recorded) + (announced.expected if announced else 0)
    by_desk = f" ({announced.expected} scored by a desk)" if announced and announced.expected else ""
    prometheus = stack.addresses.get("prometheus")
    metrics = f", metrics in Prometheus {prometheus}" if prometheus else ""
    print(
        f"watching {total} match(es) at {stack.options.speed:g}x{by_desk}, followed by {PHONES} simulated "
        f"phones; API {stack.addresses['api']}, Temporal UI {stack.addresses['temporal-ui']}{metrics}; "
        "Ctrl-C stops everything",
        flush=True,
    )
    phones = asyncio.create_task(
        run_demo_phones(api, apns_admin, lambda: recorded + (announced.ids if announced else [])),
        name="demo-phones",
    )
    try:
        await _watch(api, apns_admin, recorded, announced)
    finally:
        phones.cancel()


async def _watch(api: str, apns_admin: str, recorded: list[int], announced: AnnouncedMatches | None) -> None:
    """The line printer: polls the matches and the delivered pushes once a second, until cancelled."""
    shown: dict[int, MatchLine] = {}
    pushes_shown: int | None = None
    pushes_printed = 0.0
    finished_announced = False
    async with httpx.AsyncClient(timeout=5) as http:
        while True:
            ids = recorded + (announced.ids if announced else [])
            clocks = announced.clocks if announced else {}
            try:
                views = await _matches(http, api, ids)
            except httpx.HTTPError as error:
                print(f"{time.strftime('%H:%M:%S')}  API not answering: {error!r}", flush=True)
                views = []
            pushes = await _pushes_delivered(http, apns_admin)
            for view in views:
                before = shown.get(view.fixture.id)
                line = MatchLine.of(view, before, clocks.get(view.fixture.id))
                if before is None or before.news() != line.news():
                    shown[view.fixture.id] = line
                    print(render(line, pushes), flush=True)
                    pushes_shown = pushes
            now = time.monotonic()
            if pushes is not None and pushes != pushes_shown and now - pushes_printed >= PUSH_LINE_SECONDS:
                print(push_line(pushes, pushes_shown), flush=True)
                pushes_shown, pushes_printed = pushes, now
            if not finished_announced and all_over(ids, shown, announced):
                finished_announced = True
                print("all matches are over; the stack keeps running until Ctrl-C", flush=True)
            await asyncio.sleep(POLL_SECONDS)


def all_over(ids: list[int], shown: dict[int, MatchLine], announced: AnnouncedMatches | None) -> bool:
    """Every watched match is shown and done, and no more are coming."""
    if announced is not None and not announced.closed:
        return False
    if not ids or any(fixture_id not in shown for fixture_id in ids):
        return False
    return all(shown[fixture_id].state in DONE_STATES for fixture_id in ids)
