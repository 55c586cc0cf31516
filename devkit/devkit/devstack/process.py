"""One supervised child process: started in its own session, logged to a file, stopped for sure.

Each child gets its own session (process group), so a Ctrl-C in the terminal reaches only the
supervisor, which then stops the children in order; stopping signals the whole group, so
grandchildren (Postgres backends) go too.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pwd
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scoreline.logging import get_logger

log = get_logger(__name__)


def run_as(user: str | None) -> dict[str, Any]:
    """Popen arguments that drop to `user` entirely: its group too, or root's group bits would apply."""
    if user is None:
        return {}
    return {"user": user, "group": pwd.getpwnam(user).pw_gid, "extra_groups": []}


@dataclass
class ChildProcess:
    """A named command whose output goes to `log_path`."""

    name: str
    argv: Sequence[str]
    log_path: Path
    env: Mapping[str, str] | None = None
    user: str | None = None
    stop_signal: signal.Signals = signal.SIGTERM
    cwd: Path | None = None
    _process: asyncio.subprocess.Process | None = field(default=None, init=False, repr=False)

    async def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log_file:
            self._process = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log_file,
                stderr=asyncio.subprocess.STDOUT,
                env=dict(self.env) if self.env is not None else None,
                cwd=self.cwd,
                **run_as(self.user),
                start_new_session=True,
            )
        log.debug("child started", part=self.name, pid=self._process.pid)

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    @property
    def returncode(self) -> int | None:
        return self._process.returncode if self._process else None

    async def wait(self) -> int:
        if self._process is None:
            raise RuntimeError(f"{self.name} was never started")
        return await self._process.wait()

    def log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return ""

    async def stop(self, timeout: float = 10.0) -> None:
        """Ask politely, then kill the whole process group if it does not leave in `timeout`."""
        process = self._process
        if process is None or process.returncode is not None:
            return
        self._signal_group(self.stop_signal)
        try:
            async with asyncio.timeout(timeout):
                await process.wait()
        except TimeoutError:
            log.warning("child did not stop in time; killing", part=self.name, pid=process.pid)
            self._signal_group(signal.SIGKILL)
            await process.wait()
        # The leader is gone; make sure nothing it left in its group lingers.
        self._signal_group(signal.SIGKILL)

    def _signal_group(self, sig: signal.Signals) -> None:
        if self._process is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._process.pid, sig)
