"""The SportMonks Football v3 endpoints the simulator serves, read from the replay."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from fastapi import APIRouter, Request, Response

from devkit.simulators.provider.deps import SimulatorDep
from devkit.simulators.provider.endpoints import API_PREFIX
from devkit.simulators.provider.envelope import Found, NoResults, Outcome, bad_request
from devkit.simulators.provider.pagination import paginate
from devkit.simulators.provider.serving import View, serve

router = APIRouter(prefix=API_PREFIX, tags=["football"])

MAX_MULTI_IDS = 50


@router.get("/livescores")
async def livescores(request: Request, sim: SimulatorDep) -> Response:
    """Fixtures from 15 minutes before kick-off to 15 minutes after the end."""
    return await serve(request, sim, "livescores", lambda view: view.listing(sim.replay.livescores(view.t)))


@router.get("/livescores/inplay")
async def livescores_inplay(request: Request, sim: SimulatorDep) -> Response:
    """Fixtures in play."""
    return await serve(
        request, sim, "livescores/inplay", lambda view: view.listing(sim.replay.inplay(view.t))
    )


@router.get("/livescores/latest")
async def livescores_latest(request: Request, sim: SimulatorDep) -> Response:
    """Livescores whose tracked fields changed in the last 10 s of replay time."""
    return await serve(
        request, sim, "livescores/latest", lambda view: view.listing(sim.replay.latest(view.t))
    )


@router.get("/fixtures/multi/{ids}")
async def fixtures_multi(request: Request, sim: SimulatorDep, ids: str) -> Response:
    """Up to 50 fixtures by comma-separated id, in the order asked; unknown ids are skipped."""

    def render(view: View) -> Outcome:
        parts = [part.strip() for part in ids.split(",") if part.strip()]
        if len(parts) > MAX_MULTI_IDS:
            return bad_request(
                f"You can request a maximum of {MAX_MULTI_IDS} ids on this endpoint; {len(parts)} were given."
            )
        wanted = dict.fromkeys(int(part) for part in parts if part.isdigit())
        return view.listing([track for fixture_id in wanted if (track := sim.replay.get(fixture_id))])

    return await serve(request, sim, "fixtures/multi/{ids}", render)


@router.get("/fixtures/between/{start}/{end}")
async def fixtures_between(request: Request, sim: SimulatorDep, start: str, end: str) -> Response:
    """Fixtures whose (mapped) kick-off falls on the UTC dates `start`..`end`, paginated."""

    def render(view: View) -> Outcome:
        try:
            first, last = date.fromisoformat(start), date.fromisoformat(end)
        except ValueError:
            return bad_request("The start and end dates must be dates written as YYYY-MM-DD.")
        if last < first:
            return bad_request("The end date must not be before the start date.")
        window_start = datetime(first.year, first.month, first.day, tzinfo=UTC).timestamp()
        window_end = window_start + (last - first + timedelta(days=1)).total_seconds()
        found = []
        for track in sim.replay.tracks:
            kickoff_t = track.kickoff_t(track.at(view.t))
            if kickoff_t is not None and window_start <= view.wall_at(kickoff_t) < window_end:
                found.append((view.wall_at(kickoff_t), track.fixture_id, track))
        found.sort(key=lambda row: (row[0], row[1]))
        return paginate([view.show(track) for _, _, track in found], view.params, view.url)

    return await serve(request, sim, "fixtures/between/{start}/{end}", render)


@router.get("/fixtures/{fixture_id}")
async def fixture_by_id(request: Request, sim: SimulatorDep, fixture_id: str) -> Response:
    """One fixture; an unknown id is the "No result(s)" answer, as on the real API."""

    def render(view: View) -> Outcome:
        track = sim.replay.get(int(fixture_id)) if fixture_id.isdigit() else None
        return NoResults() if track is None else Found(data=view.show(track))

    return await serve(request, sim, "fixtures/{id}", render)
