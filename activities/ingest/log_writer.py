"""The log's writes for one snapshot: the plan's events, amendments, retractions and state or score
changes become `match_event` rows and numbered `timeline_item` entries.

The store calls these inside its transaction, after its fixture upsert took the fixture's row lock,
so the seqs handed out here are gap-free and never claimed twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from activities.ingest.plan import Amendment, EventKey, IngestPlan, KnownEvent, body_hash, item_body
from domain.match_run import Source
from domain.moments import KeyMoment, entry_moment
from domain.snapshot import Item, Stream
from scoreline.db.tables import match_event, timeline_item


class LogWriter:
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


async def load_known(conn: AsyncConnection, fixture_id: int) -> dict[EventKey, KnownEvent]:
    """The fixture's stored events as `plan` matches them, each with the seq of its first entry
    (the entry its amendments and retraction point at)."""
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


async def apply_plan(writer: LogWriter, decided: IngestPlan, source: Source) -> None:
    """Write what `plan` decided: events, then the match's state, then a score that moved alone."""
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


async def _insert_event(writer: LogWriter, item: Item, source: Source) -> None:
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


async def _amend(writer: LogWriter, amendment: Amendment) -> None:
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


async def _retract(writer: LogWriter, known: KnownEvent) -> None:
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
