"""A TCP proxy that can be cut: "the database is down" for one process, without stopping Postgres.

Cutting it closes the listening socket and aborts every connection through it, so the client sees
exactly what a Postgres outage looks like (reset connections, then refused ones); restoring it
listens on the same port again. The resilience tests cut one; the soak cuts a worker's.
"""

from __future__ import annotations

import asyncio
import contextlib

from sqlalchemy.engine import make_url

from devkit.devstack.ports import free_port


class CuttableProxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self.port = free_port()
        self._target = (target_host, target_port)
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._pipes: set[asyncio.Task[None]] = set()

    @classmethod
    def to_database(cls, database_url: str) -> CuttableProxy:
        """A proxy to the Postgres server of `database_url` (not started yet)."""
        url = make_url(database_url)
        return cls(url.host or "127.0.0.1", url.port or 5432)

    def database_url(self, database_url: str) -> str:
        """`database_url` reaching its database through this proxy."""
        url = make_url(database_url).set(host="127.0.0.1", port=self.port)
        return url.render_as_string(hide_password=False)

    async def start(self) -> None:
        await self.restore()

    async def restore(self) -> None:
        """Accept connections again, on the same port (a no-op when not cut)."""
        if self._server is None:
            self._server = await asyncio.start_server(self._accept, "127.0.0.1", self.port)

    async def cut(self) -> None:
        """Refuse new connections and break the open ones."""
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in self._writers:
            writer.transport.abort()
        self._writers.clear()
        for pipe in list(self._pipes):
            pipe.cancel()
        await asyncio.gather(*self._pipes, return_exceptions=True)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(*self._target)
        except OSError:
            writer.transport.abort()
            return
        self._writers.add(upstream_writer)
        if self._server is None:  # cut while this connection was being made
            writer.transport.abort()
            upstream_writer.transport.abort()
            return
        for source, sink in ((reader, upstream_writer), (upstream_reader, writer)):
            pipe = asyncio.create_task(_pump(source, sink))
            self._pipes.add(pipe)
            pipe.add_done_callback(self._pipes.discard)


async def _pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
    except ConnectionError:
        pass
    finally:
        with contextlib.suppress(Exception):
            sink.transport.abort()
