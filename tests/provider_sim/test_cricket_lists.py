"""Cricket v2 lists over HTTP: `fixtures` (filters, sort, Laravel pages of 100) and `scores`."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from devkit.simulators.provider.cricket.scores import known_rows
from tests.provider_sim.conftest import TOKEN, StartSim
from tests.provider_sim.test_cricket import (
    ORIGIN,
    ball,
    cget,
    cricket_fixture,
    data,
    score_row,
    write_cricket,
)

DAY = 86400.0
STATUSES = ("NS", "1st Innings", "Finished")


def many_fixtures(tmp_path: Path, count: int) -> Path:
    """`count` fixtures (ids 1000…), three a day from the recording's start day, statuses in turn."""
    lines = [
        {
            "t": 0,
            "fixture": cricket_fixture(
                1000 + index, STATUSES[index % 3], start_t=(index // 3) * DAY + 3600, league_id=1 + index % 2
            ),
        }
        for index in range(count)
    ]
    return write_cricket(tmp_path / "many.jsonl", lines)


def query(link: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(link).query)


async def test_fixtures_pages_hold_100_rows_with_laravel_links_and_meta(
    tmp_path: Path, start_sim: StartSim
) -> None:
    """230 fixtures: pages of 100, 100 and 30, then an empty page; `next` leads to the next page
    and keeps the request's other parameters but never the token."""
    sim = await start_sim([many_fixtures(tmp_path, 230)], wall=lambda: ORIGIN)
    first = await cget(sim, "fixtures", include="runs")
    assert first.status_code == 200
    body = first.json()
    assert set(body) == {"data", "links", "meta"}
    assert len(body["data"]) == 100
    assert [row["id"] for row in body["data"]] == list(range(1000, 1100))
    assert all("runs" in row and "balls" not in row for row in body["data"])
    assert body["meta"] == {
        "current_page": 1,
        "from": 1,
        "last_page": 3,
        "path": f"{sim.base_url}/api/v2.0/fixtures",
        "per_page": 100,
        "to": 100,
        "total": 230,
    }
    links = body["links"]
    assert links["prev"] is None
    assert query(links["first"])["page"] == ["1"]
    assert query(links["last"])["page"] == ["3"]
    assert query(links["next"]) == {"include": ["runs"], "page": ["2"]}
    assert TOKEN not in first.text

    # Following `next` (the client adds its token, as to any request).
    async with httpx.AsyncClient() as bare:
        second = (await bare.get(f"{links['next']}&api_token={TOKEN}")).json()
    assert [row["id"] for row in second["data"]] == list(range(1100, 1200))
    assert second["meta"]["current_page"] == 2
    assert (second["meta"]["from"], second["meta"]["to"]) == (101, 200)
    assert query(second["links"]["prev"])["page"] == ["1"]
    assert query(second["links"]["next"])["page"] == ["3"]

    third = (await cget(sim, "fixtures", page="3")).json()
    assert [row["id"] for row in third["data"]] == list(range(1200, 1230))
    assert (third["meta"]["from"], third["meta"]["to"], third["links"]["next"]) == (201, 230, None)

    beyond = (await cget(sim, "fixtures", page="4")).json()
    assert beyond["data"] == []
    assert (beyond["meta"]["from"], beyond["meta"]["to"], beyond["meta"]["total"]) == (None, None, 230)
    # Laravel reads a page that is not a positive number as page 1.
    assert (await cget(sim, "fixtures", page="x")).json()["meta"]["current_page"] == 1


async def test_fixtures_filter_by_status_league_and_mapped_start_dates(
    tmp_path: Path, start_sim: StartSim
) -> None:
    """`filter[status]` (any of, any case), `filter[league_id]`, and `filter[starts_between]` on the
    dates the fixtures are served with (mapped onto the replay clock), both days included."""
    # clock_zero one day after the recording's start: every served date is a day later.
    sim = await start_sim([many_fixtures(tmp_path, 30)], wall=lambda: ORIGIN + DAY)

    async def ids(**params: str) -> list[int]:
        response = await cget(sim, "fixtures", **params)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        assert body["meta"]["total"] == len(body["data"])
        return [row["id"] for row in body["data"]]

    finished = await ids(**{"filter[status]": "Finished"})
    assert finished == list(range(1002, 1030, 3))
    assert await ids(**{"filter[status]": "finished,NS"}) == sorted(finished + list(range(1000, 1030, 3)))
    assert await ids(**{"filter[league_id]": "2", "filter[status]": "1st Innings"}) == [
        fixture_id for fixture_id in range(1001, 1030, 3) if (fixture_id - 1000) % 2 == 1
    ]
    # Recorded days 1-2 April are served as 2-3 April.
    assert await ids(**{"filter[starts_between]": "2024-04-02,2024-04-03"}) == list(range(1000, 1006))
    assert await ids(**{"filter[starts_between]": "2024-04-01,2024-04-01"}) == []
    assert await ids(**{"filter[starts_between]": "2024-04-11,2024-04-30"}) == list(range(1027, 1030))
    assert await ids(**{"filter[starts_between]": "2024-04-02,2024-04-02", "filter[status]": "NS"}) == [1000]
    # Newest first on request.
    assert (await ids(sort="-starting_at"))[:3] == [1027, 1028, 1029]

    for bad in ("2024-04-02", "2024-04-03,2024-04-02", "yesterday,today"):
        response = await cget(sim, "fixtures", **{"filter[starts_between]": bad})
        assert response.status_code == 400
        assert set(response.json()) == {"message"}
    assert (await cget(sim, "fixtures", **{"filter[league_id]": "one"})).status_code == 400


async def test_scores_is_the_whole_lookup_table_recorded_rows_first(
    tmp_path: Path, start_sim: StartSim
) -> None:
    """Every known row (ids 1…83 of cricket.md §4) plus each distinct recorded `score`; a recorded
    row wins over the known one with its id; not paginated, `{"data": […]}` only."""
    odd = score_row(99, "7 Runs (odd)", 7)
    renamed = score_row(69, "1 run", 1)
    lines = [
        {
            "t": 0,
            "fixture": cricket_fixture(
                7, "1st Innings", balls=[ball(1, 0.1, 0, odd), ball(4, 0.2, 0, renamed)]
            ),
        }
    ]
    sim = await start_sim([write_cricket(tmp_path / "scores.jsonl", lines)])
    rows = data(await cget(sim, "scores"))
    by_id = {row["id"]: row for row in rows}
    assert [row["id"] for row in rows] == sorted(by_id)
    assert set(by_id) == {row["id"] for row in known_rows()} | {99}
    assert by_id[99] == odd
    assert by_id[69]["name"] == "1 run"
    assert all(row["resource"] == "scores" for row in rows)
    # Facts of cricket.md §4: a wide is not a ball, a no-ball is; a run-out is a wicket and out.
    assert (by_id[17]["name"], by_id[17]["ball"], by_id[17]["runs"]) == ("1 Wide", False, 1)
    assert (by_id[7]["ball"], by_id[7]["noball"], by_id[7]["noball_runs"]) == (True, 1, 1)
    assert by_id[63]["is_wicket"] and by_id[63]["out"]
    assert by_id[16]["six"] and by_id[16]["runs"] == 7
    assert {1, 4, 47, 53, 54, 79, 82, 83} <= set(by_id)

    assert data(await cget(sim, "scores/53"))["name"] == "SIX"
    missing = await cget(sim, "scores/12345")
    assert missing.status_code == 404
    assert set(missing.json()) == {"message"}
    async with httpx.AsyncClient(base_url=sim.base_url) as bare:
        assert (await bare.get("/api/v2.0/scores")).status_code == 401
