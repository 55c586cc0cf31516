"""A partner's broadcast delay: what its key reads stays this far behind the commits.

Partners delay to stay behind a TV picture, or are sold a delayed tier. The API processes hold the
partner table in memory (`directory.PartnerDirectory`), so a change commits with the same
`pg_notify(PARTNERS_CHANNEL)` as a new or revoked key and takes effect at once.
"""

from __future__ import annotations

from typing import Final

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.db.tables import partner
from scoreline.feeds.partners import PARTNERS_CHANNEL, PartnerError

MAX_DELAY_SECONDS: Final = 300
"""The bound of every broadcast delay (`partner.delay_seconds`, `webhook_endpoint.delay_seconds`,
a stream's `?delay=`): five minutes covers any broadcast delay."""


async def set_partner_delay(engine: AsyncEngine, name: str, seconds: int) -> None:
    """Delay what partner `name` reads by `seconds` (0 for none).

    Raises:
        PartnerError: `seconds` is out of 0..300, or there is no partner of that name.
    """
    if not 0 <= seconds <= MAX_DELAY_SECONDS:
        raise PartnerError(f"a delay is 0 to {MAX_DELAY_SECONDS} seconds")
    async with engine.begin() as conn:
        found = (
            await conn.execute(
                partner.update()
                .where(partner.c.name == name.strip())
                .values(delay_seconds=seconds)
                .returning(partner.c.id)
            )
        ).first()
        if found is None:
            raise PartnerError(f"there is no partner named {name.strip()!r}")
        await conn.execute(select(func.pg_notify(PARTNERS_CHANNEL, name.strip())))
