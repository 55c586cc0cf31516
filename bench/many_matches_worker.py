"""One worker process of `bench/many_matches.py --workers W` (not a bench of its own).

Run by the bench, never by hand: `.venv/bin/python bench/many_matches_worker.py --polls FILE`, with
the environment `tests.support.worker.worker_process_env` makes (the bench's database, Redis,
Temporal server and task queues, the simulator as the provider, the poll intervals, the budget).

It is the real worker (`workers.main.running_workers` on `workers.dependencies.worker_dependencies`),
as `scoreline worker` runs it, except that its football client is the observed one
(`bench._common.observed_client`: the deployment's shared board and hourly budget, as production
builds it) and there is no metrics exporter and no schedule. Every watch poll it sees goes to
`FILE` as a JSON line (`bench.many_matches.PollRecord`), written every `FLUSH_SECONDS`: the bench
may SIGKILL this process mid-run (`--kill-worker-at`), and what it polled until then must be on disk
for the takeover figures. Its warnings and errors are counted in `FILE.warnings.json`, and
`FILE.ready` appears once both Temporal workers poll their queues, so the bench starts its matches
only when every worker can take them (otherwise the first to come up takes them all).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
from dataclasses import replace
from pathlib import Path

from temporalio import workflow

from bench._common import Fetch, WarningCounter, configure_bench_logging, observed_client
from bench.many_matches import PollRecord
from scoreline.settings import Settings
from scoreline.temporal.client import connect_from
from workers.dependencies import worker_dependencies
from workers.main import running_workers

FLUSH_SECONDS = 0.1
"""How stale the polls file may be: a killed worker's last polls are lost at most this long."""
WARNINGS_EVERY = 10
"""Flushes between rewrites of the warnings file."""


class PollWriter:
    """Appends the watch polls this worker sees to its JSONL file, a batch every `FLUSH_SECONDS`.

    Writing each line as it comes would cost a syscall per poll on the event loop the watches run
    on (800 a second at 2,000 matches); batching keeps that cost out of the worker's CPU figures.
    """

    def __init__(self, path: Path, warnings: WarningCounter) -> None:
        self._path = path
        self._warnings = warnings
        self._lines: list[str] = []
        self._flushes = 0

    def on_fetch(self, fetch: Fetch) -> None:
        if fetch.activity_type == "watch_match":  # the bench counts watch polls only
            self._lines.append(PollRecord.of(fetch).line())

    def flush(self) -> None:
        lines, self._lines = self._lines, []
        if lines:
            with self._path.open("a") as handle:
                handle.write("\n".join(lines) + "\n")
        self._flushes += 1
        if self._flushes % WARNINGS_EVERY == 0:
            self.write_warnings()

    def write_warnings(self) -> None:
        """Replace the warnings file whole (a reader never sees half of it)."""
        target = self._path.with_suffix(".warnings.json")
        scratch = target.with_suffix(".tmp")
        scratch.write_text(json.dumps(dict(self._warnings.counts)))
        scratch.replace(target)

    async def run(self) -> None:
        while True:
            await asyncio.sleep(FLUSH_SECONDS)
            self.flush()


async def serve(polls: Path, warnings: WarningCounter) -> None:
    """The worker until SIGTERM (or SIGINT), then a clean stop and the last lines written."""
    settings = Settings()  # from the environment the bench made
    workflow.logger.workflow_info_on_message = False  # as `workers.main.run` does
    client = await connect_from(settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    writer = PollWriter(polls, warnings)
    flushing = asyncio.create_task(writer.run())
    try:
        async with worker_dependencies(settings) as shared:
            observed = observed_client(settings, shared.redis, writer.on_fetch)
            try:
                async with running_workers(client, replace(shared, provider=observed), settings):
                    polls.with_suffix(".ready").touch()
                    await stop.wait()
            finally:
                await observed.aclose()
    finally:
        flushing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await flushing
        writer.flush()
        writer.write_warnings()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--polls", type=Path, required=True, help="The JSONL file its polls go to.")
    parser.add_argument("--log-level", default="error", help="Log level on stderr.")
    args = parser.parse_args()
    warnings = configure_bench_logging(args.log_level)
    asyncio.run(serve(args.polls, warnings))


if __name__ == "__main__":
    main()
