"""The fan-out's Postgres side: targets in keyset batches, the `effect_log` gate, and the results.

The gate is the ledger of one push (`fixture_id`, `event_key`, `effect`), one row per target
(`live_activity.id`), whose `outcome.state` goes:

    claimed (by one attempt) ──► sent | dead | rejected        (settled after the answer)
        │                  ├───► stale                         (a newer push claimed it before the request)
        │                  ├───► row deleted                   (released: a later attempt sends it)
        │                  └───► claimed by `released`         (a quiet claim released: a later
        │                                                        attempt sends it, quietly too)
        ├── the claiming attempt died, not marked `sending` ──► claimed by the next attempt
        │     (never marked, or unmarked after an answer that did not deliver)
        ├── marked by an attempt that may still be alive ──► left to it for CLAIMANT_GRACE_S
        │     (paused, not dead: it sends, settles or releases it; the next attempt waits)
        └── the claiming attempt died after marking it ──► in_doubt (an alert or start: never sent
                                             │                       again, no double alert)
                                             └──► claimed     (a start whose activity never came:
                                                               sent again after START_DOUBT_GRACE_S)
    stale                                                     (never claimed: a newer state was shown)

A claim is an `INSERT … ON CONFLICT DO NOTHING`: only a new row is acted on, whatever retries
happen. Every statement handles a whole batch (arrays and `unnest`), and the deliveries share their
last look before sending (`mark_sending`, see `activities.push.last_look`), so a 10,000-device fan-out
costs a few hundred round trips, not tens of thousands.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from activities.push.delivery import Delivery, SendPolicy
from activities.push.last_look import Marks
from activities.push.pacing import LastSent
from activities.push.payloads import FixtureNames
from domain.pushes import PushInput, PushResult
from scoreline.logging import get_logger
from scoreline.outages import is_deadlock, is_lock_timeout, is_outage

log = get_logger(__name__)
_T = TypeVar("_T")
_TakeOver = Literal["all", "unsent", "quietly", "none"]

FIRST_DEVICE = str(uuid.UUID(int=0))
"""Cursor before every device id (`start` walks followers by device id)."""
FIRST_ACTIVITY = "0"
"""Cursor before every live activity id (`update` and `end` walk activities by id)."""
OUTAGE_PATIENCE_S = 30.0
"""How long a statement of the fan-out keeps being tried while Postgres is out of reach (a restart
takes seconds, a cut as long as the cut) before the attempt fails. Reads wait too, and the
claims' unmark; only the last look, the activities' unmark and the early death write try once (a
push whose look fails is released, never sent blind; the batch's settlement writes the rest
again). An attempt that failed on its first read was retried after Temporal's backoff, which
grows to 30 s (the soak of 2026-12-05, seed 18: a walk over a match's new followers failed on a
cut, then on a restart, waited 30 s after each, and ended after the final whistle)."""
OUTAGE_RETRY_S = (0.1, 1.0)
"""First and longest wait between two tries of one. Short: until a claim's unmark or a batch's
settlement lands, a SIGKILL leaves its claims in doubt. The 30-minute soak's seed 25 restarted
Postgres for 4 s and SIGKILLed the worker 1.7 s after it came back: a goal's unmark, tried once
then, left 153 alerts never sent in doubt, and starts whose settlement waited up to 5 s between
tries were in doubt too, sent again to 51 phones whose token reports the outages held up."""
START_DOUBT_GRACE_S = 60.0
"""A push-to-start in doubt whose activity has reported no token this long after its request
went out (the last look's `sending_at`; its claim can be much older: the soak's seed 17 sent a
start 23 s after claiming it, and a grace counted from the claim ran out 37 s after the phone
got it) is sent again. A phone that got the start reports its activity's token within seconds,
so one still silent most likely never got it; left in doubt, it would have no Live Activity for
the whole match (the soak's SIGKILLed fan-outs left 128 followers so). A phone that got it but
stayed offline past this grace may show a second activity: the lesser harm than none."""


CLAIMANT_GRACE_S = 60.0
"""How long after its mark (`sending_at`) another attempt's claim marked as being sent is left to
that attempt. Its worker may be paused, not dead: the soak's seed 18 SIGSTOPped one past its
heartbeat timeout between its last look and its requests; the retry took the marked claims as in
doubt at once, and the resumed worker, which had sent none of them, could only release them after
the retry had finished: a goal never reached 111 phones. The next attempt now waits that long for
the claimant's own word (sent, released, unmarked) before it calls the claim in doubt. A SIGKILLed
claimant costs that push this wait (the retry itself starts a heartbeat timeout, 30 s, after)."""
UNMARK_SLOW_S = 0.5
"""An unmark (`PushStore.unmark_sending`) or an early death write (`PushStore.switch_off`) slower
than this is logged: until it commits, a SIGKILL leaves its claims in doubt, or its death unknown."""
UNMARK_LOCK_WAIT = "200ms"
"""How long an unmark waits for a locked activity row (Postgres `lock_timeout`) before it leaves
the activity's mark to lapse."""
RELEASED_BY = "released"
"""The claimant of a quiet claim its attempt released (`PushStore._release`): no attempt, so the
next one of the end takes it over, quietly."""
SENDING_FENCE_MARGIN_S = 1.0
"""How much longer than a look is kept (`SendPolicy.look_kept`) the activity's mark of the push that
look let go (`live_activity.sending_at`) holds a newer push's look back (`Standing.BEHIND`): a
request that has not started by then looks again, and one that started has left (a request waits
for room in the connection's send window before its last check, `activities.push.connection`).
The batch's settlement, or an answer that did not deliver, takes the mark off sooner (a batch is
settled once its slowest delivery ends: a delivery backing off holds its batch's marks up to this
long); a SIGKILLed sender's stands this long."""


@dataclass(frozen=True)
class Target:
    """One live activity to push to, with the token to use and what it was last sent."""

    live_activity_id: int
    device_id: uuid.UUID
    token: str
    last: LastSent
    read_at: float
    """`time.monotonic()` before the read that found it: a token death Postgres did not show
    then is the worker's `DeadTokens` to tell."""

    @property
    def key(self) -> str:
        """The `effect_log.target`."""
        return str(self.live_activity_id)


@dataclass(frozen=True)
class Claims:
    """What one `PushStore.claim` got."""

    mine: list[Target]
    """Claimed by this attempt: to send now."""
    awaited: list[Target]
    """Marked as being sent by another attempt, less than `CLAIMANT_GRACE_S` ago: claim them again
    later (its claimant may still send, settle or release them)."""
    quiet: frozenset[str] = frozenset()
    """Keys of `mine` taken over from an attempt that may have sent them (`PushInput.resent_quietly`):
    sent again without the alert."""


@dataclass(frozen=True)
class Batch:
    targets: list[Target]
    cursor: str
    """Where the next batch starts (the last follower or activity looked at, targeted or not)."""
    last: bool
    """No rows after this batch."""


class PushStore:
    """Reads and writes for one push; safe to share between concurrent fan-outs.

    `urgent` (the main engine if None) serves the writes that a SIGKILL turns into a loss while
    they wait: an unmark (claims left marked are in doubt) and an early death write (the next
    attempt sends to the dead token again). On the fan-outs' pool they queued behind loads,
    claims and settlements: the 30-minute soak's seed 28 measured 82% of a slow unmark's claims
    part (the median of 339) and 69% of a slow death write as waiting for a connection, outage
    retries included; seed 27's death, unwritten 1.4 s after its answer, most likely waited so."""

    def __init__(
        self,
        engine: AsyncEngine,
        push: PushInput,
        environment: str,
        claimant_grace: float = CLAIMANT_GRACE_S,
        sending_fence: float = SendPolicy().look_kept + SENDING_FENCE_MARGIN_S,
        *,
        urgent: AsyncEngine | None = None,
    ) -> None:
        self._engine = engine
        self._urgent = urgent if urgent is not None else engine
        self._push = push
        self._environment = environment
        self._claimant_grace = claimant_grace
        self._sending_fence = sending_fence
        self._gate = {"fixture_id": push.fixture_id, "event_key": push.event_key, "effect": push.effect}

    @property
    def first_cursor(self) -> str:
        return FIRST_DEVICE if self._push.kind == "start" else FIRST_ACTIVITY

    def resume_point(self, cursor: str, awaited: Iterable[Target]) -> str:
        """`cursor`, or one whose next batch begins with the first of `awaited` if that is
        earlier in walking order (a retry walks to them again)."""
        if self._push.kind == "start":
            keys = [uuid.UUID(cursor).int, *(target.device_id.int - 1 for target in awaited)]
            return str(uuid.UUID(int=max(0, min(keys))))
        return str(min([int(cursor), *(target.live_activity_id - 1 for target in awaited)]))

    async def fixture_names(self) -> FixtureNames | None:
        """The names the payload shows; None for an unknown fixture and for one retention purged.

        A purged fixture (`effects_purged_at`: its match has been over for the retention age) has
        no `effect_log` rows left, so the gate could no longer tell what was sent: pushing again
        would repeat every alert. None makes the fan-out send nothing.
        """

        async def read(conn: AsyncConnection, _: bool) -> Any:
            return (
                await conn.execute(
                    text(
                        """SELECT name, home_team, away_team, competition, effects_purged_at
                        FROM fixture WHERE id = :id"""
                    ),
                    {"id": self._push.fixture_id},
                )
            ).first()

        row = await self._through_outages(read)
        if row is None or row.effects_purged_at is not None:
            return None
        home, away = _name(row.home_team), _name(row.away_team)
        if home is None or away is None:
            # A fixture without participants (rare): fall back on "Home vs Away" from its name.
            left, _, right = str(row.name).partition(" vs ")
            home, away = home or left or "Home", away or right or "Away"
        return FixtureNames(home=home, away=away, competition=_name(row.competition))

    async def load(self, after: str, limit: int) -> Batch:
        """The next batch of targets after `after`."""
        if self._push.kind == "start":
            return await self._through_outages(lambda conn, _: self._load_followers(conn, after, limit))

        async def read(conn: AsyncConnection, _: bool) -> list[Target]:
            read_at = time.monotonic()
            rows = await conn.execute(
                text(self._activities + " AND la.id > :after ORDER BY la.id LIMIT :limit"),
                {**self._scope, "after": int(after), "limit": limit},
            )
            return [_target(row, read_at) for row in rows]

        targets = await self._through_outages(read)
        cursor = targets[-1].key if targets else after
        return Batch(targets, cursor, last=len(targets) < limit)

    async def reload(self, targets: list[Target]) -> list[Target]:
        """The same activities again (fresh `last_*`), those still running with a live token."""

        async def read(conn: AsyncConnection, _: bool) -> list[Target]:
            read_at = time.monotonic()
            rows = await conn.execute(
                text(self._activities + " AND la.id = ANY(CAST(:ids AS bigint[])) ORDER BY la.id"),
                {**self._scope, "ids": [t.live_activity_id for t in targets]},
            )
            return [_target(row, read_at) for row in rows]

        return await self._through_outages(read)

    async def claim(
        self, targets: list[Target], stale: list[Target], claimant: str, state: dict[str, Any]
    ) -> Claims:
        """Gate and reserve: the targets this attempt now owns and must send to.

        Claims an earlier (dead) attempt left: a repeatable push (`PushInput.repeatable`) takes them
        over and sends again (the device shows it once; left in doubt, the soak found activities
        never ended after a fan-out's database connection was cut), and so does an end with its
        alert, without the alert where the dead attempt may have sent it (`Claims.quiet`,
        `PushInput.resent_quietly`), once those marked are `claimant_grace` old; any other takes
        over those its last look never marked, waits for those marked less than `claimant_grace` ago (by default
        `CLAIMANT_GRACE_S`; `Claims.awaited`) and marks the rest `in_doubt`.
        Then it records `stale` ones, inserts the claims, and moves each claimed activity's
        last-sent state (`state`, the content-state) and timestamp forward; a claimed activity that
        meanwhile got a newer state is settled `stale`.

        Its commit can be lost to a Postgres outage after it went through (the soak's cut left a
        goal's claims with no one to send them, in doubt for good): it is tried again through the
        outage (`_through_outages`), and claims this attempt already holds count as its own.
        """
        return await self._through_outages(
            lambda conn, _: self._claim_in(conn, targets, stale, claimant, state)
        )

    async def _claim_in(
        self,
        conn: AsyncConnection,
        targets: list[Target],
        stale: list[Target],
        claimant: str,
        state: dict[str, Any],
    ) -> Claims:
        push = self._push
        keys = [t.key for t in targets]
        take_over: _TakeOver = "all" if push.repeatable else "quietly" if push.resent_quietly else "unsent"
        await self._settle_dead_claims(conn, keys, claimant, take_over)
        await self._settle_dead_claims(conn, [t.key for t in stale], claimant, "none")
        if push.kind == "start":
            await self._retake_doubtful_starts(conn, keys, claimant)
        if stale:
            await self._insert_gate(conn, [t.key for t in stale], {"state": "stale"})
        if not targets:
            return Claims([], [])
        await self._insert_gate(conn, keys, {"state": "claimed", "by": claimant})
        held, quiet, others = await self._holders(conn, keys, claimant)
        claimed = [t for t in targets if t.key in held]
        awaited = [t for t in targets if t.key in others]
        if not claimed:
            return Claims([], awaited)
        reserved = set(
            (
                await conn.execute(
                    text(
                        """UPDATE live_activity
                        SET last_timestamp = :timestamp,
                            last_content_state = CAST(:state AS jsonb),
                            last_routine_at = CASE WHEN CAST(:routine AS boolean) THEN now() ELSE last_routine_at END,
                            updated_at = now()
                        WHERE id = ANY(CAST(:ids AS bigint[]))
                          AND (last_timestamp IS NULL OR last_timestamp <= :timestamp)
                          AND COALESCE((last_content_state->>'version')::bigint, -1) <= :version
                        RETURNING id"""
                    ),
                    {
                        "timestamp": push.timestamp,
                        "state": json.dumps(state),
                        "routine": push.routine,
                        "version": push.state.version,
                        "ids": [t.live_activity_id for t in claimed],
                    },
                )
            ).scalars()
        )
        overtaken = [t.key for t in claimed if t.live_activity_id not in reserved]
        if overtaken:
            await self._set_outcomes(
                conn, overtaken, [json.dumps({"state": "stale"})] * len(overtaken), claimant
            )
        mine = [t for t in claimed if t.live_activity_id in reserved]
        return Claims(mine, awaited, frozenset(t.key for t in mine if t.key in quiet))

    async def mark_sending(self, claimant: str, live_activity_ids: list[int]) -> Marks | None:
        """Mark `claimant`'s claims on these activities as being sent (`sending`, and when:
        `sending_at`, epoch seconds), where no newer push has claimed the activity since (moved
        its last-sent timestamp past this one's), Postgres has not switched its token off (the
        start's push-to-start token, or the activity's own), and no older push's request may still
        be on its way to it (`behind`: look again shortly).

        The activity keeps which push its last look let go (`sending_timestamp`, `sending_at`) until
        that push's batch is settled, an answer that did not deliver, or `sending_fence` seconds:
        a newer push claimed on another worker right after an older one's look otherwise raced
        that look's request to APNs (the soak of 2026-12-05, seed 18: 39 phones got a routine
        update after the newer update claimed after its look). The activity's row is updated
        first, so its row lock orders the look and a claim moving the timestamp: the look re-checks
        a claim committed meanwhile, and a claim that waited for the look commits after it, so
        the newer push's own look (after its claim) finds the mark. An activity claimed, live,
        neither let go nor overtaken in the statement's snapshot is `behind`: a claim committed
        during the statement is what the next look finds.

        None when the statement fails: nothing is known, so nothing is sent (the soak's seed 14
        sent 90 routine updates after newer alerts while Postgres restarted)."""
        try:
            async with self._engine.begin() as conn:
                rows = await conn.execute(
                    text(
                        """WITH asked AS (
                            SELECT la.id, la.last_timestamp,
                                   CASE WHEN :start THEN (SELECT d.push_to_start_active FROM device d
                                                          WHERE d.id = la.device_id)
                                        ELSE la.push_token_active END AS live,
                                   la.id IN (
                                       SELECT CAST(e.target AS bigint) FROM effect_log e
                                       WHERE e.fixture_id = :fixture_id AND e.event_key = :event_key
                                         AND e.effect = :effect AND e.target = ANY(CAST(:targets AS text[]))
                                         AND e.outcome->>'state' = 'claimed' AND e.outcome->>'by' = :claimant
                                   ) AS mine
                            FROM live_activity la WHERE la.id = ANY(CAST(:ids AS bigint[]))
                        ), let_go AS (
                            UPDATE live_activity la SET sending_timestamp = :timestamp, sending_at = now()
                            WHERE la.id = ANY(ARRAY(SELECT id FROM asked WHERE live AND mine))
                              AND (la.last_timestamp IS NULL OR la.last_timestamp <= :timestamp)
                              AND (la.sending_timestamp IS NULL OR la.sending_timestamp >= :timestamp
                                   OR la.sending_at < now() - make_interval(secs => :fence))
                            RETURNING la.id
                        ), marked AS (
                            UPDATE effect_log e SET outcome = e.outcome || jsonb_build_object(
                                'sending', true, 'sending_at', extract(epoch FROM clock_timestamp()))
                            WHERE e.fixture_id = :fixture_id AND e.event_key = :event_key
                              AND e.effect = :effect
                              AND e.target = ANY(ARRAY(SELECT CAST(id AS text) FROM let_go))
                              AND e.outcome->>'state' = 'claimed' AND e.outcome->>'by' = :claimant
                            RETURNING CAST(e.target AS bigint) AS id
                        )
                        SELECT id, 'marked' AS found FROM marked
                        UNION ALL SELECT id, 'gone' FROM asked WHERE NOT live
                        UNION ALL SELECT id, 'behind' FROM asked
                            WHERE live AND mine AND id <> ALL(ARRAY(SELECT id FROM let_go))
                              AND (last_timestamp IS NULL OR last_timestamp <= :timestamp)"""
                    ),
                    {
                        **self._gate,
                        "start": self._push.kind == "start",
                        "ids": live_activity_ids,
                        "targets": [str(live_activity_id) for live_activity_id in live_activity_ids],
                        "claimant": claimant,
                        "timestamp": self._push.timestamp,
                        "fence": self._sending_fence,
                    },
                )
                found: dict[str, set[int]] = {"marked": set(), "gone": set(), "behind": set()}
                for row in rows:
                    found[row.found].add(int(row.id))
                return Marks(marked=found["marked"], gone=found["gone"], behind=found["behind"])
        except (OSError, SQLAlchemyError) as error:
            # Either way nothing is sent on it; a statement gone wrong is our bug, said out loud
            # (every push of the fan-out is then released, and it is retried, until it is fixed).
            if not is_outage(error):
                log.error("push.last_look_failed", fixture_id=self._push.fixture_id, error=repr(error))
            return None

    async def unmark_sending(self, claimant: str, live_activity_ids: list[int]) -> None:
        """Take `mark_sending`'s marks off `claimant`'s claims on these activities, and off the
        activities: APNs answered and did not deliver, so until the next look nothing is on its
        way, the next attempt may send them (`activities.push.last_look`) and a newer push need
        not wait. The claims' unmark waits a Postgres outage out (`_through_outages`): a claim
        left marked is in doubt at a SIGKILL.

        The claims' marks are committed first, on their own: only this push's attempts touch its
        claims, while an activity's row can be locked by another push's claim, look or settlement,
        and in one transaction the claims waited for those locks. A SIGKILL before the unmark
        commits leaves the claims in doubt, never sent though APNs answered 500 (the 30-minute
        soak's seed 24: 25 goal alerts, their worker killed 1.6 s after the answer; its logs do
        not show where that time went, so an unmark slower than `UNMARK_SLOW_S` is logged with
        its two parts, how many of its claims' tries reached Postgres, and when the last of them
        held its connection). The activities' marks wait at most `UNMARK_LOCK_WAIT` for a locked
        row, as the next unmarks of the fan-out queue behind this one (`last_look._Shared`); one
        left on lapses (`SENDING_FENCE_MARGIN_S`)."""
        began = time.monotonic()
        claims_s = None
        connected: list[float] = []  # when each try held its connection (pool checkout and BEGIN done)
        targets = [str(live_activity_id) for live_activity_id in live_activity_ids]

        async def unmark_claims(conn: AsyncConnection, _: bool) -> None:
            connected.append(time.monotonic())
            await conn.execute(
                text(
                    """UPDATE effect_log e SET outcome = e.outcome - 'sending' - 'sending_at'
                    WHERE e.fixture_id = :fixture_id AND e.event_key = :event_key
                      AND e.effect = :effect AND e.target = ANY(CAST(:targets AS text[]))
                      AND e.outcome->>'state' = 'claimed' AND e.outcome->>'by' = :claimant
                      AND e.outcome ? 'sending'"""
                ),
                {**self._gate, "targets": targets, "claimant": claimant},
            )

        try:
            await self._through_outages(unmark_claims, self._urgent)
            claims_s = time.monotonic() - began
            async with self._urgent.begin() as conn:
                await conn.execute(
                    text("SELECT set_config('lock_timeout', :wait, true)"), {"wait": UNMARK_LOCK_WAIT}
                )
                await self._nothing_on_its_way(conn, claimant, live_activity_ids)
        except (OSError, SQLAlchemyError) as error:
            if not (
                is_outage(error) or (claims_s is not None and (is_deadlock(error) or is_lock_timeout(error)))
            ):
                log.error("push.unmark_failed", fixture_id=self._push.fixture_id, error=repr(error))
        took = time.monotonic() - began
        if took > UNMARK_SLOW_S:
            log.warning(
                "push.unmark_slow",
                fixture_id=self._push.fixture_id,
                event_key=self._push.event_key,
                activities=len(live_activity_ids),
                claims_s=None if claims_s is None else round(claims_s, 3),
                connected_tries=len(connected),
                connected_s=round(connected[-1] - began, 3) if connected else None,
                seconds=round(took, 3),
            )

    async def lift_marks(self, claimant: str, live_activity_ids: list[int]) -> None:
        """After a settlement: nothing of `claimant`'s is on its way to these activities any more,
        so a newer push's look need not wait for their marks (`mark_sending`) to lapse. Tried
        once, in a transaction of its own (a settlement locks activities in another order than
        the claims and looks beside it): a mark left on lapses within seconds."""
        try:
            async with self._engine.begin() as conn:
                await self._nothing_on_its_way(conn, claimant, live_activity_ids)
        except (OSError, SQLAlchemyError) as error:
            if not (is_outage(error) or is_deadlock(error)):
                log.error("push.lift_marks_failed", fixture_id=self._push.fixture_id, error=repr(error))

    async def _nothing_on_its_way(
        self,
        conn: AsyncConnection,
        claimant: str,
        live_activity_ids: list[int],
    ) -> None:
        """Take this push's mark off these activities (`mark_sending`): `claimant`'s requests to
        them were answered, or never left; a newer push's look lets it go at once. Not where
        another attempt of the push holds the claim and marked it as being sent: its request may
        be on its way.

        The rows carrying this push's mark are locked first, in a statement of their own: the
        write's check of the claims then reads a snapshot taken after every lock it waited for.
        In one statement a write that waited for a row saw the claims as they were before the
        wait (READ COMMITTED re-checks only the locked row), so it wiped the mark another attempt
        made meanwhile, its claim taken over after the unmark or the settlement released it, and
        a newer push could overtake that attempt's request."""
        await conn.execute(
            text(
                """SELECT id FROM live_activity
                WHERE id = ANY(CAST(:ids AS bigint[])) AND sending_timestamp = :timestamp
                ORDER BY id FOR NO KEY UPDATE"""
            ),
            {"ids": live_activity_ids, "timestamp": self._push.timestamp},
        )
        await conn.execute(
            text(
                """UPDATE live_activity la SET sending_timestamp = NULL, sending_at = NULL
                WHERE la.id = ANY(CAST(:ids AS bigint[])) AND la.sending_timestamp = :timestamp
                  AND NOT EXISTS (
                      SELECT 1 FROM effect_log e
                      WHERE e.fixture_id = :fixture_id AND e.event_key = :event_key
                        AND e.effect = :effect AND e.target = la.id::text
                        AND e.outcome->>'state' = 'claimed' AND e.outcome->>'by' <> :claimant
                        AND e.outcome ? 'sending')"""
            ),
            {
                **self._gate,
                "ids": live_activity_ids,
                "timestamp": self._push.timestamp,
                "claimant": claimant,
            },
        )

    async def settle(
        self, results: list[tuple[Target, Delivery]], claimant: str, trace_id: str | None
    ) -> None:
        """Write the outcomes, every attempt, and what they mean for tokens and activities.

        Only `claimant`'s own claims take an outcome (or are released): an attempt that was paused
        while the next took some of its claims over must not overwrite (or delete) the next one's.
        Its claims the next called in doubt take the outcome it knows.

        Only this attempt knows them: a claim it leaves unsettled is in doubt for good (a start is
        then never sent; the soak found a Postgres restart during an APNs 500 burst leaving the
        followers it hit without a Live Activity). So a write that fails because Postgres is out
        of reach is tried again (`_through_outages`); each retry first looks whether the commit it
        lost went through. Then the activities' marks come off (`lift_marks`)."""
        if not results:
            return

        async def write(conn: AsyncConnection, retry: bool) -> None:
            if not (retry and await self._settled(conn, results[0], claimant)):
                await self._write_settlement(conn, results, claimant, trace_id)

        await self._through_outages(write)
        await self.lift_marks(claimant, [target.live_activity_id for target, _ in results])

    async def _through_outages(
        self, transaction: Callable[[AsyncConnection, bool], Awaitable[_T]], engine: AsyncEngine | None = None
    ) -> _T:
        """`transaction(conn, retry)` in one transaction on `engine` (the fan-outs' own if None),
        tried again while Postgres is out of reach (at most `OUTAGE_PATIENCE_S`) or after
        Postgres aborted it to break a deadlock (a claim, a look and a settlement of two pushes
        lock some of the same activities); `retry` says an earlier try's commit may have gone
        through."""
        deadline = time.monotonic() + OUTAGE_PATIENCE_S
        delay = OUTAGE_RETRY_S[0]
        retry = False
        while True:
            try:
                async with (engine if engine is not None else self._engine).begin() as conn:
                    return await transaction(conn, retry)
            except (OSError, SQLAlchemyError) as error:
                if not (is_outage(error) or is_deadlock(error)) or time.monotonic() + delay > deadline:
                    raise
            retry = True
            await asyncio.sleep(delay)
            delay = min(delay * 2, OUTAGE_RETRY_S[1])

    async def _settled(self, conn: AsyncConnection, probe: tuple[Target, Delivery], claimant: str) -> bool:
        """Whether a settlement holding `probe` was committed already (its claim is gone: released,
        released quietly by `claimant`, or replaced by the outcome)."""
        unsettled = await conn.scalar(
            text(
                """SELECT outcome->>'state' = 'claimed' AND outcome->>'released_by' IS DISTINCT FROM :claimant
                FROM effect_log WHERE fixture_id = :fixture_id
                AND event_key = :event_key AND effect = :effect AND target = :target"""
            ),
            {**self._gate, "target": probe[0].key, "claimant": claimant},
        )
        return not unsettled

    async def _write_settlement(
        self,
        conn: AsyncConnection,
        results: list[tuple[Target, Delivery]],
        claimant: str,
        trace_id: str | None,
    ) -> None:
        kept = [(t, d) for t, d in results if d.outcome != "released"]
        released = [t.key for t, d in results if d.outcome == "released"]
        if kept:
            await self._set_outcomes(conn, [t.key for t, _ in kept], [_outcome(d) for _, d in kept], claimant)
        if released:
            await self._release(conn, released, claimant)
        await self._record_attempts(conn, results, trace_id)
        await self._apply(conn, results)

    async def _release(self, conn: AsyncConnection, keys: list[str], claimant: str) -> None:
        """`claimant`'s claims among `keys` go to the next attempt: deleted, except a `quiet` one
        of an end with its alert (`PushInput.resent_quietly`; its earlier request may have reached
        the phone with the alert), which is kept as claimed by `RELEASED_BY` so the next attempt
        takes it over quietly too. Deleted, its next claim was a fresh one and the end went with
        its alert again: a second banner. A repeatable push's claim is deleted whether or not it
        is quiet: it goes again as it is, and kept, a stale one would stay counted in doubt."""
        params = {**self._gate, "targets": keys, "claimant": claimant}
        if self._push.resent_quietly:
            await conn.execute(
                text(
                    """UPDATE effect_log SET outcome = jsonb_build_object(
                            'state', 'claimed', 'by', CAST(:nobody AS text), 'released_by', CAST(:claimant AS text),
                            'quiet', true)
                    WHERE fixture_id = :fixture_id AND event_key = :event_key
                      AND effect = :effect AND target = ANY(CAST(:targets AS text[]))
                      AND outcome->>'state' = 'claimed' AND outcome->>'by' = :claimant
                      AND outcome @> '{"quiet": true}'"""
                ),
                {**params, "nobody": RELEASED_BY},
            )
        await conn.execute(
            text(
                """DELETE FROM effect_log WHERE fixture_id = :fixture_id AND event_key = :event_key
                AND effect = :effect AND target = ANY(CAST(:targets AS text[]))
                AND outcome->>'state' = 'claimed' AND outcome->>'by' = :claimant"""
            ),
            params,
        )

    async def close_remaining(self, *, claimed_too: bool) -> None:
        """After an `end`'s walk: every activity of the fixture still pending or active, up to the
        push's generation (a newer one, started meanwhile for a new follower, stays), is over,
        except one this push could still reach and has not tried (a running activity with a live
        token of this push's environment and no `effect_log` row, or one released quietly): the
        next walk sends it the end. Unless `claimed_too`, a reachable one whose end is still
        claimed (another attempt's request may be on its way, or it may release it) stays too.

        Row locks order this against a token report (`report_activity_token`): a report that
        commits first makes its activity reachable; one that comes after finds it ended."""

        async def close(conn: AsyncConnection, _: bool) -> None:
            await conn.execute(
                text(
                    """UPDATE live_activity la SET status = 'ended', ended_at = COALESCE(la.ended_at, now()),
                        updated_at = now()
                    WHERE la.fixture_id = :fixture_id AND la.status IN ('pending', 'active')
                      AND la.generation <= :generation
                      AND NOT (
                          la.status = 'active' AND la.push_token_active AND la.push_token IS NOT NULL
                          AND EXISTS (SELECT 1 FROM device d
                                      WHERE d.id = la.device_id AND d.environment = :environment)
                          AND NOT EXISTS (SELECT 1 FROM effect_log e
                                          WHERE e.fixture_id = :fixture_id AND e.event_key = :event_key
                                            AND e.effect = :effect AND e.target = la.id::text
                                            AND e.outcome->>'by' IS DISTINCT FROM :nobody
                                            AND (:claimed_too OR e.outcome->>'state' <> 'claimed')))"""
                ),
                {**self._scope, **self._gate, "nobody": RELEASED_BY, "claimed_too": claimed_too},
            )

        await self._through_outages(close)

    async def totals(self, deferred: int) -> PushResult:
        """The ledger of this push, counted by state."""

        async def count(conn: AsyncConnection, _: bool) -> Any:
            return (
                await conn.execute(
                    text(
                        """SELECT outcome->>'state' AS state, count(*) AS n FROM effect_log
                        WHERE fixture_id = :fixture_id AND event_key = :event_key AND effect = :effect
                        GROUP BY 1"""
                    ),
                    self._gate,
                )
            ).all()

        rows = await self._through_outages(count)
        counts = {str(row.state): int(row.n) for row in rows}
        return PushResult(
            effect=self._push.effect,
            targets=sum(counts.values()),
            sent=counts.get("sent", 0),
            stale=counts.get("stale", 0),
            deactivated=counts.get("dead", 0),
            rejected=counts.get("rejected", 0),
            in_doubt=counts.get("in_doubt", 0) + counts.get("claimed", 0),
            deferred=deferred,
        )

    # --- internals -------------------------------------------------------------------------

    @property
    def _scope(self) -> dict[str, Any]:
        return {
            "fixture_id": self._push.fixture_id,
            "environment": self._environment,
            "generation": self._push.generation,
        }

    @property
    def _activities(self) -> str:
        """The running activities this push is for: an `update`, those of its generation; an `end`,
        those of its generation and any older one still running (nothing is left on a screen)."""
        return _ACTIVITIES + (
            " AND la.generation <= :generation"
            if self._push.kind == "end"
            else " AND la.generation = :generation"
        )

    async def clear_followers_waiting(self) -> None:
        """A start walk begins at the first follower: followers who follow from now on mark the
        match again (and get a walk of their own); those before are this walk's. A retry resuming
        at its cursor must not call this: followers behind it are not its."""

        async def clear(conn: AsyncConnection, _: bool) -> None:
            await conn.execute(
                text("DELETE FROM followers_waiting WHERE fixture_id = :fixture_id"),
                {"fixture_id": self._push.fixture_id},
            )

        await self._through_outages(clear)

    async def _load_followers(self, conn: AsyncConnection, after: str, limit: int) -> Batch:
        """Followers with a live push-to-start token and no Live Activity of the push's generation
        started yet; each gets a `pending` activity row of that generation to push for. A follower
        whose activity of that generation runs (or ran) is never walked again for it."""
        read_at = time.monotonic()
        followers = (
            await conn.execute(
                text(
                    """SELECT d.id, d.push_to_start_token AS token
                    FROM follow f JOIN device d ON d.id = f.device_id
                    WHERE f.fixture_id = :fixture_id AND d.environment = :environment
                      AND d.push_to_start_active AND d.push_to_start_token IS NOT NULL
                      AND f.device_id > CAST(:after AS uuid)
                      AND NOT EXISTS (
                          SELECT 1 FROM live_activity la
                          WHERE la.device_id = f.device_id AND la.fixture_id = f.fixture_id
                            AND la.generation = :generation
                            AND (la.status <> 'pending' OR la.started_at IS NOT NULL))
                    ORDER BY f.device_id LIMIT :limit"""
                ),
                {**self._scope, "after": after, "limit": limit},
            )
        ).all()
        if not followers:
            return Batch([], after, last=True)
        tokens = {row.id: str(row.token) for row in followers}
        ids = list(tokens)
        await conn.execute(
            text(
                """INSERT INTO live_activity (device_id, fixture_id, generation)
                SELECT unnest(CAST(:ids AS uuid[])), :fixture_id, :generation
                ON CONFLICT (device_id, fixture_id, generation) DO NOTHING"""
            ),
            {"ids": ids, "fixture_id": self._push.fixture_id, "generation": self._push.generation},
        )
        # An activity already running (started in the app) or already started by a push (its
        # update token not reported yet) must not get a second one.
        rows = (
            await conn.execute(
                text(
                    """SELECT la.id, la.device_id, la.last_timestamp,
                           (la.last_content_state->>'version')::bigint AS last_version,
                           extract(epoch FROM la.last_routine_at)::float8 AS routine_at
                    FROM live_activity la
                    WHERE la.fixture_id = :fixture_id AND la.device_id = ANY(CAST(:ids AS uuid[]))
                      AND la.generation = :generation AND la.status = 'pending' AND la.started_at IS NULL
                    ORDER BY la.device_id"""
                ),
                {"ids": ids, "fixture_id": self._push.fixture_id, "generation": self._push.generation},
            )
        ).all()
        targets = [_target(row, read_at, token=tokens[row.device_id]) for row in rows]
        return Batch(targets, str(followers[-1].id), last=len(followers) < limit)

    async def _settle_dead_claims(
        self, conn: AsyncConnection, keys: list[str], claimant: str, take_over: _TakeOver
    ) -> None:
        """Another attempt's claims among `keys`: taken over by `claimant` (`all`; `unsent`: those
        its last look never marked as being sent, which never reached APNs; `quietly`: all of
        them too; a claim taken over from one marked so, or from one taken over so, is `quiet`:
        it may have reached APNs), the rest marked `in_doubt`, except, with `unsent` and
        `quietly`, those marked less than `claimant_grace` ago: left to their claimant for now (a
        paused claimant's end, sent with its alert, is not raced by a quiet one). A later attempt of the same activity (`run/activity#N`) is never
        touched: the retry of a paused attempt is alive by definition, and the paused one, resumed
        before its cancellation came, took its unmarked claims over and released them when it
        stopped, so that no one sent them."""
        if not keys:
            return
        taken = {
            "all": "true",
            "unsent": "NOT (outcome ? 'sending')",
            "quietly": "true",
            "none": "false",
        }[take_over]
        left = (
            "AND NOT (outcome ? 'sending' AND COALESCE(CAST(outcome->>'sending_at' AS float8), 0)"
            " > extract(epoch FROM clock_timestamp()) - :grace)"
            if take_over in ("unsent", "quietly")
            else ""
        )
        lineage, attempt = _lineage(claimant)
        await conn.execute(
            text(
                f"""UPDATE effect_log SET outcome = CASE WHEN {taken}
                    THEN jsonb_build_object('state', 'claimed', 'by', CAST(:claimant AS text), 'took_over', outcome,
                                            'quiet', outcome ? 'sending' OR outcome @> '{{"quiet": true}}')
                    ELSE jsonb_build_object('state', 'in_doubt', 'claim', outcome) END
                WHERE fixture_id = :fixture_id AND event_key = :event_key AND effect = :effect
                  AND target = ANY(CAST(:targets AS text[]))
                  AND outcome->>'state' = 'claimed' AND outcome->>'by' <> :claimant {left}
                  AND NOT (split_part(outcome->>'by', '#', 1) = :lineage
                           AND COALESCE(CAST(substring(outcome->>'by' FROM '#([0-9]+)$') AS int), 0) > :attempt)"""
            ),
            {
                **self._gate,
                "targets": keys,
                "claimant": claimant,
                "grace": self._claimant_grace,
                "lineage": lineage,
                "attempt": attempt,
            },
        )

    async def _retake_doubtful_starts(self, conn: AsyncConnection, keys: list[str], claimant: str) -> None:
        """Starts among `keys` in doubt for `START_DOUBT_GRACE_S` (since their request went out,
        or their activity's last change if later) with their activity still pending
        and token-less are claimed by `claimant` to be sent again (the doubt kept under
        `resent`). Those in doubt for less mark the match as having followers waiting, so the
        fixture sync's sweep signals another walk for them once the grace is over (this walk
        cleared the mark as it began)."""
        if not keys:
            return
        doubtful = (
            await conn.execute(
                text(
                    """SELECT e.target, GREATEST(
                        la.updated_at, to_timestamp(CAST(e.outcome->'claim'->>'sending_at' AS float8))
                      ) < now() - make_interval(secs => :grace) AS due
                    FROM effect_log e JOIN live_activity la ON la.id = CAST(e.target AS bigint)
                    WHERE e.fixture_id = :fixture_id AND e.event_key = :event_key AND e.effect = :effect
                      AND e.target = ANY(CAST(:targets AS text[])) AND e.outcome->>'state' = 'in_doubt'
                      AND la.status = 'pending' AND la.started_at IS NULL
                    FOR UPDATE OF e"""
                ),
                {**self._gate, "targets": keys, "grace": START_DOUBT_GRACE_S},
            )
        ).all()
        due = [str(row.target) for row in doubtful if row.due]
        if due:
            await conn.execute(
                text(
                    """UPDATE effect_log SET outcome = jsonb_build_object(
                        'state', 'claimed', 'by', CAST(:claimant AS text), 'resent', outcome)
                    WHERE fixture_id = :fixture_id AND event_key = :event_key AND effect = :effect
                      AND target = ANY(CAST(:targets AS text[]))"""
                ),
                {**self._gate, "targets": due, "claimant": claimant},
            )
        if len(due) < len(doubtful):
            await conn.execute(
                text(
                    """INSERT INTO followers_waiting (fixture_id) VALUES (:fixture_id)
                    ON CONFLICT (fixture_id) DO NOTHING"""
                ),
                {"fixture_id": self._push.fixture_id},
            )

    async def _holders(
        self, conn: AsyncConnection, keys: list[str], claimant: str
    ) -> tuple[set[str], set[str], set[str]]:
        """Which of `keys` `claimant` holds the claim of (new, taken over, or from its own earlier
        try whose answer was lost), which of those are `quiet` (taken over from a claim that may
        have reached APNs), and which another attempt still holds."""
        rows = await conn.execute(
            text(
                """SELECT target, outcome->>'by' = :claimant AS mine,
                          outcome @> '{"quiet": true}' AS quiet FROM effect_log
                WHERE fixture_id = :fixture_id AND event_key = :event_key AND effect = :effect
                  AND target = ANY(CAST(:targets AS text[])) AND outcome->>'state' = 'claimed'"""
            ),
            {**self._gate, "targets": keys, "claimant": claimant},
        )
        held: set[str] = set()
        quiet: set[str] = set()
        others: set[str] = set()
        for row in rows:
            (held if row.mine else others).add(str(row.target))
            if row.mine and row.quiet:
                quiet.add(str(row.target))
        return held, quiet, others

    async def _insert_gate(
        self, conn: AsyncConnection, keys: list[str], outcome: dict[str, Any]
    ) -> list[str]:
        """Insert ledger rows; returns the keys that were new."""
        inserted = await conn.execute(
            text(
                """INSERT INTO effect_log (fixture_id, event_key, effect, target, outcome)
                SELECT :fixture_id, :event_key, :effect, t, CAST(:outcome AS jsonb)
                FROM unnest(CAST(:targets AS text[])) AS t
                ON CONFLICT (fixture_id, event_key, effect, target) DO NOTHING
                RETURNING target"""
            ),
            {**self._gate, "targets": keys, "outcome": json.dumps(outcome)},
        )
        return [str(key) for key in inserted.scalars()]

    async def _set_outcomes(
        self, conn: AsyncConnection, keys: list[str], outcomes: list[str], claimant: str
    ) -> None:
        """`claimant`'s outcomes of its claims, and of those the next attempt called in doubt when
        APNs answered them (a `stale` would hide a start in doubt from its resend)."""
        await conn.execute(
            text(
                """UPDATE effect_log e SET outcome = CAST(v.outcome AS jsonb)
                FROM unnest(CAST(:targets AS text[]), CAST(:outcomes AS text[])) AS v(target, outcome)
                WHERE e.fixture_id = :fixture_id AND e.event_key = :event_key AND e.effect = :effect
                  AND e.target = v.target
                  AND CASE e.outcome->>'state' WHEN 'claimed' THEN e.outcome->>'by' = :claimant
                      WHEN 'in_doubt' THEN e.outcome->'claim'->>'by' = :claimant
                          AND CAST(v.outcome AS jsonb)->>'state' IN ('sent', 'dead', 'rejected')
                      ELSE false END"""
            ),
            {**self._gate, "targets": keys, "outcomes": outcomes, "claimant": claimant},
        )

    async def _record_attempts(
        self, conn: AsyncConnection, results: list[tuple[Target, Delivery]], trace_id: str | None
    ) -> None:
        rows = [(target, attempt) for target, delivery in results for attempt in delivery.attempts]
        if not rows:
            return
        await conn.execute(
            text(
                """INSERT INTO push_attempt (fixture_id, event_key, effect, device_id, live_activity_id,
                    token_kind, attempt, priority, payload_bytes, apns_id, status, reason, latency_ms, trace_id)
                SELECT :fixture_id, :event_key, :effect, v.device_id, v.live_activity_id, :token_kind,
                       v.attempt, :priority, v.payload_bytes, v.apns_id, v.status, v.reason, v.latency_ms, :trace_id
                FROM unnest(
                    CAST(:device_ids AS uuid[]), CAST(:live_activity_ids AS bigint[]),
                    CAST(:attempts AS smallint[]), CAST(:payload_bytes AS integer[]),
                    CAST(:apns_ids AS uuid[]), CAST(:statuses AS smallint[]),
                    CAST(:reasons AS text[]), CAST(:latencies AS integer[])
                ) AS v(device_id, live_activity_id, attempt, payload_bytes, apns_id, status, reason, latency_ms)"""
            ),
            {
                **self._gate,
                "token_kind": "push_to_start" if self._push.kind == "start" else "update",
                "priority": self._push.priority,
                "trace_id": trace_id,
                "device_ids": [t.device_id for t, _ in rows],
                "live_activity_ids": [t.live_activity_id for t, _ in rows],
                "attempts": [a.number for _, a in rows],
                "payload_bytes": [a.payload_bytes for _, a in rows],
                "apns_ids": [_uuid(a.apns_id) for _, a in rows],
                "statuses": [a.status for _, a in rows],
                "reasons": [a.reason for _, a in rows],
                "latencies": [round(a.latency_ms) for _, a in rows],
            },
        )

    async def switch_off(self, dead: list[tuple[Target, Delivery]]) -> None:
        """Switch off, now, the tokens APNs answered `dead` (`activities.push.death_writer`): one
        try, as the batch's settlement writes them again through any outage.

        Until it commits, a SIGKILL takes the death with it and the next attempt sends to the
        token again (the 30-minute soak's seed 27: a 410 answered 1.4 s before its worker's kill,
        right after a pause). A write slower than `UNMARK_SLOW_S` is logged with when it held its
        connection, to tell pool waits from Postgres time."""
        began = time.monotonic()
        async with self._urgent.begin() as conn:
            connected_s = time.monotonic() - began
            await self._apply(conn, dead)
        took = time.monotonic() - began
        if took > UNMARK_SLOW_S:
            log.warning(
                "push.death_write_slow",
                fixture_id=self._push.fixture_id,
                deaths=len(dead),
                connected_s=round(connected_s, 3),
                seconds=round(took, 3),
            )

    async def _apply(self, conn: AsyncConnection, results: list[tuple[Target, Delivery]]) -> None:
        """Dead tokens are switched off for good; a start or end that went through moves the activity on."""
        dead = [(t, d) for t, d in results if d.outcome == "dead"]
        # A death with no status is one the last look found already switched off (`Standing.GONE`):
        # the push that got its answer has switched the token off, and it stays so.
        answered = [(t, d) for t, d in dead if d.status is not None]
        sent = [t.live_activity_id for t, d in results if d.outcome == "sent"]
        kind = self._push.kind
        if dead and kind == "start":
            # Only the token that failed, and only if it was not registered again after APNs'
            # timestamp (apns.md §3: a re-registered token is live again).
            await conn.execute(
                text(
                    """UPDATE device d SET push_to_start_active = false, updated_at = now()
                    FROM unnest(CAST(:ids AS uuid[]), CAST(:tokens AS text[]), CAST(:stamps AS float8[]))
                         AS v(id, token, stamp)
                    WHERE d.id = v.id AND d.push_to_start_token = v.token
                      AND (v.stamp IS NULL OR d.updated_at <= to_timestamp(v.stamp / 1000.0))"""
                ),
                {
                    "ids": [t.device_id for t, _ in answered],
                    "tokens": [t.token for t, _ in answered],
                    "stamps": [d.timestamp_ms for _, d in answered],
                },
            )
            await conn.execute(
                text(
                    """UPDATE live_activity SET status = 'failed', updated_at = now()
                    WHERE id = ANY(CAST(:ids AS bigint[])) AND status = 'pending'"""
                ),
                {"ids": [t.live_activity_id for t, _ in dead]},
            )
        elif answered:
            # An update token that is dead (410) means the activity ended or was dismissed.
            await conn.execute(
                text(
                    """UPDATE live_activity la SET push_token_active = false,
                        status = CASE WHEN v.gone THEN 'ended' ELSE 'failed' END,
                        ended_at = COALESCE(la.ended_at, now()), updated_at = now()
                    FROM unnest(CAST(:ids AS bigint[]), CAST(:tokens AS text[]), CAST(:gone AS boolean[]))
                         AS v(id, token, gone)
                    WHERE la.id = v.id AND la.push_token = v.token"""
                ),
                {
                    "ids": [t.live_activity_id for t, _ in answered],
                    "tokens": [t.token for t, _ in answered],
                    "gone": [d.status == 410 for _, d in answered],
                },
            )
        if sent and kind == "start":
            await conn.execute(
                text(
                    """UPDATE live_activity SET started_at = now(), updated_at = now()
                    WHERE id = ANY(CAST(:ids AS bigint[])) AND started_at IS NULL"""
                ),
                {"ids": sent},
            )
        elif sent and kind == "end":
            await conn.execute(
                text(
                    """UPDATE live_activity SET status = 'ended', ended_at = now(), updated_at = now()
                    WHERE id = ANY(CAST(:ids AS bigint[]))"""
                ),
                {"ids": sent},
            )


_ACTIVITIES = """SELECT la.id, la.device_id, la.push_token AS token, la.last_timestamp,
       (la.last_content_state->>'version')::bigint AS last_version,
       extract(epoch FROM la.last_routine_at)::float8 AS routine_at
FROM live_activity la JOIN device d ON d.id = la.device_id
WHERE la.fixture_id = :fixture_id AND la.status = 'active' AND la.push_token_active
  AND la.push_token IS NOT NULL AND d.environment = :environment"""
"""Running activities with a live update token (`update`, `end`; `PushStore._activities` adds the
generation)."""


def _lineage(claimant: str) -> tuple[str, int]:
    """A claimant `run/activity#attempt` as (`run/activity`, attempt); another shape has no
    attempt number, and no claim counts as a later attempt's than it."""
    lineage, _, attempt = claimant.rpartition("#")
    return (lineage, int(attempt)) if lineage and attempt.isdigit() else (claimant, 2**31 - 1)


def _target(row: Any, read_at: float, token: str | None = None) -> Target:
    return Target(
        live_activity_id=int(row.id),
        device_id=row.device_id,
        token=token if token is not None else str(row.token),
        last=LastSent(
            version=None if row.last_version is None else int(row.last_version),
            timestamp=None if row.last_timestamp is None else int(row.last_timestamp),
            routine_at=None if row.routine_at is None else float(row.routine_at),
        ),
        read_at=read_at,
    )


def _outcome(delivery: Delivery) -> str:
    document: dict[str, Any] = {"state": delivery.outcome, "attempts": len(delivery.attempts)}
    for name in ("status", "reason", "apns_id"):
        value = getattr(delivery, name)
        if value is not None:
            document[name] = value
    return json.dumps(document)


def _name(value: Any) -> str | None:
    """`name` of a `{id, name, …}` JSONB column."""
    if isinstance(value, dict) and isinstance(value.get("name"), str) and value["name"]:
        return str(value["name"])
    return None


def _uuid(value: str | None) -> uuid.UUID | None:
    """APNs always echoes a UUID `apns-id`; anything else is kept out of the uuid column."""
    try:
        return None if value is None else uuid.UUID(value)
    except ValueError:
        return None
