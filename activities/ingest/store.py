"""The ingest transaction: one provider snapshot becomes log entries, a scoreboard and an outbox row.

Everything for one snapshot commits together or not at all. The fixture row is upserted first,
which also locks it: every writer of a match's log (this ingest, the desk command commit) takes
that lock before it reads the last seq, so seqs are gap-free and never claimed twice. On top of
that, `match_event (fixture_id, stream, provider_event_id)` and `timeline_item (fixture_id, seq)`
are unique, so a retry, a replay or a second worker after a crash can only ever add nothing.
"""

from __future__ import annotations

import time
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from activities.ingest.fixture_rows import sync_fixtures, upsert_fixture
from activities.ingest.log_writer import LogWriter, apply_plan, load_known
from activities.ingest.plan import Board, IngestPlan, plan
from activities.ingest.scoreboard_rows import keep_ball_facts, load_board, store_board, stored_line
from domain.cricket.live import line_of
from domain.match_run import Source
from domain.moments import MOMENT_ENTRY_KINDS, KeyMoment, moments_of
from domain.progress import IngestSummary
from domain.snapshot import MatchState, Snapshot
from scoreline.db.fixture_scoreboard import select_fixture_with_scoreboard, stored_board
from scoreline.db.tables import fixture, scoreboard, timeline_item
from scoreline.metrics.instruments import metrics
from scoreline.outbox.writer import announce


class IngestStore:
    """Writes snapshots into Postgres. One instance per worker, sharing the engine's pool."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def ingest(
        self, snapshot: Snapshot, source: Source, trace_id: str | None = None, *, since: int | None = None
    ) -> IngestSummary:
        """Ingest `snapshot`; the summary's key moments are those of every entry after `since`.

        `since` is the version the caller last reported (the watch's workflow knows it). Entries
        between it and what this transaction found were written by an attempt that never told
        anyone (its worker died after the commit): their moments are reported now, once.
        """
        started = time.perf_counter()
        async with self._engine.begin() as conn:
            mode = await upsert_fixture(conn, snapshot)
            board = await load_board(conn, snapshot.fixture_id)
            if mode == "desk":
                return _desk_owned(snapshot, board)
            snapshot = await keep_ball_facts(conn, snapshot)
            known = await load_known(conn, snapshot.fixture_id)
            decided = plan(snapshot, known, board)
            writer = LogWriter(conn, snapshot.fixture_id, board.version, trace_id)
            await apply_plan(writer, decided, source)
            await store_board(conn, snapshot, decided, writer.seq)
            if writer.seq > board.version:
                await _announce(conn, snapshot, decided, board.version, writer.seq, trace_id)
            unreported: tuple[KeyMoment, ...] = ()
            if since is not None and since < board.version:
                unreported = await _moments_between(conn, snapshot.fixture_id, since, board.version)
        _record(writer, time.perf_counter() - started)
        return _summary(snapshot, decided, writer, unreported)

    async def catch_up(self, fixture_id: int, since: int) -> IngestSummary | None:
        """What the log holds beyond version `since`, as one summary; None if nothing.

        A watch starts with this: an earlier attempt may have committed a change and died before
        returning it, and the retry's own ingest then finds nothing new to insert.
        """
        async with self._engine.connect() as conn:
            row = (
                await conn.execute(
                    select_fixture_with_scoreboard(
                        *stored_board, fixture.c.starting_at, timeline_item.c.trace_id
                    )
                    .outerjoin(
                        timeline_item,
                        (timeline_item.c.fixture_id == scoreboard.c.fixture_id)
                        & (timeline_item.c.seq == scoreboard.c.version),
                    )
                    .where(fixture.c.id == fixture_id)
                )
            ).first()
            if row is None or row.version is None or row.version <= since:
                return None
            moments = await _moments_between(conn, fixture_id, since, row.version)
        return IngestSummary(
            fixture_id=fixture_id,
            version=row.version,
            previous_version=since,
            entries=row.version - since,
            state=MatchState(row.state),
            home=row.home_score,
            away=row.away_score,
            minute=(row.body or {}).get("minute"),
            kickoff=row.starting_at,
            key_moments=moments,
            trace_id=row.trace_id,
            cricket=stored_line(row.body),
        )

    async def upsert_fixtures(self, snapshots: list[Snapshot]) -> int:
        """Refresh a fixture list's rows (`fixture_rows.sync_fixtures`); returns the rows written."""
        async with self._engine.begin() as conn:
            return await sync_fixtures(conn, snapshots)


async def _announce(
    conn: AsyncConnection,
    snapshot: Snapshot,
    decided: IngestPlan,
    previous: int,
    version: int,
    trace_id: str | None,
) -> None:
    """The outbox row and the wake-up, in the same transaction as the entries they announce."""
    payload = {
        "fixture_id": snapshot.fixture_id,
        "from_seq": previous + 1,
        "version": version,
        "state": decided.board.state,
        "score": {"home": decided.board.home, "away": decided.board.away},
    }
    await announce(conn, snapshot.fixture_id, version, payload, trace_id)


async def _moments_between(
    conn: AsyncConnection, fixture_id: int, after: int, upto: int
) -> tuple[KeyMoment, ...]:
    """The key moments of the provider's entries with `after < seq <= upto`, in log order."""
    rows = await conn.execute(
        select(timeline_item.c.kind, timeline_item.c.body)
        .where(
            timeline_item.c.fixture_id == fixture_id,
            timeline_item.c.seq > after,
            timeline_item.c.seq <= upto,
            timeline_item.c.origin == "provider",
            timeline_item.c.kind.in_(MOMENT_ENTRY_KINDS),
        )
        .order_by(timeline_item.c.seq)
    )
    return moments_of((row.kind, row.body) for row in rows)


def _desk_owned(snapshot: Snapshot, board: Board) -> IngestSummary:
    """Desks own the score: the provider's view was not logged; the stored board stands."""
    return IngestSummary(
        fixture_id=snapshot.fixture_id,
        version=board.version,
        previous_version=board.version,
        state=MatchState(board.state),
        home=board.home,
        away=board.away,
        kickoff=snapshot.kickoff,
        desk_owned=True,
    )


def _summary(
    snapshot: Snapshot, decided: IngestPlan, writer: LogWriter, unreported: tuple[KeyMoment, ...]
) -> IngestSummary:
    return IngestSummary(
        fixture_id=snapshot.fixture_id,
        version=writer.seq,
        previous_version=writer.start_seq,
        entries=writer.seq - writer.start_seq,
        state=MatchState(decided.board.state),
        home=decided.board.home,
        away=decided.board.away,
        minute=snapshot.minute,
        kickoff=snapshot.kickoff,
        key_moments=(*unreported, *writer.key_moments),
        pending_misses=len(decided.misses),
        trace_id=writer.trace_id,
        cricket=None if snapshot.cricket is None else line_of(snapshot.cricket),
    )


def _record(writer: LogWriter, took: float) -> None:
    """The commit's duration and what it logged (moments an earlier attempt wrote are not counted again)."""
    instruments = metrics()
    instruments.ingest_commit_duration.record(timedelta(seconds=took))
    if writer.seq > writer.start_seq:
        instruments.changes_committed.add(writer.seq - writer.start_seq, {"source": "provider"})
    for moment in writer.key_moments:
        instruments.key_moments.add(1, {"kind": moment.kind})
