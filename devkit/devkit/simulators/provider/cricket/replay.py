"""Each cricket fixture's recorded history, and which fixtures `livescores` lists at a replay time.

A fixture shows the last line recorded at or before `t`, its first line before that (as football).
`live` is true on every real Cricket v2 fixture, finished ones included (cricket.md §1), so the
livescores window is decided from `status`:

- `NS` / `Delayed`: listed from `LIVESCORES_BEFORE` before the scheduled start;
- `Finished` / `Aban.`: listed for `LIVESCORES_AFTER` after the status was first shown;
- `Postp.` / `Cancl.`: not listed (the match will not be played now);
- any other status (innings, breaks, `Int.`, `Stump Day N`, …): in play, listed.

An unknown status counts as in play, so a status the docs do not list keeps the match visible.
All of it is judged in replay time, so it scales with `--speed`.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from devkit.simulators.provider.cricket_timemap import parse_datetime
from devkit.simulators.provider.recording import Recording, RecordingError

NOT_STARTED_STATUSES = frozenset({"NS", "Delayed"})
ENDED_STATUSES = frozenset({"Finished", "Aban."})
OFF_STATUSES = frozenset({"Postp.", "Cancl."})
LIVESCORES_BEFORE = 15 * 60.0
LIVESCORES_AFTER = 30 * 60.0


@dataclass(frozen=True)
class CricketFrame:
    """The fixture as shown from replay time `t` on."""

    t: float
    fixture: Mapping[str, Any]

    @property
    def status(self) -> Any:
        """The recorded `status` (None if absent)."""
        return self.fixture.get("status")


@dataclass(frozen=True)
class CricketTrack:
    """One cricket fixture's frames, in replay order.

    Attributes:
        fixture_id: The provider's fixture id, served as is.
        origin: Epoch seconds of its recording's `start`, for mapping its times.
        frames: At least one, sorted by `t`.
        source: The recording it came from.
        times: Each frame's `t`, for bisecting.
    """

    fixture_id: int
    origin: float
    frames: tuple[CricketFrame, ...]
    source: Path
    times: tuple[float, ...]

    def _index(self, t: float) -> int:
        return max(0, bisect.bisect_right(self.times, t) - 1)

    def at(self, t: float) -> CricketFrame:
        """The frame shown at replay time `t`."""
        return self.frames[self._index(t)]

    def start_t(self, frame: CricketFrame) -> float | None:
        """Replay time of the scheduled start `frame` announces (`starting_at`), if it has one."""
        starting_at = frame.fixture.get("starting_at")
        if not isinstance(starting_at, str):
            return None
        return parse_datetime(starting_at) - self.origin

    def status_since(self, t: float) -> float:
        """Replay time from which the status shown at `t` has been shown without a break."""
        index = self._index(t)
        status = self.frames[index].status
        while index > 0 and self.frames[index - 1].status == status:
            index -= 1
        return self.frames[index].t

    def in_livescores(self, t: float) -> bool:
        """True if `livescores` lists the fixture at `t` (see the module docstring)."""
        frame = self.at(t)
        status = frame.status
        if status in OFF_STATUSES:
            return False
        if status in ENDED_STATUSES:
            return t <= self.status_since(t) + LIVESCORES_AFTER
        if status in NOT_STARTED_STATUSES:
            start = self.start_t(frame)
            return start is not None and t >= start - LIVESCORES_BEFORE
        return True


class CricketReplay:
    """Every fixture of every cricket recording, by id.

    Raises:
        RecordingError: Two recordings hold the same fixture id.
    """

    def __init__(self, recordings: Iterable[Recording]) -> None:
        tracks: dict[int, CricketTrack] = {}
        for recording in recordings:
            for fixture_id in recording.header.fixtures:
                if fixture_id in tracks:
                    raise RecordingError(
                        recording.path,
                        1,
                        f"cricket fixture {fixture_id} is also in {tracks[fixture_id].source}; "
                        "a fixture id may appear in one recording only",
                    )
                frames = tuple(
                    CricketFrame(t=line.t, fixture=line.fixture)
                    for line in recording.fixtures
                    if line.fixture["id"] == fixture_id
                )
                times = tuple(frame.t for frame in frames)
                tracks[fixture_id] = CricketTrack(fixture_id, recording.origin, frames, recording.path, times)
        self._tracks = dict(sorted(tracks.items()))

    @property
    def tracks(self) -> tuple[CricketTrack, ...]:
        """All fixtures, by id."""
        return tuple(self._tracks.values())

    @property
    def end_t(self) -> float:
        """Replay time of the last recorded line (0 without fixtures)."""
        return max((track.frames[-1].t for track in self._tracks.values()), default=0.0)

    def get(self, fixture_id: int) -> CricketTrack | None:
        """The fixture with this id, if any cricket recording has it."""
        return self._tracks.get(fixture_id)

    def livescores(self, t: float) -> list[CricketTrack]:
        """Fixtures in play (or about to start, or just ended) at `t`."""
        return [track for track in self.tracks if track.in_livescores(t)]

    def score_rows(self) -> list[Mapping[str, Any]]:
        """Every distinct embedded ball `score` object, in recording order (the last one wins)."""
        rows: dict[Any, Mapping[str, Any]] = {}
        for track in self.tracks:
            for frame in track.frames:
                balls = frame.fixture.get("balls")
                for ball in balls if isinstance(balls, list) else ():
                    score = ball.get("score") if isinstance(ball, Mapping) else None
                    if isinstance(score, Mapping) and isinstance(score.get("id"), int):
                        rows[score["id"]] = score
        return list(rows.values())
