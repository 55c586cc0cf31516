"""What a phone shows, worked out from what APNs accepted for it, the way ActivityKit keeps it.

A phone shows the newest state it was sent (it drops an update whose `aps.timestamp` is older than
the one on screen, alert and all), shows each alert it keeps once, and after an `end` the activity
is over: nothing more reaches it. Only this counts in the tests of delivery: not which requests
went out, nor in which order, nor how many repeated what the phone already showed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.push.phones import Delivery, Phone


@dataclass
class Screen:
    """One Live Activity as its phone shows it."""

    stamp: int | None = None
    """The `aps.timestamp` of the state on screen."""
    state: dict[str, Any] = field(default_factory=dict)
    alerts: list[str] = field(default_factory=list)
    """Every alert shown, in order, as `title: body`."""
    ended: bool = False
    after_end: int = 0
    """Pushes APNs accepted for the activity after its end (a phone ignores them)."""

    @property
    def score(self) -> tuple[int, int] | None:
        """The score on screen; None before anything reached the phone."""
        if not self.state:
            return None
        return self.state["homeScore"], self.state["awayScore"]

    def shows(self, stamp: int) -> bool:
        """The state on screen is the one stamped `stamp`, or newer."""
        return self.stamp is not None and self.stamp >= stamp


def screen(received: Iterable[Delivery]) -> Screen:
    """The activity after `received` (its start and its update token's pushes, any order)."""
    shown = Screen()
    for delivery in sorted(received, key=lambda d: d.seq):
        if delivery.status != 200:
            continue
        if shown.ended:
            shown.after_end += 1
            continue
        stamp = int(delivery.aps["timestamp"])
        if delivery.event != "end" and shown.stamp is not None and stamp < shown.stamp:
            continue
        if "alert" in delivery.aps:
            shown.alerts.append(alert_text(delivery.aps["alert"]))
        if shown.stamp is None or stamp >= shown.stamp:
            shown.stamp, shown.state = stamp, delivery.state
        shown.ended = delivery.event == "end"
    return shown


def alert_text(alert: Mapping[str, Any] | str) -> str:
    if isinstance(alert, str):
        return alert
    return f"{alert.get('title', '')}: {alert.get('body', '')}"


def by_token(records: Sequence[Mapping[str, Any]]) -> dict[str, list[Delivery]]:
    """Journal-file records (`PushSim.journal`) as each token's deliveries, in arrival order."""
    found: dict[str, list[Delivery]] = defaultdict(list)
    for record in records:
        payload = record["payload"] or {}
        found[record["token"]].append(
            Delivery(
                seq=record["seq"],
                token=record["token"],
                headers={
                    "apns-push-type": record["push_type"] or "",
                    "apns-priority": record["priority"] or "",
                },
                aps=payload.get("aps", {}),
                status=record["status"],
                dropped_by_device=record["dropped_by_device"],
            )
        )
    return dict(found)


async def every_activity_ended(phones: Sequence[Phone]) -> bool:
    """Each phone's activity shows its end (the run may finish before the drainers sent it)."""
    return all([screen(await phone.received()).ended for phone in phones])
