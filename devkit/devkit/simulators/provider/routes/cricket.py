"""The SportMonks Cricket v2 endpoints the simulator serves, read from the cricket replay.

Below `/api/v2.0`, with the stats and fault names of `endpoints.CricketEndpoint`:
`livescores` (`cricket/livescores`), `fixtures/{id}` (`cricket/fixtures/{id}`), `fixtures`
(`cricket/fixtures`), `scores` (`cricket/scores`) and `scores/{id}` (`cricket/scores/{id}`).
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from devkit.simulators.provider.cricket.envelope import CricketFound, CricketOutcome, not_found, paginate
from devkit.simulators.provider.cricket.filters import FixtureFilter, sort_order
from devkit.simulators.provider.cricket.replay import CricketTrack
from devkit.simulators.provider.cricket_serving import CricketView, serve_cricket
from devkit.simulators.provider.deps import SimulatorDep
from devkit.simulators.provider.endpoints import CRICKET_API_PREFIX
from devkit.simulators.provider.envelope import ApiError
from devkit.simulators.provider.simulator import Simulator

router = APIRouter(prefix=CRICKET_API_PREFIX, tags=["cricket"])


def _start_epoch(view: CricketView, track: CricketTrack) -> float | None:
    start_t = track.start_t(track.at(view.t))
    return None if start_t is None else view.wall_at(start_t)


def _chosen(view: CricketView, tracks: list[CricketTrack]) -> list[CricketTrack] | ApiError:
    """`tracks` that pass the request's filters, in its sort order."""
    wanted = FixtureFilter.parse(view.params)
    if isinstance(wanted, ApiError):
        return wanted
    rows = [
        (track, _start_epoch(view, track))
        for track in tracks
        if wanted.matches(track.at(view.t).fixture, _start_epoch(view, track))
    ]
    # Stable sorts from the last key to the first; a fixture without a start sorts last.
    for key, descending in reversed(sort_order(view.params)):
        if key == "id":
            rows.sort(key=lambda row: row[0].fixture_id, reverse=descending)
        else:
            undated = [row for row in rows if row[1] is None]
            dated = sorted(
                (row for row in rows if row[1] is not None), key=lambda row: row[1] or 0.0, reverse=descending
            )
            rows = dated + undated
    return [track for track, _ in rows]


def _fixture_id(text: str) -> int | None:
    return int(text) if text.isdigit() else None


@router.get("/livescores")
async def livescores(request: Request, sim: SimulatorDep) -> Response:
    """Fixtures in play, about to start or just ended, judged by `status`; not paginated."""

    def render(view: CricketView) -> CricketOutcome:
        chosen = _chosen(view, sim.cricket.livescores(view.t))
        return chosen if isinstance(chosen, ApiError) else CricketFound(data=view.listing(chosen))

    return await serve_cricket(request, sim, "cricket/livescores", render)


@router.get("/fixtures")
async def fixtures(request: Request, sim: SimulatorDep) -> Response:
    """Every recorded fixture, filtered and sorted, 100 a page."""

    def render(view: CricketView) -> CricketOutcome:
        chosen = _chosen(view, list(sim.cricket.tracks))
        if isinstance(chosen, ApiError):
            return chosen
        page = paginate(chosen, view.params, view.url)
        return CricketFound(data=view.listing(page.rows), links=page.links, meta=page.meta)

    return await serve_cricket(request, sim, "cricket/fixtures", render)


@router.get("/fixtures/{fixture_id}")
async def fixture_by_id(request: Request, sim: SimulatorDep, fixture_id: str) -> Response:
    """One fixture; an unknown id is a 404 with a message."""

    def render(view: CricketView) -> CricketOutcome:
        number = _fixture_id(fixture_id)
        track = sim.cricket.get(number) if number is not None else None
        if track is None:
            return not_found(f"No fixture found with id {fixture_id}.")
        return CricketFound(data=view.show(track))

    return await serve_cricket(request, sim, "cricket/fixtures/{id}", render)


def _score_rows(sim: Simulator) -> CricketOutcome:
    return CricketFound(data=[dict(row) for row in sim.scores])


@router.get("/scores")
async def scores(request: Request, sim: SimulatorDep) -> Response:
    """The ball-outcome lookup table; not paginated, the same at every replay time."""
    return await serve_cricket(request, sim, "cricket/scores", lambda view: _score_rows(sim))


@router.get("/scores/{score_id}")
async def score_by_id(request: Request, sim: SimulatorDep, score_id: str) -> Response:
    """One row of the lookup table; an unknown id is a 404 with a message."""

    def render(view: CricketView) -> CricketOutcome:
        number = _fixture_id(score_id)
        row = next((row for row in sim.scores if row["id"] == number), None)
        return (
            not_found(f"No score found with id {score_id}.") if row is None else CricketFound(data=dict(row))
        )

    return await serve_cricket(request, sim, "cricket/scores/{id}", render)
