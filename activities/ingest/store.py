"""The ingest transaction: one provider snapshot becomes log entries, a scoreboard and an outbox row.

Everything for one snapshot commits together or not at all. The fixture row is upserted first,
which also locks it: every writer of a match's log (this ingest, the desk command commit) takes
that lock before it reads the last seq, so seqs are gap-free and never claimed twice. On top of
that, `match_event (fixture_id, stream, provider_event_id)` and `timeline_item (fixture_id, seq)`
are unique, so a retry, a replay or a second worker after a crash can only ever add nothing.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from activities.ingest.fixture_rows import sync_fixtures, upsert_fixture
from activities.ingest.plan import (
    Amendment,
    Board,
    EventKey,
    IngestPlan,
    KnownEvent,
    body_hash,
    item_body,
    plan,
)
from domain.cricket.board import CricketBoard
from domain.cricket.live import CricketLine, line_of
from domain.moments import MOMENT_ENTRY_KINDS, KeyMoment, entry_moment, moments_of
from domain.progress import IngestSummary
from domain.snapshot import Item, MatchState, Snapshot, Stream
from scoreline.db.fixture_scoreboard import select_fixture_with_scoreboard, stored_board
from scoreline.db.tables import fixture, match_event, scoreboard, timeline_item
from scoreline.metrics.instruments import metrics
from scoreline.outbox.writer import announce
from workflows.match_types import Source


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
            board = await _load_board(conn, snapshot.fixture_id)
            if mode == "desk":
                return _desk_owned(snapshot, board)
            snapshot = await _keep_ball_facts(conn, snapshot)
            known = await _load_known(conn, snapshot.fixture_id)
            decided = plan(snapshot, known, board)
            writer = _LogWriter(conn, snapshot.fixture_id, board.version, trace_id)
            await _apply(writer, decided, source)
            await _store_board(conn, snapshot, decided, writer.seq)
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
            cricket=_stored_line(row.body),
        )

    async def upsert_fixtures(self, snapshots: list[Snapshot]) -> int:
        """Refresh a fixture list's rows (`fixture_rows.sync_fixtures`); returns the rows written."""
        async with self._engine.begin() as conn:
            return await sync_fixtures(conn, snapshots)


class _LogWriter:
    """Hands out the next seq and writes `timeline_item` rows under the fixture lock."""

    def __init__(self, conn: AsyncConnection, fixture_id: int, seq: int, trace_id: str | None) -> None:
        self.conn = conn
        self.fixture_id = fixture_id
        self.seq = seq
        self.start_seq = seq
        self.trace_id = trace_id
        self.key_moments: list[KeyMoment] = []

    async def entry(
        self,
        kind: str,
        body: Mapping[str, Any],
        *,
        match_event_id: int | None = None,
        target_seq: int | None = None,
        minute: int | None = None,
        extra_minute: int | None = None,
    ) -> int:
        self.seq += 1
        moment = entry_moment(kind, body)
        if moment is not None:
            self.key_moments.append(moment)
        await self.conn.execute(
            timeline_item.insert().values(
                fixture_id=self.fixture_id,
                seq=self.seq,
                kind=kind,
                origin="provider",
                match_event_id=match_event_id,
                target_seq=target_seq,
                minute=minute,
                extra_minute=extra_minute,
                body=dict(body),
                trace_id=self.trace_id,
            )
        )
        return self.seq


async def _load_board(conn: AsyncConnection, fixture_id: int) -> Board:
    row = (
        await conn.execute(
            select(
                scoreboard.c.version, scoreboard.c.state, scoreboard.c.home_score, scoreboard.c.away_score
            ).where(scoreboard.c.fixture_id == fixture_id)
        )
    ).first()
    last_seq = (
        await conn.execute(
            select(func.coalesce(func.max(timeline_item.c.seq), 0)).where(
                timeline_item.c.fixture_id == fixture_id
            )
        )
    ).scalar_one()
    if row is None:
        return Board(version=int(last_seq))
    return Board(version=int(last_seq), state=row.state, home=row.home_score, away=row.away_score)


async def _keep_ball_facts(conn: AsyncConnection, snapshot: Snapshot) -> Snapshot:
    """A cricket answer without its balls (an include not honoured) never takes back what the
    balls showed: the stored board's innings, batters, bowler and last six stand."""
    if snapshot.cricket is None or snapshot.balls is not None:
        return snapshot
    body = await conn.scalar(select(scoreboard.c.body).where(scoreboard.c.fixture_id == snapshot.fixture_id))
    stored = _stored_board(body)
    if stored is None:
        return snapshot
    return snapshot.model_copy(update={"cricket": stored.with_facts_of(snapshot.cricket)})


