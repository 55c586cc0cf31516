"""The provider check's rules: the recordings' outcomes read right, and each broken guarantee named."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from devkit.soak.provider_check import (
    EVENT_KEY_COLUMNS,
    ExpectedCricket,
    ExpectedFootball,
    Fleeting,
    ReplayClock,
    StoredBoard,
    StoredEvent,
    StoredFixture,
    constraint_violations,
    expected_path,
    figures,
    fixture_violations,
    fleeting_states,
    load_expected,
    parse_outcome,
    provider_fixture_ids,
)
from domain.cricket.board import cricket_fixture_id

pytestmark = pytest.mark.unit

RECORDINGS = Path(__file__).resolve().parents[2] / "recordings"
BUNDLED = sorted(RECORDINGS.glob("*.jsonl*"))


def test_every_bundled_recording_gives_its_fixtures_once_with_cricket_offset() -> None:
    ids = provider_fixture_ids(BUNDLED)

    assert len(ids) == len(set(ids))
    assert {81000001, 81000002, 81000003} <= set(ids)
    assert cricket_fixture_id(58328) in ids and cricket_fixture_id(59005) in ids
    assert 58328 not in ids


def test_the_expected_file_sits_beside_the_recording() -> None:
    assert expected_path(Path("r/football-basic.jsonl")) == Path("r/football-basic.expected.json")
    assert expected_path(Path("r/cricket-t20.jsonl.gz")) == Path("r/cricket-t20.expected.json")


def test_a_fixture_two_recordings_expect_differently_is_refused(tmp_path: Path) -> None:
    first = json.loads((RECORDINGS / "football-basic.expected.json").read_text())
    changed = {"81000001": {**first["81000001"], "score": {"home": 0, "away": 0}}}
    (tmp_path / "other.expected.json").write_text(json.dumps(changed))

    with pytest.raises(ValueError, match="81000001"):
        load_expected([RECORDINGS / "football-basic.jsonl", tmp_path / "other.jsonl"])


def football() -> ExpectedFootball:
    expected = load_expected([RECORDINGS / "football-correction.jsonl"])[81000002]
    assert isinstance(expected, ExpectedFootball)
    return expected


def cricket() -> ExpectedCricket:
    expected = load_expected([RECORDINGS / "cricket-edits.jsonl.gz"])[cricket_fixture_id(59005)]
    assert isinstance(expected, ExpectedCricket)
    return expected


def test_states_are_read_as_the_normaliser_names_them() -> None:
    assert football().state == "finished"
    assert (football().home, football().away) == (1, 1)
    assert football().retracted == {("events", 510002)}
    abandoned = parse_outcome(
        "59003", json.loads((RECORDINGS / "cricket-abandoned-no-ball.expected.json").read_text())["59003"]
    )
    assert isinstance(abandoned, ExpectedCricket) and abandoned.state == "abandoned"
    assert cricket().state == "finished" and cricket().amended == {9780001, 9780082, 9780241}


def stored_football(expected: ExpectedFootball) -> StoredFixture:
    """The rows a correct ingest leaves: each event once, the retracted one retracted after it was
    logged, a gapless log whose last seq is the board's version."""
    events = [StoredEvent(stream, event_id, False, 1, 0, 0) for stream, event_id in sorted(expected.events)]
    events += [
        StoredEvent(stream, event_id, True, 1, 0, 1) for stream, event_id in sorted(expected.retracted)
    ]
    seqs = list(range(1, len(events) + 4))
    return StoredFixture(
        events, seqs, StoredBoard(expected.state, expected.home, expected.away, seqs[-1], None)
    )


def cricket_board(expected: ExpectedCricket, **changes: Any) -> dict[str, Any]:
    """The stored board's `cricket` JSON with the expected innings, result and chase."""
    innings = [
        {
            "scoreboard": i["scoreboard"],
            "number": n,
            "team_id": i["team_id"],
            "runs": i["runs"],
            "wickets": i["wickets"],
            "legal_balls": int(i["overs"]) * 6 + round(i["overs"] % 1 * 10),
            "target": expected.target if n == len(expected.innings) else None,
        }
        for n, i in enumerate(expected.innings, start=1)
    ]
    board = {
        "innings": innings,
        "result": {"kind": expected.result_kind, "winner_team_id": expected.winner_team_id},
        "super_over": expected.super_over,
    }
    return {**board, **changes}


