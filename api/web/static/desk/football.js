// The football pad: what the log says about the match (periods, players on the pitch, cards),
// and the taps a scorer makes, each turned into exactly the command shape the API takes
// (domain/rules/commands.py): football.period_start/end, goal, missed_penalty, card,
// substitution, corner, shootout_kick, and the shared match.var / match.undo / commentary.

import { h } from "../shared/dom.js";

const PERIOD = {
  "1H": { name: "First half", base: 0, length: 45 },
  "2H": { name: "Second half", base: 45, length: 45 },
  ET1: { name: "Extra time, first half", base: 90, length: 15 },
  ET2: { name: "Extra time, second half", base: 105, length: 15 },
  PEN: { name: "Penalty shootout", base: 120, length: 0 },
};

export function periodName(period) {
  return PERIOD[period] ? PERIOD[period].name : period;
}

export function footballState(log, squads) {
  const { kept, overturned } = log.standing();
  const state = {
    periods: [],
    running: false,
    goals: [],
    bookings: [],
    subs: [],
    corners: { home: 0, away: 0 },
    shootout: { taken: { home: 0, away: 0 }, scored: { home: 0, away: 0 } },
    squads,
  };
  for (const entry of kept) {
    const body = entry.body || {};
    switch (body.code) {
      case "football.period_start":
        state.periods.push({ period: body.period, at: Date.parse(entry.created_at) });
        state.running = true;
        break;
      case "football.period_end":
        state.running = false;
        break;
      case "football.goal":
        state.goals.push({ seq: entry.seq, side: body.side, kind: body.kind, player: body.player_id, minute: body.minute, overturned: overturned.has(entry.seq) });
        break;
      case "football.card":
        state.bookings.push({ seq: entry.seq, side: body.side, player: body.player_id, color: body.color, minute: body.minute, overturned: overturned.has(entry.seq) });
        break;
      case "football.substitution":
        state.subs.push({ side: body.side, on: body.player_on, off: body.player_off });
        break;
      case "football.corner":
        state.corners[body.side] += 1;
        break;
      case "football.shootout_kick":
        state.shootout.taken[body.side] += 1;
        if (body.scored) state.shootout.scored[body.side] += 1;
        break;
      default:
        break;
    }
  }
  state.score = {
    home: state.goals.filter((goal) => goal.side === "home" && !goal.overturned).length,
    away: state.goals.filter((goal) => goal.side === "away" && !goal.overturned).length,
  };
  state.current = state.running ? state.periods[state.periods.length - 1] : null;
  return state;
}

// The periods that may start now: what `domain.rules.football.next_periods` allows when the
// competition's knockout rule is not known (a level score after 90' may go on, if the desk says).
export function nextPeriods(state) {
  if (state.running) return [];
  const played = state.periods.map((p) => p.period);
  if (!played.length) return ["1H"];
  const last = played[played.length - 1];
  const level = state.score.home === state.score.away;
  if (last === "1H") return ["2H"];
  if (last === "ET1") return ["ET2"];
  if (last === "ET2") return level ? ["PEN"] : [];
  if (last === "2H" && level) return ["ET1", "PEN"];
  return [];
}

export function playerStatus(state, side, id) {
  if (state.bookings.some((b) => b.side === side && b.player === id && b.color !== "yellow" && !b.overturned)) return "sent_off";
  const subs = state.subs.filter((sub) => sub.side === side);
  if (subs.some((sub) => sub.off === id)) return "off";
  if (subs.some((sub) => sub.on === id)) return "on";
  const player = (state.squads[side].players || []).find((p) => p.id === id);
  if (!player) return "stranger";
  return player.starting ? "on" : "bench";
}

export function onPitch(state, side) {
  return (state.squads[side].players || []).filter((p) => playerStatus(state, side, p.id) === "on");
}

function onBench(state, side) {
  return (state.squads[side].players || []).filter((p) => playerStatus(state, side, p.id) === "bench");
}

function hasYellow(state, side, id) {
  return state.bookings.some((b) => b.side === side && b.player === id && b.color === "yellow" && !b.overturned);
}

// The match minute now, as a scorer writes it: the 23rd minute is 22:xx on the clock; past the
// period's length it is 45 + 2 (`extra_minute`). Null when no period is running.
export function clockNow(state, now) {
  if (!state.current || state.current.period === "PEN") return null;
  const period = PERIOD[state.current.period];
  const elapsed = Math.max(0, now - state.current.at);
  const minute = Math.floor(elapsed / 60000) + 1;
  const seconds = Math.floor(elapsed / 1000);
  const shown = period.base * 60 + seconds;
  return {
    minute: period.base + Math.min(minute, period.length),
    extra: minute > period.length ? Math.min(minute - period.length, 30) : null,
    display: `${String(Math.floor(shown / 60)).padStart(2, "0")}:${String(shown % 60).padStart(2, "0")}`,
  };
}

