// The cricket pad: the innings as the log tells it (runs, wickets, the over, who is on strike and
// who bowls — the same folding as domain/rules/cricket_delivery.py, so strike rotation shown here is the
// server's), and the taps: the ball grid, extras, wickets, over ends with the next bowler, innings.

import { h } from "../shared/dom.js";

const WICKETS = [
  ["bowled", "Bowled"], ["caught", "Caught"], ["lbw", "LBW"], ["run_out", "Run out"], ["stumped", "Stumped"],
  ["hit_wicket", "Hit wicket"], ["obstructing_field", "Obstructing"], ["hit_ball_twice", "Hit twice"],
];
const NEEDS_FIELDER = new Set(["caught", "run_out", "stumped"]);
const STRIKER_ONLY = new Set(["bowled", "caught", "lbw", "stumped", "hit_wicket", "hit_ball_twice"]);
const MAX_INNINGS = 2;

export function cricketState(log) {
  const { kept } = log.standing();
  let game = { innings: 0, inPlay: false, finished: false, completed: [] };
  for (const entry of kept) {
    const body = entry.body || {};
    switch (body.code) {
      case "cricket.innings_start":
        game = {
          innings: game.innings + 1, inPlay: true, finished: false, completed: game.completed,
          batting: body.batting, runs: 0, wickets: 0, overs: 0, balls: 0, deliveries: 0, extras: 0,
          striker: body.striker_id ?? null, nonStriker: body.non_striker_id ?? null, bowler: body.bowler_id ?? null,
          lastOverBowler: null, out: [], thisOver: [],
        };
        break;
      case "cricket.ball":
        game = ball(game, body);
        break;
      case "cricket.over_end":
        game = { ...game, overs: game.overs + 1, balls: 0, deliveries: 0, striker: game.nonStriker, nonStriker: game.striker, bowler: null, lastOverBowler: game.bowler, thisOver: [] };
        break;
      case "cricket.bowler_change":
        game = { ...game, bowler: body.bowler_id };
        break;
      case "cricket.innings_end":
      case "cricket.declare": {
        const completed = [...game.completed, { batting: game.batting, runs: game.runs, wickets: game.wickets, overs: `${game.overs}.${game.balls}` }];
        game = { innings: game.innings, inPlay: false, finished: Boolean(body.match_over) || game.innings >= MAX_INNINGS, completed };
        break;
      }
      default:
        break;
    }
  }
  return game;
}

function ball(game, body) {
  const extra = body.extra || null;
  const extraRuns = extra ? extra.runs || 0 : 0;
  const penalty = extra && (extra.kind === "wide" || extra.kind === "no_ball") ? 1 : 0;
  const ran = (body.boundary ? 0 : body.runs || 0) + extraRuns;
  let striker = game.striker;
  let nonStriker = game.nonStriker;
  const crossed = ran % 2 === 1;
  if (crossed) [striker, nonStriker] = [nonStriker, striker];
  let { wickets, out } = game;
  if (body.wicket) {
    wickets += 1;
    const gone = body.wicket.batter_out === "non_striker" ? game.nonStriker : game.striker;
    if (gone) out = [...out, gone];
    const onStrikeEnd = (body.wicket.batter_out !== "non_striker") !== crossed;
    if (onStrikeEnd) striker = body.wicket.new_batter_id ?? null;
    else nonStriker = body.wicket.new_batter_id ?? null;
  }
  const legal = !extra || extra.kind === "bye" || extra.kind === "leg_bye";
  return {
    ...game,
    runs: game.runs + (body.runs || 0) + penalty + extraRuns,
    extras: game.extras + penalty + extraRuns,
    wickets, out, striker, nonStriker,
    balls: game.balls + (legal ? 1 : 0),
    deliveries: game.deliveries + 1,
    thisOver: [...game.thisOver, ballMark(body)],
  };
}

function ballMark(body) {
  if (body.wicket) return "W";
  if (body.extra) {
    const letter = { wide: "wd", no_ball: "nb", bye: "b", leg_bye: "lb" }[body.extra.kind];
    const total = (body.extra.runs || 0) + (body.runs || 0);
    return total ? `${total}${letter}` : letter;
  }
  if (body.boundary === "four") return "4";
  if (body.boundary === "six") return "6";
  return body.runs ? String(body.runs) : "•";
}

