"""The desk command commit as one SQL call, and the outbox's announcement as one SQL function.

Statement by statement, a desk command's commit is eleven round trips (BEGIN, the fixture lock, the
key, the last seq, the command row, the entry, the scoreboard, the fixture, the outbox row, NOTIFY,
COMMIT); as one function it is one: `scoreline_commit_command(jsonb)`, run as a single statement in
its own transaction, does the same work in the same order under the same lock and answers what
happened (`committed`, `duplicate`, `key_reused`, `moved`, `unknown_fixture`).

`scoreline_announce(fixture, version, payload, trace)` writes the `domain_event` row and the
`pg_notify('scoreline_changes', …)` wake-up; the commit function and the provider ingest both call
it, so the outbox is written one way (`scoreline.outbox.writer` names the same channel).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 13:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ANNOUNCE = """
CREATE OR REPLACE FUNCTION scoreline_announce(fid bigint, version bigint, payload jsonb, trace text)
RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
    INSERT INTO domain_event (fixture_id, seq, kind, payload, trace_id)
    VALUES (fid, version, 'match.changed', payload, trace);
    PERFORM pg_notify('scoreline_changes', jsonb_build_object('fixture_id', fid, 'version', version)::text);
END
$fn$
"""

COMMIT = """
CREATE OR REPLACE FUNCTION scoreline_commit_command(c jsonb) RETURNS jsonb LANGUAGE plpgsql AS $fn$
DECLARE
    fid bigint := (c->>'fixture_id')::bigint;
    next_seq bigint := (c->>'seq')::bigint;
    board jsonb := CASE WHEN jsonb_typeof(c->'board') = 'object' THEN c->'board' END;
    answer jsonb := c->'answer';
    fixture_state text;
    stored_hash text;
    stored_fixture bigint;
    stored_answer jsonb;
    last_seq bigint;
    shown record;
BEGIN
    SELECT state INTO fixture_state FROM fixture WHERE id = fid FOR UPDATE;
    IF NOT FOUND THEN
        RETURN jsonb_build_object('status', 'unknown_fixture');
    END IF;
    SELECT k.payload_hash, k.fixture_id, k.answer INTO stored_hash, stored_fixture, stored_answer
    FROM command k WHERE k.command_id = c->>'key';
    SELECT coalesce(max(t.seq), 0) INTO last_seq FROM timeline_item t WHERE t.fixture_id = fid;
    IF stored_hash IS NOT NULL THEN
        IF stored_hash <> c->>'payload_hash' OR stored_fixture <> fid THEN
            RETURN jsonb_build_object('status', 'key_reused', 'last_seq', last_seq);
        END IF;
        RETURN jsonb_build_object(
            'status', 'duplicate', 'answer', stored_answer, 'last_seq', last_seq,
            'stored_seq', stored_answer->'seq');
    END IF;
    IF answer->>'outcome' = 'accepted' AND next_seq IS DISTINCT FROM last_seq + 1 THEN
        RETURN jsonb_build_object('status', 'moved', 'last_seq', last_seq);
    END IF;
    IF answer->>'outcome' = 'conflict' THEN
        answer := answer || jsonb_build_object('changed', (
            SELECT coalesce(jsonb_agg(entry ORDER BY at_seq), '[]'::jsonb) FROM (
                SELECT t.seq AS at_seq,
                       jsonb_build_object('seq', t.seq, 'kind', t.kind, 'origin', t.origin, 'body', t.body)
                       || CASE WHEN t.minute IS NULL THEN '{}'::jsonb
                               ELSE jsonb_build_object('minute', t.minute) END
                       || CASE WHEN t.extra_minute IS NULL THEN '{}'::jsonb
                               ELSE jsonb_build_object('extra_minute', t.extra_minute) END AS entry
                FROM timeline_item t
                WHERE t.fixture_id = fid AND t.seq > (c->>'saw')::bigint
                ORDER BY t.seq LIMIT (c->>'max_changed')::int) since));
    END IF;
    INSERT INTO command (command_id, fixture_id, sender, code, input, payload_hash, saw, outcome, answer,
                         seq, sent_at, trace_id)
    VALUES (c->>'key', fid, c->>'sender', c->>'code', c->'input', c->>'payload_hash', (c->>'saw')::bigint,
            answer->>'outcome', answer, next_seq, (c->>'sent_at')::timestamptz, c->>'trace_id');
    IF next_seq IS NOT NULL THEN
        INSERT INTO timeline_item (fixture_id, seq, kind, origin, command_id, target_seq, minute,
                                   extra_minute, body, trace_id)
        VALUES (fid, next_seq, c->>'kind', 'desk', c->>'key', (c->>'target_seq')::bigint,
                (c->>'minute')::int, (c->>'extra_minute')::int,
                coalesce(CASE WHEN jsonb_typeof(c->'entry') = 'object' THEN c->'entry' END, '{}'::jsonb)
                    || jsonb_build_object('sender', c->>'sender'),
                c->>'trace_id');
        -- The desks' board when they own the score; else the stored one, moved to the new seq.
        INSERT INTO scoreboard AS s (fixture_id, version, state, home_score, away_score, body, rule_state)
        VALUES (fid, next_seq, coalesce(board->>'state', fixture_state), coalesce((board->>'home')::int, 0),
                coalesce((board->>'away')::int, 0), coalesce(board->'body', '{}'::jsonb), c->'rule_state')
        ON CONFLICT (fixture_id) DO UPDATE SET
            version = excluded.version,
            rule_state = excluded.rule_state,
            updated_at = now(),
            state = CASE WHEN board IS NULL THEN s.state ELSE excluded.state END,
            home_score = CASE WHEN board IS NULL THEN s.home_score ELSE excluded.home_score END,
            away_score = CASE WHEN board IS NULL THEN s.away_score ELSE excluded.away_score END,
            body = CASE WHEN board IS NULL THEN s.body ELSE excluded.body END
        RETURNING s.state, s.home_score, s.away_score INTO shown;
        IF c->>'code' = 'match.set_mode' THEN
            UPDATE fixture SET scoring_mode = c->'input'->>'mode', updated_at = now() WHERE id = fid;
        ELSIF board IS NOT NULL THEN
            UPDATE fixture SET state = board->>'state', updated_at = now()
            WHERE id = fid AND state <> board->>'state';
        END IF;
        PERFORM scoreline_announce(fid, next_seq, jsonb_build_object(
            'fixture_id', fid, 'from_seq', next_seq, 'version', next_seq, 'state', shown.state,
            'score', jsonb_build_object('home', shown.home_score, 'away', shown.away_score),
            'command', c->>'code'), c->>'trace_id');
        last_seq := next_seq;
    END IF;
    RETURN jsonb_build_object('status', 'committed', 'answer', answer, 'last_seq', last_seq);
END
$fn$
"""


def upgrade() -> None:
    op.execute(ANNOUNCE)
    op.execute(COMMIT)


def downgrade() -> None:
    op.execute("DROP FUNCTION IF EXISTS scoreline_commit_command(jsonb)")
    op.execute("DROP FUNCTION IF EXISTS scoreline_announce(bigint, bigint, jsonb, text)")
