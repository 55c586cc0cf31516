"""structlog set-up: JSON lines in production or when not on a terminal, readable on a terminal.

Configured once per process. Everything logs through structlog with `merge_contextvars`, so a
`trace_id` bound at the edge (HTTP request, provider poll, activity start) is on every line below it.
The stdlib root logger is routed through the same renderer so uvicorn, alembic and temporalio's
`workflow.logger` end up in the same stream.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, Literal

import structlog

LogFormat = Literal["json", "console"]


def _choose_format(requested: str | None, production: bool) -> LogFormat:
    if requested in ("json", "console"):
        return requested  # type: ignore[return-value]
    if production or not sys.stderr.isatty():
        return "json"
    return "console"


def configure_logging(level: str = "info", fmt: str | None = None, *, production: bool = False) -> None:
    """Route structlog and stdlib logging to stderr in one format."""
    chosen = _choose_format(fmt, production)
    shared: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.StackInfoRenderer(),
    ]
    renderer: structlog.types.Processor
    if chosen == "json":
        renderer = structlog.processors.JSONRenderer()
        shared.append(structlog.processors.format_exc_info)
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())

    # A stdlib record's `extra` fields (temporalio's `workflow.logger`, which the workflows log
    # through, passes its fields and the workflow's identity that way) become fields of the line.
    foreign: list[structlog.types.Processor] = [*shared, structlog.stdlib.ExtraAdder(), _drop_terminal_copies]
    # Loggers are cached on first use with the processor list of that moment: refilling that list
    # rather than replacing it keeps them following a later configuration (and `capture_logs`).
    processors: list[structlog.types.Processor] = structlog.get_config()["processors"]
    processors[:] = [*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter]
    structlog.configure(
        processors=processors,
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=foreign,
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for noisy in ("httpx", "httpcore", "asyncio"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def _drop_terminal_copies(
    _logger: Any, _method: str, event_dict: structlog.types.EventDict
) -> structlog.types.EventDict:
    """uvicorn passes `color_message`, its message with ANSI colours, as an extra: not for a log line."""
    event_dict.pop("color_message", None)
    return event_dict


def get_logger(name: str, **initial: Any) -> structlog.stdlib.BoundLogger:
    """A named structlog logger; `initial` values are bound to every line it writes."""
    logger: structlog.stdlib.BoundLogger = structlog.stdlib.get_logger(name)
    return logger.bind(**initial) if initial else logger
