"""The complete journal: every answered push, and every admin unregister, as one JSON line each.

The in-memory journal keeps the newest 10,000 records, enough for a test or a dev session; a soak
sends millions and checks every one of them afterwards, so it needs all of them, in the order the
simulator answered them. Lines are appended and flushed one at a time, so a reader that tails the
file (the soak's phones) sees whole records as soon as they are answered; only the last line can
be incomplete while it is being written. Clearing the admin journal never touches the file.

Two kinds of line, told apart by `kind`:

- `push`: `seq`, `received_at` (ISO-8601 UTC), `token`, `push_type` and `priority` (the
  `apns-push-type` and `apns-priority` headers), `payload`, `status` (None when a fault closed the
  connection instead of answering), `reason`, `apns_id`, `dropped_by_device`, `fault_id`;
- `unregister`: `token`, `timestamp` (ms, what its 410s report), `received_at`, and `after_seq`:
  the last push `seq` answered before it, so every later push to the token answers 410.

Only what a check needs is kept (no JWT, connection or stream ids): a soak's file stays a
fraction of what the full records would take.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from devkit.simulators.apns.journal import PushRecord


class JournalFile:
    """An append-only JSON-lines file of everything the simulator answered."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] = path.open("a", encoding="utf-8")

    def push(self, record: PushRecord) -> None:
        """Append one answered push."""
        self._write(
            {
                "kind": "push",
                "seq": record.seq,
                "received_at": record.received_at,
                "token": record.token,
                "push_type": record.headers.get("apns-push-type"),
                "priority": record.headers.get("apns-priority"),
                "payload": record.payload,
                "status": record.status,
                "reason": record.reason,
                "apns_id": record.apns_id,
                "dropped_by_device": record.dropped_by_device,
                "fault_id": record.fault_id,
            }
        )

    def unregister(self, token: str, timestamp_ms: int, after_seq: int) -> None:
        """Append that `token` answers 410 for every push after `after_seq`."""
        self._write(
            {
                "kind": "unregister",
                "token": token,
                "timestamp": timestamp_ms,
                "received_at": datetime.now(UTC).isoformat(timespec="milliseconds"),
                "after_seq": after_seq,
            }
        )

    def close(self) -> None:
        self._file.close()

    def _write(self, line: dict[str, Any]) -> None:
        self._file.write(json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n")
        self._file.flush()
