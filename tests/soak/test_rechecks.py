"""The soak's post-match rechecks: on the replay's clock, and the last one inside the window."""

from __future__ import annotations

from datetime import timedelta

import pytest

from devkit.soak.run import PLAY_SHARE, post_match_rechecks
from scoreline.settings import Settings

DEFAULTS = (
    timedelta(minutes=2),
    timedelta(minutes=10),
    timedelta(hours=1),
    timedelta(hours=6),
    timedelta(hours=24),
)


def _settings(rechecks: tuple[timedelta, ...]) -> Settings:
    return Settings.model_validate({"cricket_post_match_rechecks": rechecks})


def test_rechecks_run_on_the_replay_clock_and_end_with_the_window() -> None:
    """Seed 5 (10 min at 47.4x): the edits recording changes a ball two replay hours after
    `Finished`; scaled alone, the recheck after it came 547 s after the end, when the soak had
    stopped, and the edit was judged never amended. The schedule now ends where the window does."""
    window, speed = 600.0, 47.4
    waits = post_match_rechecks(speed, _settings(DEFAULTS), window)

    assert waits[:3] == pytest.approx((120 / speed, 600 / speed, 3600 / speed))
    assert sum(waits) == pytest.approx(window * (1 - PLAY_SHARE))
    assert sum(waits) - waits[-1] < 2 * 3600 / speed < sum(waits), "a recheck follows the 2 h edit"


def test_no_rechecks_stay_none() -> None:
    assert post_match_rechecks(47.4, _settings(()), 600.0) == ()
