"""Settings for one simulator process."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ApnsSimConfig:
    """Where the simulator listens and which provider identity it trusts.

    Attributes:
        data_dir: Holds the TLS pair (`cert.pem`, `key.pem`) and the signing keys
            (`AuthKey_<KEYID>.p8` with `AuthKey_<KEYID>.pub.pem`). Every `*.pub.pem` key found
            there is trusted under its key id, so a second sender key is added by dropping it in.
        host: Interface for both listeners.
        port: The APNs side: HTTP/2 over TLS.
        admin_port: The plain HTTP/1.1 admin API.
        team_id: The only `iss` accepted in provider tokens.
        key_id: The key created (or reused) in `data_dir` at start.
        topic: The app's bundle id; `<topic>.push-type.liveactivity` and the other push-type
            suffixes derive from it.
        strict_payloads: Apple answers 200 for a Live Activity payload the device will silently
            drop (no `timestamp`, a `start` without `attributes`, ...). True answers 400 with a
            simulator-only reason instead, so sender bugs fail loudly; False is Apple-faithful
            and only notes the problem in the push journal.
        journal_file: Where to append every journal record (and every admin unregister) as one
            JSON line, beyond the newest 10,000 the admin API keeps (format:
            `devkit.simulators.apns.journal_file`); None keeps only those.
    """

    data_dir: Path
    host: str = "127.0.0.1"
    port: int = 8443
    admin_port: int = 8444
    team_id: str = "DEVTEAM123"
    key_id: str = "DEVKEY1234"
    topic: str = "com.scoreline.app"
    strict_payloads: bool = True
    journal_file: Path | None = None
