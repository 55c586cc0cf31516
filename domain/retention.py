"""The messages of retention: the workflow's ages and counts, and its activity's one table per call."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class RetentionTable(StrEnum):
    """The tables retention deletes from (the values are the table names)."""

    OUTBOX = "domain_event"
    PUSH_ATTEMPT = "push_attempt"
    COMMAND = "command"
    LA_PUSH = "la_push"
    DOCUMENT = "published_document"
    WEBHOOK_ATTEMPT = "webhook_attempt"
    WEBHOOK_MESSAGE = "webhook_message"


class PurgeInput(BaseModel):
    """One call of `purge_old_rows`: batches of one table until a short batch or the budget ends."""

    model_config = ConfigDict(frozen=True)

    table: RetentionTable
    age_seconds: Annotated[float, Field(gt=0)]
    batch: Annotated[int, Field(ge=1)] = 1000
    pause_seconds: Annotated[float, Field(ge=0)] = 0.05
    """Sleep after each batch, so a backlog never keeps Postgres busy back to back."""
    budget_seconds: Annotated[float, Field(gt=0)] = 60.0
    """Return after this long even if full batches keep coming (the workflow calls again)."""


class PurgeResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    deleted: int = 0
    batches: int = 0
    fixtures_purged: int = 0
    """`la_push` only: matches whose pushes are now all gone, marked `fixture.pushes_purged_at`."""
    done: bool = True
    """The last batch was short: nothing old enough is left (for now)."""


DAY = 86_400.0

Age = Annotated[float, Field(gt=0)] | None
"""Seconds a row is kept; None keeps the table forever."""


class RetentionInput(BaseModel):
    """Ages per table in seconds (None keeps that table) and the batch pacing; all defaulted."""

    model_config = ConfigDict(frozen=True)

    outbox_age_seconds: Age = 7 * DAY
    push_attempt_age_seconds: Age = 30 * DAY
    command_age_seconds: Age = 30 * DAY
    la_push_age_seconds: Age = 30 * DAY
    document_age_seconds: Age = 7 * DAY
    webhook_attempt_age_seconds: Age = 30 * DAY
    """The delivery log partners read; delivered webhook messages go at `outbox_age_seconds`."""
    batch: Annotated[int, Field(ge=1)] = 1000
    pause_seconds: Annotated[float, Field(ge=0)] = 0.05
    budget_seconds: Annotated[float, Field(gt=0)] = 60.0

    def ages(self) -> dict[RetentionTable, float | None]:
        return {
            RetentionTable.OUTBOX: self.outbox_age_seconds,
            RetentionTable.PUSH_ATTEMPT: self.push_attempt_age_seconds,
            RetentionTable.COMMAND: self.command_age_seconds,
            RetentionTable.LA_PUSH: self.la_push_age_seconds,
            RetentionTable.DOCUMENT: self.document_age_seconds,
            RetentionTable.WEBHOOK_ATTEMPT: self.webhook_attempt_age_seconds,
            # A delivered message is kept as long as the outbox row it was made from.
            RetentionTable.WEBHOOK_MESSAGE: self.outbox_age_seconds,
        }


class RetentionResult(BaseModel):
    """Rows deleted per table in this run."""

    model_config = ConfigDict(frozen=True)

    domain_event: int = 0
    push_attempt: int = 0
    command: int = 0
    la_push: int = 0
    published_document: int = 0
    webhook_attempt: int = 0
    webhook_message: int = 0
    fixtures_purged: int = 0
    batches: int = 0
    failed: tuple[RetentionTable, ...] = ()
    """Tables whose activity failed after its retries; the others were still purged."""
