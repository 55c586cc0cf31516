"""Everything one simulator process holds, built once from its config."""

from __future__ import annotations

from dataclasses import dataclass, field

from simulators.provider.clock import ReplayClock
from simulators.provider.config import ProviderSimConfig
from simulators.provider.fault_book import FaultBook
from simulators.provider.ratelimit import RateLimiter
from simulators.provider.recording import load_recording
from simulators.provider.replay import Replay
from simulators.provider.stats import RequestStats


@dataclass
class Simulator:
    """The replay, its clock, the faults and the counters the routes share.

    Attributes:
        config: What it was started with.
        clock: The replay clock (its `speed` wins over `config.speed` when one was injected).
        replay: Every recorded fixture.
        faults: Scripted and live faults.
        stats: Requests per data endpoint.
        rate_limiter: The hourly request budget reported in `rate_limit`.
    """

    config: ProviderSimConfig
    clock: ReplayClock
    replay: Replay
    faults: FaultBook
    stats: RequestStats = field(default_factory=RequestStats)
    rate_limiter: RateLimiter = field(default_factory=RateLimiter)

    @classmethod
    def load(cls, config: ProviderSimConfig, *, clock: ReplayClock | None = None) -> Simulator:
        """Load and check every recording, then start the clock.

        Raises:
            RecordingError: A recording is malformed (the message names the file and line), or two
                recordings share a fixture id.
            ValueError: No recordings, or a speed that is not positive.
        """
        if not config.recordings:
            raise ValueError("the provider simulator needs at least one recording")
        recordings = [load_recording(path) for path in config.recordings]
        replay = Replay(recordings)
        faults = FaultBook((line.t, line.fault) for recording in recordings for line in recording.faults)
        if clock is None:
            clock = ReplayClock.starting_in(config.start_in, speed=config.speed)
        return cls(config=config, clock=clock, replay=replay, faults=faults)
