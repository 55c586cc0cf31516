"""RetentionWorkflow: delete, in short batches, the rows Scoreline no longer needs.

Without it `domain_event`, `push_attempt`, `command`, `la_push`, `published_document`,
`webhook_attempt` and `webhook_message` only grow. The Schedule `retention-{task_queue}` (`workers.schedules`) runs it every
`RETENTION_INTERVAL`, overlap skip; an operator can also start it from the Temporal UI with `{}`
(every field has a default).

Tables go one after the other. For each, the activity `purge_old_rows` deletes batch after batch,
each its own short transaction with a pause after it, heartbeating, for up to `budget_seconds`;
the workflow calls it again while its last batch came back full. So history grows by one activity
per table per budget (a few events), never per batch, and holds only counts. What may be deleted
is decided in `activities.retention`.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from activities.retention import RetentionActivities
    from domain.retention import PurgeInput, RetentionInput, RetentionResult, RetentionTable


@workflow.defn
class RetentionWorkflow:
    @workflow.run
    async def run(self, retention: RetentionInput) -> RetentionResult:
        deleted: Counter[RetentionTable] = Counter()
        fixtures = batches = 0
        failed: list[RetentionTable] = []
        for table, age in retention.ages().items():
            if age is None:
                continue
            purge = PurgeInput(
                table=table,
                age_seconds=age,
                batch=retention.batch,
                pause_seconds=retention.pause_seconds,
                budget_seconds=retention.budget_seconds,
            )
            done = False
            while not done:
                try:
                    result = await workflow.execute_activity_method(
                        RetentionActivities.purge_old_rows,
                        purge,
                        start_to_close_timeout=timedelta(seconds=retention.budget_seconds + 120),
                        heartbeat_timeout=timedelta(seconds=30),
                        retry_policy=RetryPolicy(initial_interval=timedelta(seconds=5), maximum_attempts=3),
                    )
                except ActivityError:
                    # One table's trouble (a lock timeout, Postgres restarting) spares the others.
                    workflow.logger.warning("retention of a table failed", extra={"table": table.value})
                    failed.append(table)
                    break
                deleted[table] += result.deleted
                fixtures += result.fixtures_purged
                batches += result.batches
                done = result.done
        return RetentionResult(
            domain_event=deleted[RetentionTable.OUTBOX],
            push_attempt=deleted[RetentionTable.PUSH_ATTEMPT],
            command=deleted[RetentionTable.COMMAND],
            la_push=deleted[RetentionTable.LA_PUSH],
            published_document=deleted[RetentionTable.DOCUMENT],
            webhook_attempt=deleted[RetentionTable.WEBHOOK_ATTEMPT],
            webhook_message=deleted[RetentionTable.WEBHOOK_MESSAGE],
            fixtures_purged=fixtures,
            batches=batches,
            failed=tuple(failed),
        )