def stored_cricket(expected: ExpectedCricket, **changes: Any) -> StoredFixture:
    events = [
        StoredEvent("balls", ball, False, 1, 1 if ball in expected.amended else 0, 0)
        for ball in sorted(expected.balls)
    ]
    seqs = list(range(1, len(events) + len(expected.amended) + 5))
    board = StoredBoard(expected.state, 0, 0, seqs[-1], cricket_board(expected, **changes))
    return StoredFixture(events, seqs, board)


def lines(expected: ExpectedFootball | ExpectedCricket, stored: StoredFixture) -> list[str]:
    return [violation.line() for violation in fixture_violations(expected, stored)]


def test_a_fixture_stored_as_its_outcome_has_no_violation() -> None:
    assert lines(football(), stored_football(football())) == []
    assert lines(cricket(), stored_cricket(cricket())) == []


def test_an_expected_event_missing_or_stored_twice_is_named() -> None:
    stored = stored_football(football())
    missing = dataclasses.replace(stored, events=[e for e in stored.events if e.provider_event_id != 510004])
    twice = dataclasses.replace(
        stored, events=[*stored.events, StoredEvent("events", 510004, False, 0, 0, 0)]
    )

    assert lines(football(), missing) == ["provider: fixture 81000002: events/510004 stored 0 times"]
    assert lines(football(), twice) == ["provider: fixture 81000002: events/510004 stored 2 times"]


def test_an_event_logged_twice_or_never_is_named() -> None:
    stored = stored_football(football())
    events = [dataclasses.replace(e, logged=2) if e.provider_event_id == 610001 else e for e in stored.events]

    assert lines(football(), dataclasses.replace(stored, events=events)) == [
        "provider: fixture 81000002: timeline/610001 logged 2 times"
    ]


def test_an_event_the_outcome_does_not_name_or_keeps_is_named() -> None:
    stored = stored_football(football())
    extra = StoredEvent("events", 519999, False, 1, 0, 0)
    events = [
        dataclasses.replace(e, retracted=True) if e.provider_event_id == 510001 else e for e in stored.events
    ]

    assert lines(football(), dataclasses.replace(stored, events=[*stored.events, extra])) == [
        "provider: fixture 81000002: events/519999 stored, not in the recording's outcome"
    ]
    assert lines(football(), dataclasses.replace(stored, events=events)) == [
        "provider: fixture 81000002: events/510001 retracted, the outcome keeps it"
    ]


def test_a_correction_not_applied_is_named() -> None:
    stored = stored_football(football())
    kept = [
        dataclasses.replace(e, retracted=False, retractions=0) if e.retracted else e for e in stored.events
    ]

    assert lines(football(), dataclasses.replace(stored, events=kept)) == [
        "provider: fixture 81000002: events/510002 not retracted (0 retraction entries)"
    ]


def test_a_ball_edit_never_amended_or_an_amendment_never_made_is_named() -> None:
    stored = stored_cricket(cricket())
    events = [
        dataclasses.replace(
            e,
            amendments=0
            if e.provider_event_id == 9780082
            else 1
            if e.provider_event_id == 9780004
            else e.amendments,
        )
        for e in stored.events
    ]

    assert lines(cricket(), dataclasses.replace(stored, events=events)) == [
        f"provider: fixture {cricket().fixture_id}: balls/9780082 edited by the provider, never amended",
        f"provider: fixture {cricket().fixture_id}: balls/9780004 amended, the provider never edited it",
    ]


def test_a_football_board_other_than_the_outcome_is_named() -> None:
    stored = stored_football(football())
    assert stored.board is not None
    wrong = dataclasses.replace(stored.board, state="live_second_half", home=2)

    assert lines(football(), dataclasses.replace(stored, board=wrong)) == [
        "provider: fixture 81000002: board live_second_half 2-1, expected finished 1-1"
    ]
    assert lines(football(), dataclasses.replace(stored, board=None)) == [
        "provider: fixture 81000002: no scoreboard"
    ]


