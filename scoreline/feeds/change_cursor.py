"""A place in the stream of partner changes, as an opaque token a partner keeps.

A change is one log entry of one commit, and a commit is one `domain_event` row, so a place is the
outbox row's `(xid, id)` (the order `scoreline.outbox.reader` reads in, which never skips a late
commit) and the seq of the last entry of that row already handed out: a page may end inside a
commit's entries. `START` is "before the oldest change kept".

The token is base64url of `v1.<xid>.<id>.<seq>`: nothing in it is secret (a partner only reads
its own competitions whatever it sends), but it is opaque so the format can change; anything that
does not decode to exactly that shape is junk.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import Final

_FORMAT: Final = re.compile(r"v1\.(0|[1-9][0-9]{0,19})\.(0|[1-9][0-9]{0,18})\.(0|[1-9][0-9]{0,18})")
_XID8_MAX: Final = 2**64 - 1
_BIGINT_MAX: Final = 2**63 - 1
MAX_TOKEN_LENGTH: Final = 100


class BadCursorError(ValueError):
    """The token is not one this API issued."""


@dataclass(frozen=True, order=True, slots=True)
class ChangeCursor:
    """After the entries with seq <= `seq` of outbox row `(xid, id)`, and after every earlier row.

    `xid` 0 is `START`: no row has it (xid8 0 is the invalid transaction id).
    """

    xid: int
    id: int
    seq: int

    @property
    def is_start(self) -> bool:
        return self.xid == 0

    def encode(self) -> str:
        raw = f"v1.{self.xid}.{self.id}.{self.seq}".encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def decode(cls, token: str) -> ChangeCursor:
        """The cursor a token names.

        Raises:
            BadCursorError: the token is not one this API issued.
        """
        if not 0 < len(token) <= MAX_TOKEN_LENGTH or not token.isascii():
            raise BadCursorError("not a change cursor")
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode("ascii")
        except (binascii.Error, ValueError):
            raise BadCursorError("not a change cursor") from None
        found = _FORMAT.fullmatch(raw)
        if found is None:
            raise BadCursorError("not a change cursor")
        xid, id_, seq = (int(part) for part in found.groups())
        if xid > _XID8_MAX or id_ > _BIGINT_MAX or seq > _BIGINT_MAX or (xid == 0) != (id_ == 0 == seq):
            raise BadCursorError("not a change cursor")
        return cls(xid, id_, seq)


START: Final = ChangeCursor(0, 0, 0)
