"""Rebuild one document from Postgres and save it as a new version if its content changed."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.feeds.documents import document_content
from scoreline.feeds.keys import DocKey
from scoreline.feeds.models import MatchContent
from scoreline.feeds.published import Published, publish


async def build_document(
    engine: AsyncEngine, doc: DocKey, *, trace_ids: Sequence[str] = ()
) -> tuple[Published, bool] | None:
    """The document's latest version and whether this rebuild created it; None if there is no match.

    Content and save share one REPEATABLE READ transaction: the scoreboard and the events come from
    one instant, and the version is saved against exactly what was read. `trace_ids` are the
    changes gathered into this rebuild; a new version records them.
    """
    async with engine.connect() as conn:
        snapshot = await conn.execution_options(isolation_level="REPEATABLE READ")
        async with snapshot.begin():
            content = await document_content(snapshot, doc)
            if content is None:
                return None
            competition = content.competition_id if isinstance(content, MatchContent) else None
            return await publish(
                snapshot, doc.key, content.model_dump(mode="json"), competition, trace_ids=trace_ids
            )
