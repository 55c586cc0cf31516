"""APNs' request rules, as pure functions from a request to Apple's (status, reason).

The order follows what APNs and the best-known mock (pushy's validating handler) do: routing,
then header syntax, then the device token; authentication, topic and payload checks are applied
by the caller in between (see `service`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_PAYLOAD_BYTES = 4096
MAX_VOIP_PAYLOAD_BYTES = 5120
MAX_COLLAPSE_ID_BYTES = 64
# Bodies past this are only measured, never kept: far beyond any APNs limit, and holding
# oversized junk helps nobody.
MAX_KEPT_BODY_BYTES = 64 * 1024
# Live Activity tokens are longer than the 32-byte device tokens (160 hex digits have been seen),
# so only the alphabet, whole bytes and a sane range are enforced.
_TOKEN = re.compile(r"^(?:[0-9a-fA-F]{2}){16,256}$")
_APNS_ID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_DEVICE_PATH = re.compile(r"^/3/device(?:/(?P<token>[^/?]*))?/?$")
_VALID_PRIORITIES = frozenset({"1", "5", "10"})
# Push type → the suffix its `apns-topic` must carry after the bundle id.
TOPIC_SUFFIXES: dict[str, str] = {
    "alert": "",
    "background": "",
    "mdm": "",
    "liveactivity": ".push-type.liveactivity",
    "widgets": ".push-type.widgets",
    "voip": ".voip",
    "complication": ".complication",
    "fileprovider": ".pushkit.fileprovider",
    "location": ".location-query",
    "pushtotalk": ".voip-ptt",
}
# Headers a request may carry once; a repeat is Apple's `DuplicateHeaders`.
_SINGLE_HEADERS = frozenset(
    {
        "authorization",
        "apns-id",
        "apns-topic",
        "apns-push-type",
        "apns-priority",
        "apns-expiration",
        "apns-collapse-id",
    }
)


@dataclass(frozen=True)
class Rejection:
    """An APNs error answer."""

    status: int
    reason: str


@dataclass(frozen=True)
class PushRequest:
    """One HTTP/2 request as received: pseudo-headers apart, other headers in arrival order.

    `body` holds at most `MAX_KEPT_BODY_BYTES`; `body_size` is what the client sent.
    """

    method: str
    path: str
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    body_size: int = 0

    def header(self, name: str) -> str | None:
        """The first value of `name` (lower case), if present."""
        return next((value for key, value in self.headers if key == name), None)

    @property
    def token(self) -> str | None:
        """The device token from `/3/device/<token>`, or None when the path has another shape."""
        match = _DEVICE_PATH.match(self.path)
        return match.group("token") if match and match.group("token") else None


def check_route(request: PushRequest) -> Rejection | None:
    """Method and path: 405 `MethodNotAllowed`, 404 `BadPath`, 400 `MissingDeviceToken`."""
    if request.method != "POST":
        return Rejection(405, "MethodNotAllowed")
    match = _DEVICE_PATH.match(request.path)
    if match is None:
        return Rejection(404, "BadPath")
    if not match.group("token"):
        return Rejection(400, "MissingDeviceToken")
    return None


def check_headers(request: PushRequest) -> Rejection | None:
    """Header syntax, before anything is looked up: each failure has its own Apple reason."""
    seen: set[str] = set()
    for name, _ in request.headers:
        if name in _SINGLE_HEADERS and name in seen:
            return Rejection(400, "DuplicateHeaders")
        seen.add(name)
    apns_id = request.header("apns-id")
    if apns_id is not None and not _APNS_ID.match(apns_id):
        return Rejection(400, "BadMessageId")
    if not request.header("apns-topic"):
        return Rejection(400, "MissingTopic")
    collapse_id = request.header("apns-collapse-id")
    if collapse_id is not None and len(collapse_id.encode()) > MAX_COLLAPSE_ID_BYTES:
        return Rejection(400, "BadCollapseId")
    priority = request.header("apns-priority")
    if priority is not None and priority not in _VALID_PRIORITIES:
        return Rejection(400, "BadPriority")
    expiration = request.header("apns-expiration")
    if expiration is not None and not expiration.isdigit():
        return Rejection(400, "BadExpirationDate")
    push_type = request.header("apns-push-type")
    if push_type is not None and push_type not in TOPIC_SUFFIXES:
        return Rejection(400, "InvalidPushType")
    return None


def check_device_token(token: str) -> Rejection | None:
    """400 `BadDeviceToken` for anything that is not whole hex bytes of a plausible length."""
    return None if _TOKEN.match(token) else Rejection(400, "BadDeviceToken")


def check_topic(request: PushRequest, bundle_id: str) -> Rejection | None:
    """The topic must be this app's bundle id plus exactly the suffix its push type requires.

    A foreign bundle is `TopicDisallowed`. A known bundle with the wrong suffix is
    `DeviceTokenNotForTopic`, which is what APNs answers for a Live Activity push sent to the
    bare bundle id (forum thread 712499). A missing `apns-push-type` counts as `alert`.
    """
    topic = request.header("apns-topic") or ""
    if topic != bundle_id and not any(
        suffix and topic == bundle_id + suffix for suffix in TOPIC_SUFFIXES.values()
    ):
        return Rejection(400, "TopicDisallowed")
    push_type = request.header("apns-push-type") or "alert"
    if topic != bundle_id + TOPIC_SUFFIXES[push_type]:
        return Rejection(400, "DeviceTokenNotForTopic")
    return None


def check_payload_size(request: PushRequest) -> Rejection | None:
    """400 `PayloadEmpty`, or 413 `PayloadTooLarge` past 4096 bytes (5120 for VoIP)."""
    if request.body_size == 0:
        return Rejection(400, "PayloadEmpty")
    limit = MAX_VOIP_PAYLOAD_BYTES if request.header("apns-push-type") == "voip" else MAX_PAYLOAD_BYTES
    if request.body_size > limit:
        return Rejection(413, "PayloadTooLarge")
    return None
