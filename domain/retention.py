"""The messages of the retention activity (`purge_old_rows`): one table, one call, counts back."""

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