function other(side) {
  return side === "home" ? "away" : "home";
}

function timed(clock, input) {
  const minute = clock ? clock.minute : 0;
  const timedInput = { ...input, minute };
  if (clock && clock.extra) timedInput.extra_minute = clock.extra;
  return timedInput;
}

function minuteFields(clock) {
  return [
    { name: "minute", label: "Minute", type: "number", min: 0, max: 150, value: clock ? clock.minute : 0 },
    { name: "extra_minute", label: "Added minute", type: "number", min: 0, max: 30, value: clock && clock.extra ? clock.extra : undefined },
  ];
}

function withMinute(input, values) {
  const out = { ...input, minute: values.minute ?? 0 };
  if (values.extra_minute) out.extra_minute = values.extra_minute;
  return out;
}

function playerName(state, side, id) {
  const player = (state.squads[side].players || []).find((p) => p.id === id);
  return player ? player.name : id ? `#${id}` : "";
}

// Describes a log entry's body in words, for the log and the conflict panel.
export function describeFootball(body, squads, teamName) {
  const state = { squads };
  const name = (side, id) => playerName(state, side, id);
  switch (body.code) {
    case "football.period_start":
      return `${periodName(body.period)} starts`;
    case "football.period_end":
      return `${periodName(body.period)} ends`;
    case "football.goal": {
      const scorerSide = body.kind === "own_goal" ? other(body.side) : body.side;
      const kind = body.kind === "penalty" ? " (penalty)" : body.kind === "own_goal" ? " (own goal)" : "";
      const who = body.player_id ? ` ${name(scorerSide, body.player_id)}` : "";
      const assist = body.assist_id ? `, assist ${name(body.side, body.assist_id)}` : "";
      return `Goal ${teamName(body.side)}${kind}:${who || " scorer not known"}${assist}`;
    }
    case "football.missed_penalty":
      return `Penalty missed, ${teamName(body.side)}${body.player_id ? `: ${name(body.side, body.player_id)}` : ""}`;
    case "football.card": {
      const color = { yellow: "Yellow card", second_yellow: "Second yellow", red: "Red card" }[body.color];
      return `${color}, ${teamName(body.side)}: ${name(body.side, body.player_id)}`;
    }
    case "football.substitution":
      return `Substitution, ${teamName(body.side)}: ${name(body.side, body.player_on)} on for ${name(body.side, body.player_off)}`;
    case "football.corner":
      return `Corner, ${teamName(body.side)}`;
    case "football.shootout_kick":
      return `Shootout kick, ${teamName(body.side)}: ${body.scored ? "scored" : "missed"}`;
    default:
      return null;
  }
}

