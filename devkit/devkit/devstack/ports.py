"""Port choice for local processes: the documented default when free, any free port otherwise."""

from __future__ import annotations

import socket


def is_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host: str = "127.0.0.1") -> int:
    """A port the kernel says is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
    return port


def choose_port(preferred: int | None, taken: set[int], host: str = "127.0.0.1") -> int:
    """`preferred` if nobody listens on it and this stack has not handed it out yet, else (or with
    no preference) a free one.

    `taken` collects every port already handed out, so two parts never get the same one even
    before either has bound it.
    """
    free = preferred is not None and preferred not in taken and is_free(preferred, host)
    port = preferred if free and preferred is not None else free_port(host)
    while port in taken:
        port = free_port(host)
    taken.add(port)
    return port
