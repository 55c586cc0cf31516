"""Scoreline's real JSON logging, written to a buffer a test reads."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from contextlib import contextmanager

from scoreline.logging import configure_logging


@contextmanager
def json_log_lines() -> Iterator[io.StringIO]:
    """Configure logging as a process does, with the root handler writing to the yielded buffer."""
    configure_logging("info", "json")
    handler = logging.getLogger().handlers[0]
    assert isinstance(handler, logging.StreamHandler)
    buffer = io.StringIO()
    previous = handler.setStream(buffer)
    try:
        yield buffer
    finally:
        handler.setStream(previous)