def _stored_board(body: Mapping[str, Any] | None) -> CricketBoard | None:
    raw = (body or {}).get("cricket")
    return None if raw is None else CricketBoard.model_validate(raw)


def _stored_line(body: Mapping[str, Any] | None) -> CricketLine | None:
    board = _stored_board(body)
    return None if board is None else line_of(board)


async def _load_known(conn: AsyncConnection, fixture_id: int) -> dict[EventKey, KnownEvent]:
    first_seq = (
        select(func.min(timeline_item.c.seq))
        .where(timeline_item.c.match_event_id == match_event.c.id, timeline_item.c.kind == "event")
        .scalar_subquery()
    )
    rows = await conn.execute(
        select(
            match_event.c.id,
            match_event.c.stream,
            match_event.c.provider_event_id,
            match_event.c.body,
            match_event.c.body_hash,
            match_event.c.missing_count,
            match_event.c.retracted_at,
            first_seq.label("first_seq"),
        ).where(match_event.c.fixture_id == fixture_id)
    )
    return {
        (row.stream, row.provider_event_id): KnownEvent(
            id=row.id,
            body=row.body,
            body_hash=row.body_hash,
            missing_count=row.missing_count,
            retracted=row.retracted_at is not None,
            first_seq=row.first_seq,
        )
        for row in rows
    }


async def _apply(writer: _LogWriter, decided: IngestPlan, source: Source) -> None:
    conn = writer.conn
    for item in decided.inserts:
        await _insert_event(writer, item, source)
    for amendment in decided.amendments:
        await _amend(writer, amendment)
    for quiet in decided.quiet_updates:
        await _update_event(conn, quiet.known.id, quiet.item, restore=False)
    for known in decided.seen_again:
        await conn.execute(
            match_event.update()
            .where(match_event.c.id == known.id)
            .values(missing_count=0, last_seen_at=func.now())
        )
    for known in decided.misses:
        await conn.execute(
            match_event.update()
            .where(match_event.c.id == known.id)
            .values(missing_count=match_event.c.missing_count + 1)
        )
    for known in decided.retractions:
        await _retract(writer, known)
    if decided.state_changed:
        await writer.entry("state", {"state": decided.board.state})
    if decided.score_changed and writer.seq == writer.start_seq:
        # A score that moved with no other entry (the provider corrected it alone) still moves
        # the version, so every reader keyed on versions sees it.
        await writer.entry("score", {"home": decided.board.home, "away": decided.board.away})


async def _insert_event(writer: _LogWriter, item: Item, source: Source) -> None:
    body = item_body(item)
    inserted = (
        await writer.conn.execute(
            insert(match_event)
            .values(
                fixture_id=writer.fixture_id,
                stream=item.stream.value,
                provider_event_id=item.provider_id,
                source=source,
                body=body,
                body_hash=body_hash(body),
                **_event_columns(item),
            )
            .on_conflict_do_nothing(index_elements=["fixture_id", "stream", "provider_event_id"])
            .returning(match_event.c.id)
        )
    ).scalar_one_or_none()
    if inserted is None:
        return
    await writer.entry(
        "event",
        {
            "stream": item.stream.value,
            "provider_event_id": item.provider_id,
            "type": item.type.value,
            "side": _side(item),
            "rescinded": item.rescinded,
            **_ball_entry(item),
        },
        match_event_id=inserted,
        minute=item.minute,
        extra_minute=item.extra_minute,
    )


async def _amend(writer: _LogWriter, amendment: Amendment) -> None:
    await _update_event(writer.conn, amendment.known.id, amendment.item, restore=amendment.restored)
    before = amendment.known.body
    after = item_body(amendment.item)
    await writer.entry(
        "amendment",
        {
            "stream": amendment.item.stream.value,
            "provider_event_id": amendment.item.provider_id,
            "type": amendment.item.type.value,
            "side": _side(amendment.item),
            "changed": list(amendment.changed),
            "restored": amendment.restored,
            "before": {name: before.get(name) for name in amendment.changed},
            "after": {name: after.get(name) for name in amendment.changed},
        },
        match_event_id=amendment.known.id,
        target_seq=amendment.known.first_seq,
        minute=amendment.item.minute,
        extra_minute=amendment.item.extra_minute,
    )


