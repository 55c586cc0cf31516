"""Settings for one provider-simulator process."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# The example recordings at the repository root: what the demo, `scoreline dev` and the tests
# replay (the devkit runs from a checkout or the devkit image, never from a wheel).
BUNDLED_RECORDINGS_DIR = Path(__file__).resolve().parents[4] / "recordings"


@dataclass(frozen=True)
class ProviderSimConfig:
    """What the simulator replays, how fast, and where it listens.

    Attributes:
        recordings: JSON Lines recordings (see `recording.py`); all replay on one clock, so
            `t = 0` is every recording's `start` at the same moment.
        speed: Replay seconds per real second; 1 is real time.
        start_in: Real seconds from start until the replay clock reaches `t = 0`; before that every
            fixture shows its first recorded line.
        token: The only API token accepted (`api_token` query parameter or `Authorization`).
        host: Interface to listen on.
        port: TCP port to listen on.
        plan: Calls per window of real seconds each API allows (football per entity, cricket per
            endpoint); None keeps SportMonks' plans (Enterprise football, the cricket plan).
    """

    recordings: tuple[Path, ...]
    speed: float = 1.0
    start_in: float = 30.0
    token: str = "dev-provider-token"
    host: str = "127.0.0.1"
    port: int = 8100
    plan: tuple[int, float] | None = None
