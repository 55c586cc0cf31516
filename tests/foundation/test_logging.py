"""Log lines from stdlib loggers (temporalio's `workflow.logger`, uvicorn) as JSON with their fields."""

from __future__ import annotations

import json
import logging

import pytest

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
