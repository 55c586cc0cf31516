"""How the match workflow decides a desk command: pure, so the workflow stays deterministic.

`decide` runs the command road's checks in the order design §4 gives them — the version (`saw`
against the last seq that touched what the command changes; pure additions skip it), then the
sport rule's `check`, then `step` — and returns the commit to write. Nothing changes until that
commit returned: the workflow adopts `Decision.after` only then.

The key check is not here: the `command` table is the truth for keys, so the commit transaction
does it under the fixture lock.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from domain.commands import (
    BoardUpdate,
    CommandAnswer,
    CommandRequest,
    CommitInput,
    DeskContext,
    Outcome,
    Reason,
    Touched,
)
from domain.cricket.desk_board import board_of
from domain.cricket.live import line_of
from domain.moments import RETRACTION, KeyMoment
from domain.progress import MatchProgress
from domain.rules import (
    ADDITIVE_CODES,
    RULE_STATE,
    Command,
    CricketState,
    FootballState,
    Touch,
    check,
    describe,
    initial_state,
    parse_command,
    scoreboard,
    step,
    touches,
)
from domain.rules.commands import (
    CricketBall,
    FootballCard,
    FootballGoal,
    MatchSetMode,
    MatchUndo,
    MatchVar,
)
from domain.rules.football import FootballGame, GoalRecord, is_over, next_periods
from domain.snapshot import MatchState

ALL_TOUCHES = frozenset(Touch)
"""What a provider entry may have changed: the workflow cannot tell, so it assumes everything."""


class DeskBook(BaseModel):
    """The workflow's view of one match for desk commands; carried across continue-as-new."""

    model_config = ConfigDict(frozen=True)

    rules: FootballState | CricketState
    touched: Touched = Touched()
    version: int = 0
    """The last log seq this workflow knows of."""

    def moved_to(self, seq: int) -> DeskBook:
        """Someone else (the provider ingest) logged up to `seq`: whatever it touched is newer."""
        if seq <= self.version:
            return self
        return self.model_copy(update={"version": seq, "touched": self.touched.mark(ALL_TOUCHES, seq)})

    def caught_up(self, stored: DeskBook) -> DeskBook:
        """This book at `stored`'s log position with the rule state Postgres kept there, when the
        log moved past this book: whatever the entries it missed touched is newer."""
        if stored.version <= self.version:
            return self
        return self.model_copy(update={"rules": stored.rules}).moved_to(stored.version)


class Decision(BaseModel):
    model_config = ConfigDict(frozen=True)

    commit: CommitInput
    after: DeskBook
    """The book once the commit returned `committed`."""
    moments: tuple[KeyMoment, ...] = ()
    """The key moments of an accepted command."""


def open_book(context: DeskContext) -> DeskBook:
    """The book of a run's first command: the saved rule state, or a fresh match."""
    if context.rule_state is not None:
        rules = RULE_STATE.validate_python(context.rule_state)
        rules = rules.model_copy(update={"mode": context.mode})
    else:
        rules = initial_state(context.sport, context.mode, context.lineups)
    return DeskBook(rules=rules, version=context.last_seq).moved_to(context.last_seq)


