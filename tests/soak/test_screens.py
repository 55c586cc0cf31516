"""The screens check: each promise of each live road is held, and each broken one is named."""

from __future__ import annotations

import random
from pathlib import Path

import httpx
import pytest

from devkit.soak.model import SoakFixtures, SoakTargets
from devkit.soak.screens import Endpoints, ScreenPart, SseEvents, score_of, seen_of, sse_values
from devkit.soak.stream_check import Latest, MatchTruth, Road, Seen, Trail, check_latest, check_trail

pytestmark = pytest.mark.unit

LOG = MatchTruth(version=6, seqs=(1, 2, 3, 4, 5, 6))


def _seen(connection: int, version: int, previous: int | None) -> Seen:
    low = version if previous is None else previous
    return Seen(connection, version, previous, tuple(range(low + 1, version + 1)))


def _trail(road: Road, *seen: Seen, resumes: dict[int, int] | None = None) -> Trail:
    return Trail("client", 81, road, list(seen), dict(resumes or {}))


def _details(trail: Trail, truth: MatchTruth | None = LOG) -> list[str]:
    return [violation.detail for violation in check_trail(trail, truth)]


def test_a_resumed_sse_stream_with_every_entry_passes() -> None:
    """Current value, changes, a drop, a resume from Last-Event-ID filling the gap: all kept."""
    trail = _trail(
        Road.MATCH_SSE, _seen(0, 2, None), _seen(0, 3, 2), _seen(1, 5, 3), _seen(1, 6, 5), resumes={1: 3}
    )
    assert _details(trail) == []


def test_a_resume_that_restates_the_held_version_is_not_a_duplicate() -> None:
    """Nothing changed while it was away: the resume answers the held version with no entries."""
    trail = _trail(Road.MATCH_SSE, _seen(0, 5, None), _seen(1, 5, 5), _seen(1, 6, 5), resumes={1: 5})
    assert _details(trail) == []


def test_a_version_twice_on_one_connection_is_named() -> None:
    trail = _trail(Road.MATCH_SSE, _seen(0, 5, None), Seen(0, 5, 5, ()), _seen(0, 6, 5))
    assert _details(trail) == ["version 5 twice"]


def test_a_version_out_of_order_is_named() -> None:
    trail = _trail(Road.MATCH_SSE, _seen(0, 4, None), _seen(0, 6, 4), _seen(0, 5, 4))
    assert _details(trail) == ["version 5 out of order (after 6)"]


def test_a_gap_within_a_connection_is_named() -> None:
    """Version 4 to 6 follows on from 5, which this connection was never sent."""
    trail = _trail(Road.MATCH_SSE, _seen(0, 4, None), _seen(0, 6, 5))
    assert _details(trail) == ["version 6 follows 5, not 4: a gap"]


def test_an_overlap_within_a_connection_is_named() -> None:
    """Version 6 follows on from 3 after 4 was sent: seq 4 arrives twice."""
    trail = _trail(Road.MATCH_SSE, _seen(0, 4, None), _seen(0, 6, 3))
    assert _details(trail) == ["version 6 follows 3, not 4: an overlap"]


def test_a_bare_value_within_a_connection_is_named() -> None:
    trail = _trail(Road.MATCH_SSE, _seen(0, 4, None), _seen(0, 6, None))
    assert _details(trail) == ["version 6 came without the entries since 4"]


def test_a_resume_that_was_not_filled_is_named() -> None:
    """Reconnected with Last-Event-ID 3 but sent a bare current value: 4 and 5 are lost."""
    trail = _trail(Road.MATCH_SSE, _seen(0, 3, None), _seen(1, 6, None), resumes={1: 3})
    assert _details(trail) == ["the resume from 3 was not filled: it started after None"]


def test_a_fresh_connection_that_starts_after_a_version_is_named() -> None:
    trail = _trail(Road.MATCH_WS, _seen(0, 6, 4))
    assert _details(trail) == ["a new connection started at 6 after 4, not the current value"]


def test_entries_that_differ_from_the_log_are_named() -> None:
    """The log has seqs 4 and 5 after 3; the message carried only 5."""
    trail = _trail(Road.MATCH_SSE, _seen(0, 3, None), Seen(0, 5, 3, (5,)), _seen(0, 6, 5))
    assert _details(trail) == ["version 5 carried seqs [5], the log has [4, 5]"]


def test_entries_follow_a_log_with_holes_in_its_seqs() -> None:
    """The check compares with the seqs Postgres has, not with a run of integers."""
    truth = MatchTruth(version=7, seqs=(1, 2, 4, 7))
    trail = _trail(Road.MATCH_SSE, _seen(0, 2, None), Seen(0, 7, 2, (4, 7)))
    assert _details(trail, truth) == []


def test_a_client_behind_the_final_version_is_named() -> None:
    trail = _trail(Road.MATCH_SSE, _seen(0, 2, None), _seen(0, 4, 2))
    assert _details(trail) == ["ended at version 4, Postgres is at 6"]


def test_a_client_that_saw_nothing_is_named() -> None:
    assert _details(_trail(Road.MATCH_WS)) == ["ended at nothing, Postgres is at 6"]


def test_a_match_missing_from_postgres_is_named() -> None:
    assert _details(_trail(Road.MATCH_SSE), None) == ["the match is not in Postgres"]