// The pad's controls; `tap(code, input)` saves a tap, `ask(form)` opens the detail dialog, and
// `clock()` is the match clock at the moment of the tap.
export function footballPad({ state, teams, clock, tap, ask }) {
  const inPlay = state.running && state.current.period !== "PEN";
  const shootout = state.running && state.current.period === "PEN";
  const kickedOff = state.periods.length > 0;

  const goal = async (side, kind) => {
    const scorerSide = kind === "own_goal" ? other(side) : side;
    const fields = [
      { name: "player_id", label: kind === "own_goal" ? `Own goal by (${teams[scorerSide]})` : "Scorer", type: "players", players: onPitch(state, scorerSide), optional: true },
    ];
    if (kind === "open_play") {
      fields.push({ name: "assist_id", label: "Assist", type: "players", players: onPitch(state, side), optional: true, optionalLabel: "No assist", autofocus: false });
    }
    const title = kind === "penalty" ? `Penalty scored — ${teams[side]}` : kind === "own_goal" ? `Own goal — counts for ${teams[side]}` : `Goal — ${teams[side]}`;
    const values = await ask({ title, fields: [...fields, ...minuteFields(clock())] });
    if (!values) return;
    const input = withMinute({ side, kind }, values);
    if (values.player_id) input.player_id = values.player_id;
    if (values.assist_id && values.assist_id !== values.player_id) input.assist_id = values.assist_id;
    tap("football.goal", input);
  };

  const missedPenalty = async (side) => {
    const values = await ask({ title: `Penalty missed — ${teams[side]}`, fields: [{ name: "player_id", label: "Taker", type: "players", players: onPitch(state, side), optional: true }, ...minuteFields(clock())] });
    if (!values) return;
    const input = withMinute({ side }, values);
    if (values.player_id) input.player_id = values.player_id;
    tap("football.missed_penalty", input);
  };

  const card = async (side, color) => {
    const players = (state.squads[side].players || []).filter((p) => playerStatus(state, side, p.id) !== "sent_off");
    const values = await ask({
      title: `${color === "red" ? "Red" : "Yellow"} card — ${teams[side]}`,
      fields: [{ name: "player_id", label: "Player", type: "players", players, required: true }, ...minuteFields(clock())],
    });
    if (!values) return;
    const shown = color === "yellow" && hasYellow(state, side, values.player_id) ? "second_yellow" : color;
    tap("football.card", withMinute({ side, player_id: values.player_id, color: shown }, values));
  };

  const substitution = async (side) => {
    const values = await ask({
      title: `Substitution — ${teams[side]}`,
      fields: [
        { name: "player_off", label: "Off", type: "players", players: onPitch(state, side), required: true },
        { name: "player_on", label: "On", type: "players", players: onBench(state, side), required: true, autofocus: false },
        ...minuteFields(clock()),
      ],
    });
    if (!values) return;
    tap("football.substitution", withMinute({ side, player_on: values.player_on, player_off: values.player_off }, values));
  };

  const kick = async (side, scored) => {
    tap("football.shootout_kick", { side, scored });
  };

  const button = (label, action, { disabled = false, shortcut, kind = "" } = {}) =>
    h("button", { type: "button", class: `pad-button ${kind}`, disabled: disabled || undefined, "aria-keyshortcuts": shortcut, "data-shortcut": shortcut, onclick: action }, label);

  const column = (side) => {
    const shift = side === "away";
    const key = (letter) => (shift ? `Shift+${letter.toUpperCase()}` : letter);
    const children = shootout
      ? [
          button("Kick scored", () => kick(side, true), { kind: "goal" }),
          button("Kick missed", () => kick(side, false)),
        ]
      : [
          button("Goal", () => goal(side, "open_play"), { disabled: !inPlay, shortcut: key("g"), kind: "goal" }),
          button("Penalty scored", () => goal(side, "penalty"), { disabled: !inPlay, shortcut: key("p") }),
          button("Penalty missed", () => missedPenalty(side), { disabled: !inPlay, shortcut: key("m") }),
          button("Own goal", () => goal(side, "own_goal"), { disabled: !inPlay, shortcut: key("o") }),
          button("Yellow card", () => card(side, "yellow"), { disabled: !kickedOff, shortcut: key("y"), kind: "yellow" }),
          button("Red card", () => card(side, "red"), { disabled: !kickedOff, shortcut: key("r"), kind: "red" }),
          button("Substitution", () => substitution(side), { disabled: !kickedOff, shortcut: key("s") }),
          button("Corner", () => tap("football.corner", timed(clock(), { side })), { disabled: !inPlay, shortcut: key("c") }),
        ];
    return h("section", { class: `team-pad ${side}`, "aria-label": `${teams[side]} (${side})` }, h("h2", { class: "team-name" }, teams[side]), h("div", { class: "pad-grid" }, children));
  };

  const periods = state.running
    ? [button(`End ${periodName(state.current.period).toLowerCase()}`, () => tap("football.period_end", { period: state.current.period }), { shortcut: "k", kind: "period" })]
    : nextPeriods(state).map((period, i) =>
        button(`Start ${periodName(period).toLowerCase()}`, () => tap("football.period_start", { period }), { shortcut: i === 0 ? "k" : undefined, kind: "period" }),
      );
  if (!periods.length) periods.push(h("p", { class: "period-note" }, "Full time"));

  const review = async () => {
    const targets = [...state.goals.map((g) => ({ ...g, what: "goal" })), ...state.bookings.map((b) => ({ ...b, what: "card" }))]
      .filter((t) => !t.overturned)
      .sort((a, b) => b.seq - a.seq);
    if (!targets.length) return;
    const values = await ask({
      title: "VAR review",
      fields: [
        {
          name: "target_seq",
          label: "Decision reviewed",
          type: "choice",
          required: true,
          options: targets.map((t) => ({
            value: t.seq,
            label: `${t.what === "goal" ? "Goal" : t.color.replace("_", " ")} ${teams[t.side]}${t.player ? `, ${playerName(state, t.what === "goal" && t.kind === "own_goal" ? other(t.side) : t.side, t.player)}` : ""} ${t.minute ?? ""}'`,
          })),
        },
        { name: "decision", label: "Decision", type: "choice", value: "overturned", options: [{ value: "overturned", label: "Overturned" }, { value: "confirmed", label: "Confirmed" }], autofocus: false },
      ],
    });
    if (!values) return;
    tap("match.var", { target_seq: values.target_seq, decision: values.decision || "overturned" });
  };

  return {
    teams: [column("home"), column("away")],
    periods,
    extra: [button("VAR review", review, { disabled: !kickedOff, shortcut: "v" })],
  };
}