export function describeCricket(body, squads, teamName) {
  const name = (id) => {
    for (const side of ["home", "away"]) {
      const player = ((squads && squads[side] && squads[side].players) || []).find((p) => p.id === id);
      if (player) return player.name;
    }
    return id ? `#${id}` : "";
  };
  switch (body.code) {
    case "cricket.innings_start":
      return `${teamName(body.batting)} start their innings${body.striker_id ? `: ${name(body.striker_id)} and ${name(body.non_striker_id)}` : ""}${body.bowler_id ? `, ${name(body.bowler_id)} to bowl` : ""}`;
    case "cricket.ball": {
      const parts = [];
      if (body.boundary === "four") parts.push("FOUR");
      else if (body.boundary === "six") parts.push("SIX");
      else if (body.runs) parts.push(`${body.runs} run${body.runs === 1 ? "" : "s"}`);
      else if (!body.extra && !body.wicket) parts.push("Dot ball");
      if (body.extra) {
        const kind = { wide: "Wide", no_ball: "No-ball", bye: "Bye", leg_bye: "Leg-bye" }[body.extra.kind];
        parts.push(body.extra.runs ? `${kind} +${body.extra.runs}` : kind);
      }
      if (body.wicket) {
        const how = WICKETS.find(([kind]) => kind === body.wicket.kind);
        parts.push(`WICKET (${how ? how[1].toLowerCase() : body.wicket.kind}${body.wicket.fielder_id ? `, ${name(body.wicket.fielder_id)}` : ""})`);
        if (body.wicket.new_batter_id) parts.push(`${name(body.wicket.new_batter_id)} comes in`);
      }
      return parts.join(", ");
    }
    case "cricket.over_end":
      return "End of over";
    case "cricket.bowler_change":
      return `${name(body.bowler_id)} to bowl`;
    case "cricket.innings_end":
      return body.match_over ? "Innings ends; match over" : "Innings ends";
    case "cricket.declare":
      return "Declared";
    default:
      return null;
  }
}

function players(squads, side) {
  return (squads[side] && squads[side].players) || [];
}

function xi(squads, side) {
  const all = players(squads, side);
  const starting = all.filter((p) => p.starting);
  return starting.length ? starting : all;
}

function other(side) {
  return side === "home" ? "away" : "home";
}

