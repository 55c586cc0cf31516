"""Desks and operators in Postgres: tokens stored hashed, authentication, revocation, desk scope."""

from __future__ import annotations

import pytest
from sqlalchemy import Table, func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from scoreline.accounts.store import (
    AccountError,
    AccountNotFoundError,
    NameTakenError,
    UnknownFixturesError,
    authenticate,
    create_desk,
    create_operator,
    revoke_desk,
    revoke_operator,
)
from scoreline.accounts.tokens import PREFIXES, hash_token
from scoreline.db.tables import desk, operator


async def _rows_as_text(engine: AsyncEngine, table: Table) -> str:
    """Every value of every row of `table`, as text: where a leaked token would show up."""
    async with engine.connect() as conn:
        rows = (await conn.execute(select(table))).all()
    return "\n".join(" ".join(str(value) for value in row) for row in rows)


async def test_tokens_are_stored_only_as_their_hash(
    engine: AsyncEngine, provider_fixtures: tuple[int, int]
) -> None:
    """No column of the desk or operator row holds the plain token; `token_hash` is its sha-256."""
    created_desk, desk_token = await create_desk(engine, "north", [provider_fixtures[0]])
    _, operator_token = await create_operator(engine, "ops")
    desk_rows, operator_rows = await _rows_as_text(engine, desk), await _rows_as_text(engine, operator)
    assert desk_token not in desk_rows and desk_token.removeprefix(PREFIXES["desk"]) not in desk_rows
    assert operator_token.removeprefix(PREFIXES["operator"]) not in operator_rows
    assert hash_token(desk_token) in desk_rows
    assert hash_token(operator_token) in operator_rows
    assert created_desk.fixtures == {provider_fixtures[0]}


async def test_a_desk_token_authenticates_as_that_desk_with_its_fixtures(
    engine: AsyncEngine, provider_fixtures: tuple[int, int]
) -> None:
    """The sender is the desk, labelled `desk:<id>`, and may score only its own fixtures."""
    first, other = provider_fixtures
    created, token = await create_desk(engine, "north", [first, first])
    sender = await authenticate(engine, token)
    assert sender is not None
    assert (sender.kind, sender.id, sender.name, sender.fixtures) == (
        "desk",
        created.id,
        "north",
        frozenset({first}),
    )
    assert sender.label == f"desk:{created.id}"
    assert sender.may_score(first)
    assert not sender.may_score(other)


async def test_an_operator_token_may_score_every_fixture(engine: AsyncEngine) -> None:
    """An operator has no fixture list: any fixture id is in scope."""
    created, token = await create_operator(engine, "ops")
    sender = await authenticate(engine, token)
    assert sender is not None
    assert (sender.kind, sender.fixtures, sender.label) == ("operator", None, f"operator:{created.id}")
    assert sender.may_score(10**12 + 5)


async def test_revoked_unknown_and_altered_tokens_do_not_authenticate(
    engine: AsyncEngine, provider_fixtures: tuple[int, int]
) -> None:
    """After revocation the token is refused; so is a fresh token and a desk token relabelled as an operator's."""
    _, desk_token = await create_desk(engine, "north", [provider_fixtures[0]])
    _, operator_token = await create_operator(engine, "ops")
    relabelled = PREFIXES["operator"] + desk_token.removeprefix(PREFIXES["desk"])
    assert await authenticate(engine, relabelled) is None
    assert await authenticate(engine, PREFIXES["desk"] + "A" * 43) is None

    revoked = await revoke_desk(engine, "north")
    assert revoked.revoked_at is not None
    assert await authenticate(engine, desk_token) is None
    await revoke_operator(engine, "ops")
    assert await authenticate(engine, operator_token) is None


async def test_revoking_twice_keeps_the_first_time(engine: AsyncEngine) -> None:
    """Revocation is idempotent: the second call changes nothing."""
    await create_operator(engine, "ops")
    first = await revoke_operator(engine, "ops")
    second = await revoke_operator(engine, "ops")
    assert first.revoked_at is not None
    assert second.revoked_at == first.revoked_at


async def test_unknown_fixtures_are_named_and_nothing_is_written(
    engine: AsyncEngine, provider_fixtures: tuple[int, int]
) -> None:
    """A desk for a fixture that does not exist is refused, naming the missing ids, and no row is left."""
    with pytest.raises(UnknownFixturesError, match=f"no such fixture: 5, {2**63}$") as refused:
        await create_desk(engine, "north", [provider_fixtures[0], 5, 2**63])
    assert refused.value.fixture_ids == [5, 2**63]
    async with engine.connect() as conn:
        assert (await conn.execute(select(func.count()).select_from(desk))).scalar_one() == 0


async def test_names_are_unique_and_never_reused(
    engine: AsyncEngine, provider_fixtures: tuple[int, int]
) -> None:
    """A second desk or operator with a taken name is refused, also once the first was revoked."""
    await create_desk(engine, "north", [provider_fixtures[0]])
    await revoke_desk(engine, "north")
    with pytest.raises(NameTakenError, match="'north' already exists"):
        await create_desk(engine, " north ", [provider_fixtures[1]])
    await create_operator(engine, "ops")
    with pytest.raises(NameTakenError):
        await create_operator(engine, "ops")


@pytest.mark.parametrize(("name", "fixtures"), [("", [81000001]), ("x" * 101, [81000001]), ("north", [])])
async def test_bad_desk_requests_are_refused(
    engine: AsyncEngine, provider_fixtures: tuple[int, int], name: str, fixtures: list[int]
) -> None:
    """An empty or over-long name, or a desk with no fixtures, is an AccountError."""
    with pytest.raises(AccountError):
        await create_desk(engine, name, fixtures)


async def test_revoking_an_unknown_name_says_so(engine: AsyncEngine) -> None:
    """There is nothing to revoke: the error names what was asked for."""
    with pytest.raises(AccountNotFoundError, match="no desk named 'ghost'"):
        await revoke_desk(engine, "ghost")
    with pytest.raises(AccountNotFoundError, match="no operator named 'ghost'"):
        await revoke_operator(engine, "ghost")
