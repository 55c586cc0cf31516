"""Everything one simulator process holds, built once from its config."""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass, field
from typing import Any, Literal

from devkit.simulators.provider.clock import ReplayClock
from devkit.simulators.provider.config import ProviderSimConfig
from devkit.simulators.provider.cricket.replay import CricketReplay
from devkit.simulators.provider.cricket.scores import score_table
from devkit.simulators.provider.endpoints import CRICKET_ENDPOINTS, FOOTBALL_ENDPOINTS, Endpoint
from devkit.simulators.provider.fault_book import FaultBook
from devkit.simulators.provider.ratelimit import RateLimiter
from devkit.simulators.provider.recording import Recording, load_recording
from devkit.simulators.provider.replay import Replay
from devkit.simulators.provider.stats import RequestStats

# Cricket v2 allows 2,000 calls per endpoint per hour (cricket.md §6).
CRICKET_HOURLY_LIMIT = 2000

Sport = Literal["football", "cricket"]


def _cricket_limiter() -> RateLimiter:
    return RateLimiter(limit=CRICKET_HOURLY_LIMIT)


def _scope(recording: Recording) -> Set[Endpoint]:
    return CRICKET_ENDPOINTS if recording.sport == "cricket" else FOOTBALL_ENDPOINTS


@dataclass
class Simulator:
    """The replays, their clock, the faults and the counters the routes share.

    Attributes:
        config: What it was started with.
        clock: The replay clock (its `speed` wins over `config.speed` when one was injected).
        replay: Every recorded football fixture.
        faults: Scripted and live faults.
        cricket: Every recorded cricket fixture (none when no cricket recording is loaded).
        scores: The cricket `/scores` table.
        stats: Requests per data endpoint.
        rate_limiter: The football hourly request budget reported in `rate_limit`.
        cricket_rate_limiter: The cricket hourly budget, per endpoint, reported by nothing but a 429.
    """

    config: ProviderSimConfig
    clock: ReplayClock
    replay: Replay
    faults: FaultBook
    cricket: CricketReplay = field(default_factory=lambda: CricketReplay(()))
    scores: list[dict[str, Any]] = field(default_factory=lambda: score_table(()))
    stats: RequestStats = field(default_factory=RequestStats)
    rate_limiter: RateLimiter = field(default_factory=RateLimiter)
    cricket_rate_limiter: RateLimiter = field(default_factory=_cricket_limiter)

    @classmethod
    def load(cls, config: ProviderSimConfig, *, clock: ReplayClock | None = None) -> Simulator:
        """Load and check every recording (football and cricket), then start the clock.

        Raises:
            RecordingError: A recording is malformed (the message names the file and line), or two
                recordings of one sport share a fixture id.
            ValueError: No recordings, or a speed that is not positive.
        """
        if not config.recordings:
            raise ValueError("the provider simulator needs at least one recording")
        recordings = [load_recording(path) for path in config.recordings]
        replay = Replay(recording for recording in recordings if recording.sport == "football")
        cricket = CricketReplay(recording for recording in recordings if recording.sport == "cricket")
        faults = FaultBook(
            (line.t, line.fault, _scope(recording)) for recording in recordings for line in recording.faults
        )
        if clock is None:
            clock = ReplayClock.starting_in(config.start_in, speed=config.speed)
        simulator = cls(
            config=config,
            clock=clock,
            replay=replay,
            faults=faults,
            cricket=cricket,
            scores=score_table(cricket.score_rows()),
        )
        if config.plan is not None:
            calls, window = config.plan
            for sport in ("football", "cricket"):
                simulator.limit_rate(sport, calls, window)
        return simulator

    def limiter(self, sport: Sport) -> RateLimiter:
        """The hourly budget of one API: football's per entity, cricket's per endpoint."""
        return self.rate_limiter if sport == "football" else self.cricket_rate_limiter

    def limit_rate(self, sport: Sport, limit: int, window_seconds: float) -> RateLimiter:
        """Give one API a new budget of `limit` calls per `window_seconds` of real time, every
        window and refusal count starting from nothing.

        Raises:
            ValueError: A limit below 1 or a window that is not positive.
        """
        limiter = RateLimiter(limit=limit, window_seconds=window_seconds)
        if sport == "football":
            self.rate_limiter = limiter
        else:
            self.cricket_rate_limiter = limiter
        return limiter

    @property
    def end_t(self) -> float:
        """Replay time of the last recorded line, over both sports."""
        return max(self.replay.end_t, self.cricket.end_t)

    @property
    def fixture_count(self) -> int:
        """Fixtures served, over both sports."""
        return len(self.replay.tracks) + len(self.cricket.tracks)
