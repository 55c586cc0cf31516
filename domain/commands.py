"""The messages of the command road (design §4): the desk's request, the one answer body, the commit.

All of them cross the workflow boundary, so they stay compact and only ever gain fields with
defaults. The answer is what the desk receives byte for byte, also when it comes back as the
`answer` of a later `duplicate`, so its fields keep their order and `None`s are left out.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from domain.rules import Actor, Mode, Touch
from domain.rules.commands import StorableText
from domain.snapshot import MatchState

MAX_KEY_LENGTH = 200
MAX_CONFLICT_ENTRIES = 50
"""A conflict carries at most this many entries since `saw`; the desk re-reads the rest."""

CommandKey = Annotated[str, Field(min_length=1, max_length=MAX_KEY_LENGTH, pattern=r"^[\x21-\x7e]+$")]
"""Made once by the sender and resent on every retry: printable ASCII, no spaces."""


class _Message(BaseModel):
    model_config = ConfigDict(frozen=True)


class Outcome(StrEnum):
    ACCEPTED = "accepted"
    DUPLICATE = "duplicate"
    REFUSED = "refused"
    CONFLICT = "conflict"
    TRY_AGAIN = "try_again"


class Reason(_Message):
    """Why a command was refused: a stable `code` and a `message` a scorer understands."""

    code: str
    message: str


KEY_REUSED = Reason(code="key_reused", message="this key was already used for another command")
"""Why a key sent again with another command is refused (nothing is written)."""

UNSTORABLE = Reason(
    code="unstorable",
    message="the database cannot store this command as sent; it was not applied",
)
"""Why a command whose commit Postgres refused (a data or constraint error) is refused:
sent again it would fail the same way, and retrying it would hold up every command queued behind it."""


class ChangedEntry(_Message):
    """A log entry a conflicting desk had not seen."""

    seq: int
    kind: str
    origin: str
    body: dict[str, JsonValue]
    minute: int | None = None
    extra_minute: int | None = None


class CommandAnswer(_Message):
    """The one answer body: `{outcome, seq?, answer?, reason?, changed?}`."""

    outcome: Outcome
    seq: int | None = None
    answer: CommandAnswer | None = None
    """For `duplicate`: the first answer, exactly as it was sent."""
    reason: Reason | None = None
    changed: tuple[ChangedEntry, ...] | None = None
    """For `conflict`: the entries after `saw`, oldest first."""

    def body(self) -> dict[str, JsonValue]:
        """The JSON body sent to the desk and stored in `command.answer`."""
        return self.model_dump(mode="json", exclude_none=True)


class CommandRequest(_Message):
    """The `submit` Update's argument: the desk's command, as the API checked and stamped it."""

    key: CommandKey
    code: str
    input: dict[str, JsonValue]
    saw: int = Field(ge=0)
    sent_at: datetime | None = None
    sender: StorableText
    """`desk:3` or `operator:1`, stored with the command."""
    actor: Actor = "desk"
    payload_hash: StorableText
    """Of what makes a resend the same command (fixture, code, input, saw): computed by the API."""


class DeskContext(_Message):
    """What a workflow run needs to take its first command: read once from Postgres."""

    sport: Literal["football", "cricket"]
    mode: Mode
    lineups: dict[str, dict[str, list[int]]] | None = None
    """`{"home": {"starting": [ids], "bench": [ids]}}`: the players a desk may name."""
    rule_state: dict[str, JsonValue] | None = None
    """The rules' state saved by the last desk command, when a previous run left one."""
    last_seq: int = 0


class BoardUpdate(_Message):
    """The scoreboard columns a desk-owned match's command writes."""

    body: dict[str, JsonValue]
    state: MatchState
    home: int
    away: int


class CommitInput(_Message):
    """One command's whole effect, written in one transaction by the commit local activity.

    `outcome` accepted writes the log entry at `seq` (which must be the next seq, else the commit
    answers `moved` and writes nothing); refused and conflict write only the `command` row.
    """

    fixture_id: int
    request: CommandRequest
    answer: CommandAnswer
    seq: int | None = None
    kind: str = "command"
    entry: dict[str, JsonValue] | None = None
    target_seq: int | None = None
    minute: int | None = None
    extra_minute: int | None = None
    board: BoardUpdate | None = None
    """The new scoreboard; None keeps the stored one (a provider-owned score)."""
    rule_state: str | None = None
    """The rules' state after the command, as JSON text (`model_dump_json`). Not a dict: dumping the
    state to Python and validating it again as JSON values costs most of the desk command's time in
    the workflow; the commit hands it to Postgres as it is."""
    saw: int = 0


class CommitStatus(StrEnum):
    COMMITTED = "committed"
    DUPLICATE = "duplicate"
    """The key was already stored with the same payload: `answer` is the stored first answer."""
    KEY_REUSED = "key_reused"
    """The key was already stored with another payload: nothing was written."""
    MOVED = "moved"
    """Someone else wrote the log since the workflow last looked: nothing was written."""
    UNSTORABLE = "unstorable"
    """Postgres refused what the command would write: none of it was written, and `answer` is the
    `unstorable` refusal stored in its place (the command row alone, as for any refusal)."""


class CommitResult(_Message):
    status: CommitStatus
    answer: CommandAnswer | None = None
    last_seq: int
    stored_seq: int | None = None
    """For `duplicate`: the seq the first command was logged at, if it was accepted."""
    trace_id: str | None = None
    """The trace id the commit stored with the command (the desk request's)."""


class Touched(_Message):
    """The last seq that touched each part of the match: what `saw` is compared with."""

    seqs: dict[Touch, int] = {}

    def since(self, saw: int, touches: frozenset[Touch]) -> bool:
        """Whether anything the command changes moved after `saw`."""
        return any(self.seqs.get(touch, 0) > saw for touch in touches)

    def mark(self, touches: frozenset[Touch] | set[Touch], seq: int) -> Touched:
        return Touched(seqs={**self.seqs, **{touch: seq for touch in touches}})