def test_a_websocket_may_skip_versions_across_its_own_reconnect() -> None:
    """The protocol has no resume: a new connection starts again from the current value."""
    trail = _trail(Road.MATCH_WS, _seen(0, 2, None), _seen(0, 3, 2), _seen(1, 5, None), _seen(1, 6, 5))
    assert _details(trail) == []


def test_a_websocket_that_goes_back_across_a_reconnect_is_named() -> None:
    trail = _trail(Road.MATCH_WS, _seen(0, 6, None), _seen(1, 5, None))
    assert _details(trail) == ["version 5 out of order (after 6)"]


def test_the_live_stream_is_not_held_to_the_final_version() -> None:
    """A match leaves `/v1/stream` when it ends; later corrections never reach that road."""
    trail = _trail(Road.LIVE_SSE, _seen(0, 2, 1), _seen(0, 3, 2), _seen(1, 4, None))
    assert _details(trail) == []


def test_the_live_stream_still_chains_within_a_connection() -> None:
    trail = _trail(Road.LIVE_SSE, _seen(0, 2, None), _seen(0, 5, 3))
    assert _details(trail) == ["version 5 follows 3, not 2: a gap"]


def _latest(connection: int, version: int, headline: str) -> Latest:
    return Latest(connection, 81, version, f"shown {headline}", headline)


def test_scores_that_only_change_pass() -> None:
    messages = [_latest(0, 2, "0-0"), _latest(0, 5, "1-0"), _latest(1, 5, "1-0"), _latest(1, 6, "2-0")]
    assert check_latest("ws-0", "scores", messages, {(81, 5): "1-0"}) == []


def test_a_score_sent_unchanged_is_named() -> None:
    messages = [_latest(0, 2, "1-0"), _latest(0, 5, "1-0")]
    [violation] = check_latest("ws-0", "scores", messages, {})
    assert violation.detail == "version 5 sent shown 1-0, unchanged since 2"
    assert violation.subject == "ws-0 scores match 81"


def test_a_score_that_goes_back_is_named() -> None:
    messages = [_latest(0, 5, "1-0"), _latest(1, 4, "0-0")]
    [violation] = check_latest("ws-0", "scores", messages, {})
    assert violation.detail == "version 4 after 5"


def test_a_score_that_disagrees_with_the_match_value_is_named() -> None:
    [violation] = check_latest("ws-0", "status", [_latest(0, 5, "live")], {(81, 5): "half_time"})
    assert violation.detail == "version 5 showed live, its match value half_time"


def test_a_status_at_version_0_is_not_held_to_one_state() -> None:
    """The 30-minute soak's seed 25 named a screen whose `status` showed `live_first_half` at
    version 0 while its match value at version 0 said `live_second_half`: before its first
    ingest a match's state is the fixture list's, which the fixture sync moves on without a
    version. Version 0 is not one state, so it is not cross-checked; later versions are."""
    messages = [_latest(0, 0, "live_first_half"), _latest(0, 1, "live")]
    values = {(81, 0): "live_second_half", (81, 1): "half_time"}
    [violation] = check_latest("ws-0", "status", messages, values)
    assert violation.detail == "version 1 showed live, its match value half_time"


def test_sse_lines_become_events_and_comments_are_skipped() -> None:
    parser = SseEvents()
    lines = [": keep-alive", "", "event: value", "id: 7", 'data: {"a":', "data: 1}", ""]
    assert [parser.feed(line) for line in lines] == [
        None,
        None,
        None,
        None,
        None,
        None,
        ("value", "7", '{"a":\n1}'),
    ]


async def test_an_open_stream_yields_its_value_bodies() -> None:
    body = b'event: value\nid: 3\ndata: {"version": 3}\n\n: keep-alive\n\nevent: other\ndata: {}\n\n'
    response = httpx.Response(200, content=body)
    assert [value async for value in sse_values(response)] == [{"version": 3}]


def test_a_value_message_is_recorded_with_its_entry_seqs() -> None:
    body = {"version": 4, "previous": 2, "entries": [{"seq": 3}, {"seq": 4}], "match": {}}
    assert seen_of(body, 1) == Seen(1, 4, 2, (3, 4))
    assert score_of({"score": {"home": 2, "away": 1}}) == "2-1"


def test_endpoints_move_on_and_wrap() -> None:
    endpoints = Endpoints(["http://a", "http://b"], 3)
    assert endpoints.current == "http://b"
    endpoints.advance()
    assert endpoints.current == "http://a"


def test_a_seed_gives_the_same_clients_and_choices() -> None:
    """A failing soak is re-run with its seed: the same screens follow the same matches."""

    def chosen(seed: int) -> list[tuple[str, int]]:
        targets = SoakTargets(("http://a", "http://b"), "", "", "postgresql://x/y", Path("journal"))
        part = ScreenPart(targets, SoakFixtures([1, 2, 3], [4]), random.Random(seed), 5, 5)
        return [(trail.subject, trail.fixture_id) for trail in part._trails()]

    assert chosen(3) == chosen(3)
    assert chosen(3) != chosen(4)
    assert {subject for subject, _ in chosen(3)} >= {"ws-0", "sse-0"}
