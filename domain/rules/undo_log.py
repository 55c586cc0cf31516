"""The bounded undo log both sports keep, and the step that writes it.

Each logged step keeps what it changed, so undo can put the game back exactly. Entries are frozen
pydantic models that round-trip through JSON, because the log is part of the rule state carried
through Temporal history and continue-as-new.

This module imports only the stdlib, pydantic and `domain.rules`: safe in the workflow sandbox.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol, Self, TypeVar

from pydantic import BaseModel, JsonValue

from domain.frozen import Frozen
from domain.rules.commands import Command, MatchCommentary, MatchSetMode, MatchUndo, Touch
from domain.rules.common import IllegalCommand, Refusal, RefusalCode, refuse


class UndoEntry(Frozen):
    """One undoable step: enough to put the game back exactly as it was before `seq`.

    `before` holds only the game fields that the step changed, as they were, in their JSON form (so
    the entry is small and survives a JSON round trip unchanged).
    """

    seq: int
    code: str
    touches: tuple[Touch, ...]
    before: dict[str, JsonValue]


Game = TypeVar("Game", bound=BaseModel)


def record(
    log: tuple[UndoEntry, ...],
    *,
    window: int,
    seq: int,
    code: str,
    touches: Iterable[Touch],
    old: BaseModel,
    new: BaseModel,
) -> tuple[UndoEntry, ...]:
    """`log` with the step `old → new` at `seq` appended, keeping the newest `window` entries."""
    if log and seq <= log[-1].seq:
        raise ValueError(f"seq {seq} is not after the last recorded seq {log[-1].seq}")
    dumped = old.model_dump(mode="json")
    before = {
        name: dumped[name] for name in type(old).model_fields if getattr(old, name) != getattr(new, name)
    }
    entry = UndoEntry(seq=seq, code=code, touches=tuple(sorted(set(touches))), before=before)
    return (*log, entry)[-window:]


def restore(game: Game, entry: UndoEntry) -> Game:
    """The game as it was before `entry`'s step (an exact, equal model)."""
    return type(game).model_validate({**game.model_dump(mode="json"), **entry.before})


def find_entry(log: tuple[UndoEntry, ...], seq: int) -> UndoEntry | None:
    """The log entry recorded at `seq`, if it is still in the window."""
    return next((entry for entry in log if entry.seq == seq), None)


def undo_touches(log: tuple[UndoEntry, ...], target_seq: int) -> frozenset[Touch]:
    """What undoing the step at `target_seq` touches: what that step touched (nothing when unknown)."""
    entry = find_entry(log, target_seq)
    return frozenset(entry.touches) if entry is not None else frozenset()


def undo_refusal(log: tuple[UndoEntry, ...], target_seq: int) -> Refusal | None:
    """Only the newest undoable step can be undone; anything older must wait its turn."""
    if find_entry(log, target_seq) is None:
        return refuse(RefusalCode.TARGET_NOT_FOUND, f"nothing to undo at seq {target_seq}")
    if log[-1].seq != target_seq:
        return refuse(
            RefusalCode.NOT_LAST,
            f"only the last change can be undone: undo seq {log[-1].seq} first",
        )
    return None


class SportState(Protocol):
    """What `logged_step` reads and copies of a sport's rule state."""

    @property
    def game(self) -> BaseModel: ...

    @property
    def undo(self) -> tuple[UndoEntry, ...]: ...

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self: ...


State = TypeVar("State", bound=SportState)


def logged_step(
    state: State,
    command: Command,
    seq: int,
    *,
    refusal: Refusal | None,
    window: int,
    apply: Callable[[], BaseModel | None],
    touched: Callable[[], frozenset[Touch]],
) -> State:
    """The state after `command`, logged at `seq`: what every sport does around its own rules.

    A mode switch, an undo and commentary are the same in every sport; any other command changes
    the game through `apply` and is logged with what `touched` says it touches, keeping the newest
    `window` steps. `apply` gives None for a command that changes nothing and is not logged.

    Raises:
        IllegalCommand: `refusal`, the sport's answer for an operator, is not None.
    """
    if refusal is not None:
        raise IllegalCommand(refusal)
    if isinstance(command, MatchSetMode):
        return state.model_copy(update={"mode": command.mode})
    if isinstance(command, MatchUndo):
        entry = state.undo[-1]
        return state.model_copy(update={"game": restore(state.game, entry), "undo": state.undo[:-1]})
    if isinstance(command, MatchCommentary):
        return state
    game = apply()
    if game is None:
        return state
    log = record(
        state.undo, window=window, seq=seq, code=command.code, touches=touched(), old=state.game, new=game
    )
    return state.model_copy(update={"game": game, "undo": log})