async def _retract(writer: _LogWriter, known: KnownEvent) -> None:
    await writer.conn.execute(
        match_event.update()
        .where(match_event.c.id == known.id)
        .values(missing_count=match_event.c.missing_count + 1, retracted_at=func.now())
    )
    item_type = known.body.get("type")
    await writer.entry(
        "retraction",
        {
            "stream": known.body.get("stream"),
            "provider_event_id": known.body.get("provider_id"),
            "type": item_type,
            "side": known.body.get("side"),
        },
        match_event_id=known.id,
        target_seq=known.first_seq,
        minute=known.body.get("minute"),
        extra_minute=known.body.get("extra_minute"),
    )


async def _update_event(conn: AsyncConnection, event_id: int, item: Item, *, restore: bool) -> None:
    body = item_body(item)
    values: dict[str, Any] = {
        "body": body,
        "body_hash": body_hash(body),
        "missing_count": 0,
        "last_seen_at": func.now(),
        **_event_columns(item),
    }
    if restore:
        values["retracted_at"] = None
    await conn.execute(match_event.update().where(match_event.c.id == event_id).values(**values))


def _ball_entry(item: Item) -> dict[str, Any]:
    """What a ball's log entry says beyond its type: where it was bowled, what it gave, and the
    milestone it brought (a fifty or hundred is a key moment, see `domain.moments`)."""
    ball = item.ball
    if ball is None:
        return {}
    entry: dict[str, Any] = {"over": ball.notation, "innings": ball.innings, "runs": ball.runs}
    if ball.milestone is not None:
        entry["milestone"] = ball.milestone
    return entry


def _event_columns(item: Item) -> dict[str, Any]:
    # Balls have no match minute: ordered by their provider id, which rises in bowling order.
    sort_order = item.provider_id if item.stream is Stream.BALLS else item.sort_order
    return {
        "type": item.type.value,
        "provider_type_id": item.provider_type_id,
        "minute": item.minute,
        "extra_minute": item.extra_minute,
        "sort_order": sort_order,
        "side": _side(item),
    }


def _side(item: Item) -> str | None:
    return item.side.value if item.side else None


async def _store_board(conn: AsyncConnection, snapshot: Snapshot, decided: IngestPlan, version: int) -> None:
    board = decided.board
    body = _board_body(snapshot)
    statement = insert(scoreboard).values(
        fixture_id=snapshot.fixture_id,
        version=version,
        state=board.state,
        home_score=board.home,
        away_score=board.away,
        body=body,
    )
    await conn.execute(
        statement.on_conflict_do_update(
            index_elements=[scoreboard.c.fixture_id],
            set_={
                "version": statement.excluded.version,
                "state": statement.excluded.state,
                "home_score": statement.excluded.home_score,
                "away_score": statement.excluded.away_score,
                "body": statement.excluded.body,
                "updated_at": func.now(),
            },
            # Never move backwards, even if a stale snapshot arrives after a newer one committed.
            where=scoreboard.c.version <= statement.excluded.version,
        )
    )


def _board_body(snapshot: Snapshot) -> dict[str, Any]:
    scores = snapshot.scores
    periods: dict[str, Any] = {}
    if scores is not None:
        for name in ("first_half", "second_half", "extra_time", "penalties"):
            pair = getattr(scores, name)
            if pair is not None:
                periods[name] = {"home": pair.home, "away": pair.away}
    body: dict[str, Any] = {
        "minute": snapshot.minute,
        "periods": periods,
        "provider_state": snapshot.provider_state,
        "finished_after": snapshot.finished_after.value if snapshot.finished_after else None,
    }
    if snapshot.cricket is not None:
        body["cricket"] = snapshot.cricket.model_dump(mode="json")
    return body


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
    snapshot: Snapshot, decided: IngestPlan, writer: _LogWriter, unreported: tuple[KeyMoment, ...]
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


def _record(writer: _LogWriter, took: float) -> None:
    """The commit's duration and what it logged (moments an earlier attempt wrote are not counted again)."""
    instruments = metrics()
    instruments.ingest_commit_duration.record(timedelta(seconds=took))
    if writer.seq > writer.start_seq:
        instruments.changes_committed.add(writer.seq - writer.start_seq, {"source": "provider"})
    for moment in writer.key_moments:
        instruments.key_moments.add(1, {"kind": moment.kind})
