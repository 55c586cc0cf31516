"""Bench: a goal tapped on one scorer desk → the other desk's scoreboard, in a real browser.

Run: `.venv/bin/python bench/desk_latency.py [--goals 30]`

Goal (issue 13): *save → other screen under 0.5 s*, reported, not asserted.

Setup: a Temporal dev server of the bench's own, a fresh migrated database and a Redis database
on the tests' servers, the worker and the API (serving `/desk/{id}`) in this process, and Debian's
Chromium under Playwright with two browser contexts (two devices) signed in to one desk-scored
fixture. Desk A kicks off, then taps `--goals` goals (alternating sides, through the goal dialog).

Latency of a goal = when desk B's score digits changed (a MutationObserver) - when Save was
clicked on desk A (the tap is then saved to IndexedDB, sent, committed, and streamed to B), both
`performance.timeOrigin + performance.now()` in one browser on one machine
(`tests/web/latency.py`). It prints the figures and appends a dated section to
`bench/results.md`.
"""

from __future__ import annotations

import argparse
import asyncio
import uuid
from datetime import UTC, datetime, timedelta

from playwright.async_api import async_playwright

from api.app import create_app
from bench._common import (
    append_section,
    bench_database,
    bench_redis,
    machine_note,
    ms,
    percentile,
    temporal_server,
)
from scoreline.accounts.desk_fixtures import FixtureDraft, create_fixture
from scoreline.accounts.store import create_desk
from scoreline.db.engine import create_engine
from scoreline.logging import configure_logging
from scoreline.settings import Settings
from tests.commands.harness import FOOTBALL_SQUADS
from tests.support.http import serve
from tests.support.worker import running_worker
from tests.web.browser import CHROMIUM, DeskScreen
from tests.web.latency import goal_to_other_screen

GOAL_SECONDS = 0.5


async def measure(goals: int) -> list[float]:
    async with (
        temporal_server() as env,
        bench_database("bench_desk") as database_url,
        bench_redis() as redis_url,
    ):
        settings = Settings(
            database_url=database_url,
            redis_url=redis_url,
            temporal_address=env.client.service_client.config.target_host,
            temporal_task_queue=f"bench-{uuid.uuid4()}",
            log_level="warning",
            log_format="console",
        )
        engine = create_engine(database_url)
        draft = FixtureDraft.model_validate(
            {
                "sport": "football",
                "home": {"name": "Riverside", "players": FOOTBALL_SQUADS["home"]},
                "away": {"name": "Harbour", "players": FOOTBALL_SQUADS["away"]},
                "kickoff": datetime.now(UTC) + timedelta(hours=1),
            }
        )
        fixture_id = await create_fixture(engine, draft)
        _, token = await create_desk(engine, "bench desk", [fixture_id])
        await engine.dispose()
        async with (
            running_worker(env.client, settings),
            serve(create_app(settings)) as url,
            async_playwright() as playwright,
        ):
            browser = await playwright.chromium.launch(executable_path=str(CHROMIUM))
            a, b = await DeskScreen.open(browser), await DeskScreen.open(browser)
            try:
                await a.sign_in(url, fixture_id, token)
                await b.sign_in(url, fixture_id, token)
                await a.tap("Start first half")
                await b.expect_version(1)
                seconds = []
                for n in range(goals):
                    side = "home" if n % 2 == 0 else "away"
                    scorer = f"9 {side.title()} Player 9"
                    seconds.append(await goal_to_other_screen(a, b, side, scorer))
                    await b.expect_version(n + 2)
                return seconds
            finally:
                await a.close()
                await b.close()
                await browser.close()


def report(seconds: list[float]) -> list[str]:
    p50, p95, worst = percentile(seconds, 50), percentile(seconds, 95), max(seconds)
    verdict = "met" if p95 <= GOAL_SECONDS else "NOT met"
    return [
        f"### {datetime.now(UTC):%Y-%m-%d %H:%M} UTC — scorer desk: tap → other desk's scoreboard (bench/desk_latency.py)",
        "",
        f"Debian Chromium ({CHROMIUM}) under Playwright, two contexts on one fixture; worker and API in the bench's process; {machine_note()}.",
        "",
        f"{len(seconds)} goals: p50 {ms(p50)} ms, p95 {ms(p95)} ms, max {ms(worst)} ms; goal < 500 ms: {verdict}.",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goals", type=int, default=30)
    args = parser.parse_args()
    configure_logging("warning", "console")
    lines = report(asyncio.run(measure(args.goals)))
    print("\n".join(lines))
    append_section(lines)


if __name__ == "__main__":
    main()
