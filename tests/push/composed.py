"""One push's request payload as a drainer makes it: what publishing stores, then `payloads.compose`."""

from __future__ import annotations

from activities.push.payloads import FixtureNames, Payload, alert, attributes, compose, content_state
from domain.pushes import PushInput


def build(push: PushInput, names: FixtureNames) -> Payload:
    """The (untrimmed) payload of `push` to an activity that shows nothing newer: its state at its
    timestamp, its alert (a start's is made from its attributes), its dates."""
    return compose(
        push.kind,
        push.timestamp,
        content_state(push.state, push.moment, names),
        stale_date=push.timestamp + push.stale_after_seconds,
        dismissal_date=push.timestamp + push.dismiss_after_seconds,
        alert=alert(push, names) if push.alert and push.kind != "start" else None,
        attributes=attributes(push, names) if push.kind == "start" else None,
    )
