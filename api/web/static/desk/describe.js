// Log entries in words: the desk's log, its conflict panel and the console all say the same.

import { describeFootball } from "./football.js";
import { describeCricket } from "./cricket.js";

export function describe(entry, squads, teamName) {
  const body = entry.body || {};
  const sport = describeFootball(body, squads, teamName) ?? describeCricket(body, squads, teamName);
  if (sport) return sport;
  switch (body.code) {
    case "match.commentary":
      return `“${body.text}”`;
    case "match.var":
      return `VAR: entry ${body.target_seq} ${body.decision}`;
    case "match.undo":
      return `Undo entry ${body.target_seq}`;
    case "match.set_mode":
      return body.mode === "desk" ? "Scoring handed to the desks" : "Scoring handed back to the provider";
    default:
      break;
  }
  if (entry.kind && entry.kind !== "command") {
    const what = body.type || body.state || body.code || "";
    return `${entry.kind}${what ? `: ${what}` : ""}`;
  }
  return body.code || entry.kind || "entry";
}

export function minuteOf(entry) {
  const minute = entry.minute ?? (entry.body ? entry.body.minute : undefined);
  if (minute === undefined || minute === null) return "";
  const extra = entry.extra_minute ?? (entry.body ? entry.body.extra_minute : undefined);
  return extra ? `${minute}+${extra}'` : `${minute}'`;
}