def decide(
    book: DeskBook,
    fixture_id: int,
    request: CommandRequest,
    progress: MatchProgress,
    *,
    has_provider: bool = True,
) -> Decision:
    """The answer to `request` and what to write for it, if the log is still at `book.version`.

    `progress` is the provider's view of the match, from which desks start when they take over.
    Without a provider (`has_provider` False) the score cannot be handed to one.
    """
    command = parse_command(request.code, request.input)
    rules = book.rules
    if not has_provider and isinstance(command, MatchSetMode) and command.mode == "provider":
        answer = CommandAnswer(
            outcome=Outcome.REFUSED,
            reason=Reason(code="no_provider", message="no data provider covers this match"),
        )
        return Decision(commit=_only_command(fixture_id, request, answer), after=book)
    changed = touches(rules, command)
    if command.code not in ADDITIVE_CODES and book.touched.since(request.saw, changed):
        answer = CommandAnswer(outcome=Outcome.CONFLICT)
        return Decision(commit=_only_command(fixture_id, request, answer), after=book)
    if _takes_over(rules, command):
        rules = _seed_from_provider(rules, progress)
    refusal = check(rules, command, actor=request.actor)
    if refusal is not None:
        answer = CommandAnswer(
            outcome=Outcome.REFUSED, reason=Reason(code=refusal.code, message=refusal.message)
        )
        return Decision(commit=_only_command(fixture_id, request, answer), after=book)
    seq = book.version + 1
    after = step(rules, command, seq)
    answer = CommandAnswer(outcome=Outcome.ACCEPTED, seq=seq)
    commit = CommitInput(
        fixture_id=fixture_id,
        request=request,
        answer=answer,
        seq=seq,
        entry=describe(command),
        target_seq=getattr(command, "target_seq", None),
        minute=getattr(command, "minute", None),
        extra_minute=getattr(command, "extra_minute", None),
        rule_state=after.model_dump_json(),
        saw=request.saw,
        board=_board(after),
    )
    return Decision(
        commit=commit,
        after=DeskBook(rules=after, touched=book.touched.mark(changed, seq), version=seq),
        moments=key_moments(rules, command),
    )


def key_moments(rules: FootballState | CricketState, command: Command) -> tuple[KeyMoment, ...]:
    """What a follower hears about at once: goals, sendings-off, wickets; a take-back is a
    retraction (the corrected score goes out, the original alert is never repeated)."""
    match command:
        case FootballGoal():
            kind = {"open_play": "goal", "penalty": "penalty_goal", "own_goal": "own_goal"}[command.kind]
            return (KeyMoment(kind=kind, side=command.side),)
        case FootballCard() if command.color != "yellow":
            kind = "red_card" if command.color == "red" else "second_yellow"
            return (KeyMoment(kind=kind, side=command.side),)
        case CricketBall() if command.wicket is not None and isinstance(rules, CricketState):
            return (KeyMoment(kind="wicket", side=rules.game.batting),)
        case CricketBall() if isinstance(rules, CricketState):
            milestone = _milestone(rules, command)
            return () if milestone is None else (KeyMoment(kind=milestone, side=rules.game.batting),)
        case MatchUndo():
            return (KeyMoment(kind=RETRACTION),)
        case MatchVar() if command.decision == "overturned":
            return (KeyMoment(kind=RETRACTION),)
    return ()


MILESTONES = ((100, "hundred"), (50, "fifty"))


def _milestone(rules: CricketState, ball: CricketBall) -> str | None:
    """The fifty or hundred the striker reaches with this ball, as a provider ball's `milestone`
    says it (a desk that names no striker has no milestones)."""
    striker = rules.game.striker
    if striker is None:
        return None
    before = next((tally.runs for tally in rules.game.batters if tally.id == striker), 0)
    after = before + ball.runs
    return next((name for mark, name in MILESTONES if before < mark <= after), None)


def desk_progress(book: DeskBook) -> MatchProgress | None:
    """Where a desk-owned match stands, as the workflow tracks it; None while the provider owns it."""
    rules = book.rules
    if rules.mode != "desk":
        return None
    state = match_state(rules)
    if isinstance(rules, CricketState):
        board = board_of(rules)
        return MatchProgress(
            version=book.version,
            state=state,
            home=board.runs_of("home"),
            away=board.runs_of("away"),
            cricket=line_of(board),
        )
    score = rules.game.score
    return MatchProgress(version=book.version, state=state, home=score.home, away=score.away)


_INNINGS_STATES = {
    1: MatchState.INNINGS_1,
    2: MatchState.INNINGS_2,
    3: MatchState.INNINGS_3,
    4: MatchState.INNINGS_4,
}


