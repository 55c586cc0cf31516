"""Log lines from stdlib loggers (temporalio's `workflow.logger`, uvicorn) as JSON with their fields."""

from __future__ import annotations

import json
import logging

import pytest
import structlog
from structlog.testing import capture_logs

from scoreline.logging import get_logger
from tests.support.logs import json_log_lines

pytestmark = pytest.mark.unit


def test_a_stdlib_records_extra_fields_reach_the_json_line() -> None:
    """`workflow.logger` passes its fields as `extra`; they were dropped, so the Update's line in a
    trace said "desk command answered by the workflow" without its key, outcome or seq."""
    with json_log_lines() as buffer:
        logging.getLogger("temporalio.workflow").info(
            "desk command answered by the workflow",
            extra={"key": "k-1", "seq": 7, "color_message": "\x1b[1mdesk command\x1b[0m"},
        )
    line = json.loads(buffer.getvalue().strip().splitlines()[-1])
    assert (line["event"], line["key"], line["seq"]) == ("desk command answered by the workflow", "k-1", 7)
    assert "color_message" not in line  # uvicorn's coloured copy of the message is for terminals


def test_a_logger_first_used_under_the_process_configuration_is_seen_by_a_later_capture() -> None:
    """A logger is cached on its first call with the processor list configured then; configuring
    logging again replaced that list, so a module logger first used before a second
    `configure_logging` (a CLI run, a worker writing JSON lines) ignored every later configuration and
    `capture_logs`. The full run of 2026-12-02 failed that way: the provider-trace test found no
    watch "material change" line. Configuring again now refills the list loggers already hold."""
    logger = get_logger("tests.foundation.first_use")
    with json_log_lines() as first:
        logger.info("first use")
    assert "first use" in first.getvalue()
    with json_log_lines() as second:
        logger.info("after configuring again")
    assert "after configuring again" in second.getvalue()
    with capture_logs([structlog.contextvars.merge_contextvars]) as logs:
        logger.info("second use")
    assert [entry["event"] for entry in logs] == ["second use"]
