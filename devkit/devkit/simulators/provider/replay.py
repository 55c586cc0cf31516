"""Each fixture's recorded history, and which fixtures each endpoint lists at a replay time.

A fixture shows the last line recorded at or before `t`; before its first line (in particular
before `t = 0`) it shows that first line. Which fixtures are listed follows the real endpoints:
`inplay` lists live states, `livescores` adds fixtures from 15 minutes before kick-off to 15
minutes after they end, and `latest` lists those whose tracked fields changed in the last 10 s.
All of it is judged in replay time, so it scales with `--speed`.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from devkit.simulators.provider.recording import Recording, RecordingError

# Live states per the state table (provider-api.md §4.1, `is_live`), SUSPENDED included.
LIVE_STATE_IDS = frozenset({2, 3, 4, 6, 9, 11, 18, 21, 22, 23, 25, 26})
# States after which a fixture will not be played now: finished, cancelled, postponed, deleted...
ENDED_STATE_IDS = frozenset({5, 7, 8, 10, 12, 14, 15, 17, 20})
# Only these fields put a fixture into `livescores/latest` (provider-api.md §1.1).
TRACKED_FIELDS = (
    "state_id",
    "venue_id",
    "name",
    "starting_at",
    "starting_at_timestamp",
    "result_info",
    "leg",
    "length",
)
LATEST_WINDOW = 10.0
LIVESCORES_MARGIN = 15 * 60.0


@dataclass(frozen=True)
class Frame:
    """The fixture as shown from replay time `t` on."""

    t: float
    fixture: Mapping[str, Any]

    @property
    def state_id(self) -> Any:
        """The recorded `state_id` (None if absent)."""
        return self.fixture.get("state_id")


@dataclass(frozen=True)
class FixtureTrack:
    """One fixture's frames, in replay order.

    Attributes:
        fixture_id: The SportMonks fixture id.
        origin: Epoch seconds of its recording's `start`, for mapping its times.
        frames: At least one, sorted by `t`.
        source: The recording it came from.
        changes: Replay times at which a tracked field changed (the first frame counts).
        times: Each frame's `t`, for bisecting.
    """

    fixture_id: int
    origin: float
    frames: tuple[Frame, ...]
    source: Path
    changes: tuple[float, ...]
    times: tuple[float, ...]

    @classmethod
    def build(cls, fixture_id: int, origin: float, frames: tuple[Frame, ...], source: Path) -> FixtureTrack:
        """A track with its tracked-field changes worked out once."""
        changes: list[float] = []
        previous: tuple[Any, ...] | None = None
        for frame in frames:
            tracked = tuple(frame.fixture.get(name) for name in TRACKED_FIELDS)
            if tracked != previous:
                changes.append(frame.t)
            previous = tracked
        times = tuple(frame.t for frame in frames)
        return cls(fixture_id, origin, frames, source, tuple(changes), times)

    def _index(self, t: float) -> int:
        return max(0, bisect.bisect_right(self.times, t) - 1)

    def at(self, t: float) -> Frame:
        """The frame shown at replay time `t`."""
        return self.frames[self._index(t)]

    def kickoff_t(self, frame: Frame) -> float | None:
        """Replay time of the kick-off `frame` announces, if it has one."""
        starting_at = frame.fixture.get("starting_at_timestamp")
        if not isinstance(starting_at, int | float) or isinstance(starting_at, bool):
            return None
        return starting_at - self.origin

    def state_since(self, t: float) -> float:
        """Replay time from which the state shown at `t` has been shown without a break."""
        index = self._index(t)
        state_id = self.frames[index].state_id
        while index > 0 and self.frames[index - 1].state_id == state_id:
            index -= 1
        return self.frames[index].t

    def is_live(self, t: float) -> bool:
        """True if the fixture is in play (or in a break) at `t`."""
        return self.at(t).state_id in LIVE_STATE_IDS

    def in_livescores(self, t: float) -> bool:
        """True if `livescores` lists the fixture at `t`: 15 minutes either side of the match."""
        frame = self.at(t)
        if frame.state_id in LIVE_STATE_IDS:
            return True
        if frame.state_id in ENDED_STATE_IDS:
            return t <= self.state_since(t) + LIVESCORES_MARGIN
        kickoff = self.kickoff_t(frame)
        return kickoff is not None and t >= kickoff - LIVESCORES_MARGIN

    def changed_recently(self, t: float) -> bool:
        """True if a tracked field changed in the `LATEST_WINDOW` seconds up to `t`."""
        index = bisect.bisect_right(self.changes, t) - 1
        return index >= 0 and self.changes[index] > t - LATEST_WINDOW


class Replay:
    """Every fixture of every recording, by id.

    Raises:
        RecordingError: Two recordings hold the same fixture id.
    """

    def __init__(self, recordings: Iterable[Recording]) -> None:
        tracks: dict[int, FixtureTrack] = {}
        for recording in recordings:
            for fixture_id in recording.header.fixtures:
                if fixture_id in tracks:
                    raise RecordingError(
                        recording.path,
                        1,
                        f"fixture {fixture_id} is also in {tracks[fixture_id].source}; "
                        "a fixture id may appear in one recording only",
                    )
                frames = tuple(
                    Frame(t=line.t, fixture=line.fixture)
                    for line in recording.fixtures
                    if line.fixture["id"] == fixture_id
                )
                tracks[fixture_id] = FixtureTrack.build(fixture_id, recording.origin, frames, recording.path)
        self._tracks = dict(sorted(tracks.items()))

    @property
    def tracks(self) -> tuple[FixtureTrack, ...]:
        """All fixtures, by id."""
        return tuple(self._tracks.values())

    @property
    def end_t(self) -> float:
        """Replay time of the last recorded line."""
        return max((track.frames[-1].t for track in self._tracks.values()), default=0.0)

    def get(self, fixture_id: int) -> FixtureTrack | None:
        """The fixture with this id, if any recording has it."""
        return self._tracks.get(fixture_id)

    def inplay(self, t: float) -> list[FixtureTrack]:
        """Fixtures in play at `t` (`livescores/inplay`)."""
        return [track for track in self.tracks if track.is_live(t)]

    def livescores(self, t: float) -> list[FixtureTrack]:
        """Fixtures around their match at `t` (`livescores`)."""
        return [track for track in self.tracks if track.in_livescores(t)]

    def latest(self, t: float) -> list[FixtureTrack]:
        """Livescores whose tracked fields changed in the last 10 s (`livescores/latest`)."""
        return [track for track in self.livescores(t) if track.changed_recently(t)]