export function cricketPad({ game, squads, teams, tap, ask }) {
  const button = (label, action, { disabled = false, shortcut, kind = "" } = {}) =>
    h("button", { type: "button", class: `pad-button ${kind}`, disabled: disabled || undefined, "aria-keyshortcuts": shortcut, "data-shortcut": shortcut, onclick: action }, label);
  const name = (id) => {
    const player = [...players(squads, "home"), ...players(squads, "away")].find((p) => p.id === id);
    return player ? player.name : id ? `#${id}` : "—";
  };

  if (!game.inPlay) {
    // Two steps: the batting side first, so the openers and the bowler come from the right XI.
    const startInnings = async () => {
      const batted = game.completed.map((inns) => inns.batting);
      const options = ["home", "away"].filter((side) => !batted.includes(side)).map((side) => ({ value: side, label: teams[side] }));
      let batting = options.length === 1 ? options[0].value : null;
      if (batting === null) {
        const chosen = await ask({ title: `Innings ${game.innings + 1}: who bats?`, fields: [{ name: "batting", label: "Batting", type: "choice", options, required: true }], submit: "Next" });
        if (!chosen) return;
        batting = chosen.batting;
      }
      const values = await ask({
        title: `Start innings ${game.innings + 1} — ${teams[batting]} batting`,
        fields: [
          { name: "striker_id", label: "Striker", type: "players", players: xi(squads, batting), optional: true },
          { name: "non_striker_id", label: "Non-striker", type: "players", players: xi(squads, batting), optional: true, autofocus: false },
          { name: "bowler_id", label: "Bowler", type: "players", players: xi(squads, other(batting)), optional: true, autofocus: false },
        ],
      });
      if (!values) return;
      const input = { batting };
      for (const field of ["striker_id", "non_striker_id", "bowler_id"]) if (values[field]) input[field] = values[field];
      tap("cricket.innings_start", input);
    };
    return {
      status: [],
      teams: [],
      periods: [game.finished ? h("p", { class: "period-note" }, "Match over") : button(`Start innings ${game.innings + 1}`, startInnings, { shortcut: "k", kind: "period" })],
      extra: [],
    };
  }

  const batting = game.batting;
  const fielding = other(batting);
  const overDone = game.balls >= 6;
  const needBowler = game.bowler === null && game.lastOverBowler !== null;
  const blocked = overDone || needBowler || game.wickets >= 10;

  const runs = (n, label, boundary, shortcut) =>
    button(label, () => tap("cricket.ball", boundary ? { runs: n, boundary } : { runs: n }), { disabled: blocked, shortcut, kind: boundary ? "goal" : "" });

  const extra = async (kind) => {
    const labels = { wide: "Wide", no_ball: "No-ball", bye: "Byes", leg_bye: "Leg-byes" };
    const choices = kind === "no_ball"
      ? [[0, "0"], [1, "1"], [2, "2"], [3, "3"], [4, "FOUR"], [6, "SIX"]]
      : kind === "wide" ? [[0, "0"], [1, "1"], [2, "2"], [3, "3"], [4, "4"]] : [[1, "1"], [2, "2"], [3, "3"], [4, "4"]];
    const values = await ask({
      title: labels[kind],
      fields: [{ name: "runs", label: kind === "no_ball" ? "Runs off the bat" : "Runs run", type: "choice", required: true, value: kind === "wide" || kind === "no_ball" ? 0 : undefined, options: choices.map(([value, label]) => ({ value, label })) }],
    });
    if (!values) return;
    if (kind === "no_ball") {
      const input = { runs: values.runs, extra: { kind } };
      if (values.runs === 4) input.boundary = "four";
      if (values.runs === 6) input.boundary = "six";
      tap("cricket.ball", input);
    } else {
      tap("cricket.ball", { runs: 0, extra: kind === "wide" ? { kind, runs: values.runs } : { kind, runs: values.runs } });
    }
  };

  const wicket = async () => {
    const atCrease = [game.striker, game.nonStriker];
    const waiting = xi(squads, batting).filter((p) => !game.out.includes(p.id) && !atCrease.includes(p.id));
    const values = await ask({
      title: `Wicket — ${teams[batting]}`,
      fields: [
        { name: "kind", label: "How out", type: "choice", required: true, options: WICKETS.map(([value, label]) => ({ value, label })) },
        { name: "batter_out", label: "Batter out", type: "choice", value: "striker", autofocus: false, options: [{ value: "striker", label: `Striker (${name(game.striker)})` }, { value: "non_striker", label: `Non-striker (${name(game.nonStriker)})` }] },
        { name: "fielder_id", label: "Fielder", type: "players", players: xi(squads, fielding), optional: true, autofocus: false },
        { name: "runs", label: "Runs completed (run out)", type: "choice", value: 0, autofocus: false, options: [0, 1, 2, 3].map((n) => ({ value: n, label: String(n) })) },
        ...(game.wickets + 1 < 10 ? [{ name: "new_batter_id", label: "New batter", type: "players", players: waiting, optional: true, autofocus: false }] : []),
      ],
    });
    if (!values) return;
    const out = STRIKER_ONLY.has(values.kind) ? "striker" : values.batter_out || "striker";
    const wicketInput = { kind: values.kind, batter_out: out };
    if (values.fielder_id && NEEDS_FIELDER.has(values.kind)) wicketInput.fielder_id = values.fielder_id;
    if (values.new_batter_id) wicketInput.new_batter_id = values.new_batter_id;
    const runsRun = values.kind === "run_out" || values.kind === "obstructing_field" ? values.runs || 0 : 0;
    tap("cricket.ball", { runs: runsRun, wicket: wicketInput });
  };

  const chooseBowler = async (title) => {
    const values = await ask({
      title,
      fields: [{ name: "bowler_id", label: "Bowler", type: "players", players: xi(squads, fielding).filter((p) => p.id !== game.lastOverBowler && p.id !== game.bowler), required: true }],
    });
    return values ? values.bowler_id : null;
  };

  const endOver = async () => {
    const next = await chooseBowler("End of over — next bowler");
    if (next === null) return;
    await tap("cricket.over_end", {});
    await tap("cricket.bowler_change", { bowler_id: next });
  };

  const changeBowler = async () => {
    const next = await chooseBowler("Change bowler");
    if (next !== null) tap("cricket.bowler_change", { bowler_id: next });
  };

  const endInnings = async () => {
    const values = await ask({
      title: "End the innings",
      fields: [{ name: "match_over", label: "The match", type: "choice", value: false, options: [{ value: false, label: "Goes on" }, { value: true, label: "Is over" }] }],
      submit: "End innings",
    });
    if (!values) return;
    tap("cricket.innings_end", values.match_over ? { match_over: true } : {});
  };

  const status = h("div", { class: "crease", "aria-label": "At the crease" },
    h("p", {}, h("span", { class: "label" }, "On strike "), h("strong", { "data-role": "striker" }, `${name(game.striker)}*`)),
    h("p", {}, h("span", { class: "label" }, "Non-striker "), h("span", { "data-role": "non-striker" }, name(game.nonStriker))),
    h("p", {}, h("span", { class: "label" }, "Bowling "), h("span", { "data-role": "bowler" }, name(game.bowler))),
    h("p", { class: "this-over", "aria-label": "This over" }, `This over: ${game.thisOver.join(" ") || "—"}`),
  );

  const grid = h("section", { class: "ball-grid", "aria-label": "Ball" },
    runs(0, "Dot", null, "0"), runs(1, "1", null, "1"), runs(2, "2", null, "2"), runs(3, "3", null, "3"),
    runs(4, "FOUR", "four", "4"), runs(6, "SIX", "six", "6"), runs(4, "4 run", null, undefined), runs(5, "5", null, "5"),
    button("Wide", () => extra("wide"), { disabled: blocked, shortcut: "w" }),
    button("No-ball", () => extra("no_ball"), { disabled: blocked, shortcut: "Shift+N" }),
    button("Bye", () => extra("bye"), { disabled: blocked, shortcut: "b" }),
    button("Leg-bye", () => extra("leg_bye"), { disabled: blocked, shortcut: "l" }),
    button("Wicket", wicket, { disabled: blocked, shortcut: "x", kind: "red" }),
  );

  return {
    status: [status],
    teams: [grid],
    periods: [
      button("End over", endOver, { disabled: !overDone, shortcut: "e", kind: "period" }),
      button("Change bowler", changeBowler, { shortcut: "Shift+B" }),
      button("End innings", endInnings, { kind: "period" }),
    ],
    extra: [],
  };
}
