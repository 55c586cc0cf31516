"""Failures that cross the workflow boundary as Temporal `ApplicationError`s.

Temporal tells errors apart by their type's *name* (a string: retry policies list the ones not worth
retrying, callers read `cause.type`). Each name is therefore defined once, here, beside the
exception it stands for, and everyone raises and matches through these.
"""

from __future__ import annotations


class UnknownFixture(LookupError):
    """No fixture row with this id: nothing to start, decide or push; retrying cannot help."""


UNKNOWN_FIXTURE = UnknownFixture.__name__


APNS_CONFIG_ERROR = "ApnsConfigError"
"""The type for APNs refusing our own request (key, topic, request shape), which every push would
meet the same way. Nothing raises it: the drainer keeps such a push owed and tries it again at the
longest backoff (`activities.push.answers`), so it goes out once the cause is fixed."""