def test_a_cricket_board_other_than_the_outcome_is_named() -> None:
    want = cricket()
    subject = f"provider: fixture {want.fixture_id}"
    short = cricket_board(want)["innings"][:1]

    assert lines(want, stored_cricket(want, innings=short, super_over=True)) == [
        f"{subject}: innings {[{**dict(want.innings[0]), 'overs': 5.0}]}, expected {[dict(i) for i in want.innings]}",
        f"{subject}: super over True, expected False",
        f"{subject}: target None, expected 46",
    ]
    assert lines(want, stored_cricket(want, result={"kind": "tie"})) == [
        f"{subject}: result tie, expected win",
        f"{subject}: winner None, expected 2",
    ]
    stored = stored_cricket(want)
    assert stored.board is not None
    assert lines(
        want, dataclasses.replace(stored, board=dataclasses.replace(stored.board, state="stumps"))
    ) == [f"{subject}: state stumps, expected finished"]
    assert lines(
        want, dataclasses.replace(stored, board=dataclasses.replace(stored.board, cricket=None))
    ) == [f"{subject}: no cricket scoreboard"]


def test_a_log_with_a_gap_or_a_board_behind_it_is_named() -> None:
    stored = stored_football(football())
    gap = dataclasses.replace(stored, seqs=[s for s in stored.seqs if s != 3])
    assert stored.board is not None
    behind = dataclasses.replace(
        stored, board=dataclasses.replace(stored.board, version=stored.board.version - 1)
    )

    assert lines(football(), gap) == [
        "provider: fixture 81000002: the log has gaps or repeats (missing seqs [3])"
    ]
    assert lines(football(), behind) == [
        f"provider: fixture 81000002: board version {stored.seqs[-2]}, last seq {stored.seqs[-1]}"
    ]


def test_the_exactly_once_constraint_must_be_in_place() -> None:
    assert constraint_violations([["id"], list(EVENT_KEY_COLUMNS)]) == []
    assert [v.line() for v in constraint_violations([["id"], ["fixture_id", "provider_event_id"]])] == [
        "provider: match_event: no unique constraint on ('fixture_id', 'stream', 'provider_event_id')"
    ]


def test_the_figures_count_fixtures_events_and_balls() -> None:
    assert figures([football(), cricket()]) == {
        "fixtures": 2,
        "events": len(football().events) + 1,
        "balls": len(cricket().balls),
    }


def test_the_recordings_passing_states_are_found() -> None:
    """football-three-matches shows goal 510002 for two minutes, then another id in its place;
    cricket-edits edits ball 9780001 in play at t = 2880."""
    passing = fleeting_states(
        [RECORDINGS / "football-three-matches.jsonl", RECORDINGS / "cricket-edits.jsonl.gz"]
    )
    assert passing[81000002].events == frozenset({("events", 510002)})
    assert passing[81000001].events == frozenset()
    assert passing[cricket_fixture_id(59005)].edited_at[9780001] == 2880.0


def test_a_fleeting_event_never_seen_is_excused_but_never_one_stored_twice() -> None:
    """The soak of 2026-12-02 (seed 2) paused one worker and killed the other while 510002 was on
    show: Scoreline never saw it, which is no fault of the ingest; storing it twice would be."""
    stored = stored_football(football())
    missing = dataclasses.replace(stored, events=[e for e in stored.events if e.provider_event_id != 510004])
    twice = dataclasses.replace(
        stored, events=[*stored.events, StoredEvent("events", 510004, False, 0, 0, 0)]
    )
    fleeting = Fleeting(events=frozenset({("events", 510004)}))

    assert fixture_violations(football(), missing, fleeting) == []
    assert [v.line() for v in fixture_violations(football(), twice, fleeting)] == [
        "provider: fixture 81000002: events/510004 stored 2 times"
    ]


def test_a_ball_first_stored_after_its_edit_needs_no_amendment() -> None:
    """A ball the workers first saw already edited has no earlier version to amend; one stored
    before the edit must still be amended."""
    expected = cricket()
    ball = min(expected.amended)
    clock = ReplayClock(zero=1_000_000.0, speed=10.0)
    fleeting = Fleeting(edited_at={ball: 2880.0})
    edited_at = clock.wall(2880.0)

    def stored_at(first_seen: float) -> StoredFixture:
        stored = stored_cricket(expected)
        events = [
            dataclasses.replace(e, amendments=0, first_seen=first_seen) if e.provider_event_id == ball else e
            for e in stored.events
        ]
        return dataclasses.replace(stored, events=events, seqs=list(stored.seqs)[:-1])

    after, before = stored_at(edited_at + 1), stored_at(edited_at - 30)
    assert [
        v.detail for v in fixture_violations(expected, after, fleeting, clock) if "amended" in v.detail
    ] == []
    assert [
        v.detail for v in fixture_violations(expected, before, fleeting, clock) if "amended" in v.detail
    ] == [f"balls/{ball} edited by the provider, never amended"]