def match_state(rules: FootballState | CricketState) -> MatchState:
    """The normalised state a desk-scored match is in: cricket's are the provider's cricket states
    (`innings_1`…`innings_4` while an innings is in play, `innings_break` between them)."""
    if isinstance(rules, CricketState):
        game = rules.game
        if game.finished:
            return MatchState.FINISHED
        if game.innings == 0:
            return MatchState.SCHEDULED
        if not game.in_play:
            return MatchState.INNINGS_BREAK
        return _INNINGS_STATES[game.innings]
    return _football_state(rules)


def _football_state(rules: FootballState) -> MatchState:
    game = rules.game
    if not game.periods:
        return MatchState.SCHEDULED
    if game.running:
        return {
            "1H": MatchState.LIVE_FIRST_HALF,
            "2H": MatchState.LIVE_SECOND_HALF,
            "ET1": MatchState.EXTRA_TIME,
            "ET2": MatchState.EXTRA_TIME,
            "PEN": MatchState.PENALTIES,
        }[game.periods[-1]]
    if is_over(rules):
        return MatchState.FINISHED
    upcoming = next_periods(rules)
    if upcoming == ("2H",):
        return MatchState.HALF_TIME
    return MatchState.PENALTIES_BREAK if upcoming == ("PEN",) else MatchState.EXTRA_TIME_BREAK


def _board(rules: FootballState | CricketState) -> BoardUpdate | None:
    """The scoreboard of a commit: only a desk-owned match's score is the desks' to write.

    A cricket match's is stored as a provider's is: each side's runs in its latest innings as the
    score, and the whole `CricketBoard` under `cricket` in the body.
    """
    if rules.mode != "desk":
        return None
    state = match_state(rules)
    if isinstance(rules, CricketState):
        board = board_of(rules)
        body = {**scoreboard(rules), "cricket": board.model_dump(mode="json")}
        return BoardUpdate(body=body, state=state, home=board.runs_of("home"), away=board.runs_of("away"))
    score = rules.game.score
    return BoardUpdate(body=scoreboard(rules), state=state, home=score.home, away=score.away)


def _only_command(fixture_id: int, request: CommandRequest, answer: CommandAnswer) -> CommitInput:
    return CommitInput(fixture_id=fixture_id, request=request, answer=answer, saw=request.saw)


def _takes_over(rules: FootballState | CricketState, command: Command) -> bool:
    return isinstance(command, MatchSetMode) and command.mode == "desk" and rules.mode == "provider"


_PROVIDER_PERIODS: dict[MatchState, tuple[tuple[str, ...], bool]] = {
    MatchState.LIVE_FIRST_HALF: (("1H",), True),
    MatchState.HALF_TIME: (("1H",), False),
    MatchState.LIVE_SECOND_HALF: (("1H", "2H"), True),
    MatchState.EXTRA_TIME_BREAK: (("1H", "2H"), False),
    MatchState.FINISHED: (("1H", "2H"), False),
    MatchState.EXTRA_TIME: (("1H", "2H", "ET1"), True),
    MatchState.PENALTIES_BREAK: (("1H", "2H", "ET1", "ET2"), False),
    MatchState.PENALTIES: (("1H", "2H", "ET1", "ET2", "PEN"), True),
}


def _seed_from_provider(
    rules: FootballState | CricketState, progress: MatchProgress
) -> FootballState | CricketState:
    """When desks take over a provider-scored football match, they start from the provider's
    periods and score. The goals carry seq 0, which no command can target: VAR cannot review
    what the provider logged. Cricket desks take over from their own state: the provider's progress
    carries only the cricket line, not the innings, figures and crease the rules keep.
    """
    if not isinstance(rules, FootballState) or rules.game.periods:
        return rules
    periods, running = _PROVIDER_PERIODS.get(progress.state, ((), False))
    goals = tuple(GoalRecord(seq=0, side="home", kind="open_play") for _ in range(progress.home)) + tuple(
        GoalRecord(seq=0, side="away", kind="open_play") for _ in range(progress.away)
    )
    game = FootballGame.model_validate({"periods": periods, "running": running, "goals": goals})
    return rules.model_copy(update={"game": game})
