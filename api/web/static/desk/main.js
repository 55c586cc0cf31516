// The scorer desk: signs in, reads the fixture's squads, follows the match's stream, and turns
// taps into outbox records that the sender delivers. The screen shows each tap at once (with a
// "sending" mark) and the true state from the stream.

import { call, ApiError, NetworkError } from "../shared/http.js";
import { h, byId, replace } from "../shared/dom.js";
import { loadToken, saveToken, forgetToken, looksLike } from "../shared/tokens.js";
import { MatchStream } from "../shared/stream.js";
import { Outbox, OPEN_STATES } from "./outbox.js";
import { Sender } from "./sender.js";
import { MatchLog, isUndoable } from "./log.js";
import { openForm } from "./form.js";
import { footballState, footballPad, clockNow } from "./football.js";
import { cricketState, cricketPad } from "./cricket.js";
import { describe, minuteOf } from "./describe.js";

const fixtureId = Number(location.pathname.split("/").filter(Boolean)[1]);
const desk = {
  token: loadToken("desk"),
  squads: null,
  match: null,
  version: 0,
  log: new MatchLog(),
  records: [],
  stream: "connecting",
  missing: false,
  lastClock: "",
};
let outbox;
let sender;
let stream;
let drawPending = false;

function teamName(side) {
  const team = desk.squads && desk.squads[side];
  return (team && (team.name || team.short_code)) || side;
}

function teams() {
  return { home: teamName("home"), away: teamName("away") };
}

// --- signing in -----------------------------------------------------------------------------

function showSignIn(problem) {
  byId("app").hidden = true;
  const panel = byId("signin");
  panel.hidden = false;
  byId("signin-problem").textContent = problem || "";
  byId("signin-token").focus();
}

byId("signin-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const token = byId("signin-token").value.trim();
  if (!looksLike("desk", token)) {
    byId("signin-problem").textContent = "That is not a desk token (it starts with sl_desk_).";
    return;
  }
  saveToken("desk", token);
  desk.token = token;
  byId("signin-token").value = "";
  await boot();
});

byId("signout").addEventListener("click", () => {
  forgetToken("desk");
  desk.token = null;
  if (sender) sender.paused = { code: "signed_out", message: "signed out" };
  showSignIn("Signed out. Taps not sent yet stay on this device and go out after you sign in again.");
});

// --- taps -------------------------------------------------------------------------------------

async function tap(code, input, extra = {}) {
  const record = await outbox.add(code, input, desk.version, extra);
  announce(`${describe({ body: { code, ...input } }, desk.squads, teamName)} — saved, sending`);
  return record;
}

async function undo() {
  const open = desk.records.filter((record) => OPEN_STATES.has(record.state));
  const last = open[open.length - 1];
  if (last) {
    if (last.key !== sender.inFlight && last.tries === 0) {
      await outbox.remove(last.key);
      announce("Last tap taken back before it was sent");
      return;
    }
    if (isUndoable(last.code, last.input)) {
      await tap("match.undo", {}, { undoes: last.key });
    }
    return;
  }
  const target = undoTarget();
  if (target === null) {
    announce("Nothing to undo");
    return;
  }
  await tap("match.undo", { target_seq: target });
}

// The newest undoable entry: from the log, or this desk's accepted tap the stream has not shown yet.
function undoTarget() {
  const logged = desk.log.undoTarget();
  let best = logged ? logged.seq : null;
  for (const record of desk.records) {
    const answered = record.state === "accepted" || record.state === "duplicate";
    if (answered && record.seq > desk.version && isUndoable(record.code, record.input) && (best === null || record.seq > best)) {
      best = record.seq;
    }
  }
  return best;
}

async function sendNote(event) {
  event.preventDefault();
  const field = byId("note-text");
  const text = field.value.trim();
  if (!text) return;
  const input = { text };
  const clock = currentClock();
  if (clock) {
    input.minute = clock.minute;
    if (clock.extra) input.extra_minute = clock.extra;
  }
  field.value = "";
  await tap("match.commentary", input);
}

async function resolveConflict(record, how) {
  if (how === "drop") {
    await outbox.remove(record.key);
    announce("Tap dropped");
  } else {
    const newest = Math.max(desk.version, ...(record.changed || []).map((entry) => entry.seq));
    await outbox.replace(record, newest);
    announce("Sent again on the new state");
  }
}

function announce(text) {
  byId("announce").textContent = text;
}

function currentClock() {
  if (!desk.squads || desk.squads.sport !== "football") return null;
  return clockNow(footballState(desk.log, desk.squads), Date.now());
}

// --- drawing ------------------------------------------------------------------------------------

function draw() {
  if (drawPending) return;
  drawPending = true;
  requestAnimationFrame(() => {
    drawPending = false;
    drawAll();
  });
}

function drawAll() {
  if (!desk.squads) return;
  drawBoard();
  drawBanner();
  drawConflict();
  drawPad();
  drawLog();
}

function waitingCount() {
  return desk.records.filter((record) => OPEN_STATES.has(record.state)).length;
}

function drawBoard() {
  const match = desk.match;
  const score = match ? match.score : { home: 0, away: 0 };
  const pending = { home: 0, away: 0 };
  for (const record of desk.records) {
    if (record.state === "waiting" && record.code === "football.goal") pending[record.input.side] += 1;
  }
  byId("home-name").textContent = teamName("home");
  byId("away-name").textContent = teamName("away");
  byId("home-code").textContent = desk.squads.home.short_code || "";
  byId("away-code").textContent = desk.squads.away.short_code || "";
  byId("home-score").textContent = String(score.home);
  byId("away-score").textContent = String(score.away);
  byId("home-pending").textContent = pending.home ? `+${pending.home} sending` : "";
  byId("away-pending").textContent = pending.away ? `+${pending.away} sending` : "";
  byId("match-state").textContent = match ? match.state.replaceAll("_", " ") : desk.missing ? "not started" : "…";
  byId("match-version").textContent = `v${desk.version}`;
  drawClock();
  if (desk.squads.sport === "cricket") {
    const game = cricketState(desk.log);
    byId("detail").textContent = game.inPlay
      ? `${teamName(game.batting)} ${game.runs}/${game.wickets} (${game.overs}.${game.balls} ov)`
      : game.completed.map((inns) => `${teamName(inns.batting)} ${inns.runs}/${inns.wickets}`).join(" · ");
  } else {
    byId("detail").textContent = "";
  }
}

function drawClock() {
  const clock = currentClock();
  const text = clock ? clock.display + (clock.extra ? ` +${clock.extra}` : "") : "";
  if (text !== desk.lastClock) {
    desk.lastClock = text;
    byId("match-clock").textContent = text;
  }
}

function drawBanner() {
  const waiting = waitingCount();
  const offline = sender.offline || desk.stream === "offline" || !navigator.onLine;
  const banner = byId("banner");
  let text = "";
  let kind = "";
  if (sender.paused) {
    text = `Not sending: ${sender.paused.message}. ${waiting} tap${waiting === 1 ? "" : "s"} waiting on this device.`;
    kind = "stopped";
  } else if (offline) {
    text = `Offline — ${waiting} tap${waiting === 1 ? "" : "s"} waiting. They are saved on this device and go out when the network is back.`;
    kind = "offline";
  } else if (waiting) {
    text = `Sending ${waiting} tap${waiting === 1 ? "" : "s"}…`;
    kind = "sending";
  }
  banner.textContent = text;
  banner.dataset.kind = kind;
  banner.dataset.waiting = String(waiting);
  byId("connection").textContent = desk.stream === "live" ? "Live" : desk.stream === "missing" ? "Waiting for kick-off" : "Reconnecting…";
  byId("connection").dataset.state = desk.stream;
}

function drawConflict() {
  const panel = byId("conflict");
  const head = desk.records.find((record) => OPEN_STATES.has(record.state));
  if (!head || head.state !== "conflict") {
    panel.hidden = true;
    replace(panel);
    return;
  }
  panel.hidden = false;
  const changed = (head.changed || []).map((entry) =>
    h("li", { "data-seq": entry.seq }, `${minuteOf(entry)} ${describe(entry, desk.squads, teamName)}`.trim()),
  );
  replace(
    panel,
    h("h2", {}, "Someone else scored first"),
    h("p", {}, `Your tap “${describe({ body: { code: head.code, ...head.input } }, desk.squads, teamName)}” was not logged: since you tapped, the log got`),
    h("ul", { class: "changed" }, changed),
    h("p", {}, "The taps after it wait until you choose."),
    h("div", { class: "conflict-actions" },
      h("button", { type: "button", class: "primary", "data-action": "resend", onclick: () => resolveConflict(head, "resend") }, "Send it on the new state"),
      h("button", { type: "button", "data-action": "drop", onclick: () => resolveConflict(head, "drop") }, "Drop my tap"),
    ),
  );
}

// Redrawn only when the log moved, so a focused button keeps its focus between changes.
function drawPad() {
  if (desk.padVersion === desk.version && desk.padDrawn) return;
  desk.padVersion = desk.version;
  desk.padDrawn = true;
  const common = { teams: teams(), squads: desk.squads, tap, ask: openForm };
  const pad =
    desk.squads.sport === "cricket"
      ? cricketPad({ ...common, game: cricketState(desk.log) })
      : footballPad({ ...common, state: footballState(desk.log, desk.squads), clock: currentClock });
  replace(byId("pad-status"), pad.status || []);
  replace(byId("pad-periods"), pad.periods);
  replace(byId("pad-teams"), pad.teams);
  replace(
    byId("pad-match"),
    pad.extra,
    h("button", { type: "button", class: "pad-button", "data-shortcut": "u", "aria-keyshortcuts": "u", onclick: undo }, "Undo last"),
  );
}

function drawLog() {
  const rows = [];
  const { undone, overturned } = desk.log.standing();
  const bySeq = new Map();
  for (const record of desk.records) if (Number.isInteger(record.seq)) bySeq.set(record.seq, record);
  for (const record of [...desk.records].reverse()) {
    if (record.state === "accepted" || record.state === "duplicate") {
      if (record.seq <= desk.version) continue;
    }
    if (record.state === "refused" && Date.now() - Date.parse(record.answeredAt || record.createdAt) > 10 * 60000) continue;
    const inFlight = record.key === sender.inFlight;
    const status = {
      waiting: inFlight ? "sending…" : record.tries ? "waiting to resend" : "waiting",
      conflict: "conflict: choose above",
      refused: `refused: ${record.reason ? record.reason.message : ""}`,
      accepted: `✓ logged (${record.seq})`,
      duplicate: `✓ logged (${record.seq})`,
    }[record.state];
    rows.push(
      h("li", { class: `log-row pending ${record.state}`, "data-key": record.key, "data-state": inFlight ? "sending" : record.state },
        h("span", { class: "log-minute" }, minuteOf({ body: record.input })),
        h("span", { class: "log-text" }, describe({ body: { code: record.code, ...record.input } }, desk.squads, teamName)),
        h("span", { class: "log-mark" }, status),
      ),
    );
  }
  for (const entry of desk.log.ordered().reverse()) {
    const own = bySeq.get(entry.seq);
    const marks = [];
    if (undone.has(entry.seq)) marks.push("undone");
    if (overturned.has(entry.seq)) marks.push("overturned");
    rows.push(
      h("li", { class: `log-row ${marks.join(" ")}`, "data-seq": entry.seq, "data-state": own ? "mine" : "logged" },
        h("span", { class: "log-minute" }, minuteOf(entry)),
        h("span", { class: "log-text" }, describe(entry, desk.squads, teamName)),
        h("span", { class: "log-mark" }, [own ? "✓ this desk" : entry.origin || "", ...marks].filter(Boolean).join(" · ")),
      ),
    );
  }
  replace(byId("log"), rows);
}

// --- keyboard ----------------------------------------------------------------------------------

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target;
  if (target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement || document.querySelector("dialog[open]")) return;
  if (event.key === "/") {
    event.preventDefault();
    byId("note-text").focus();
    return;
  }
  const name = event.shiftKey && event.key.length === 1 ? `Shift+${event.key.toUpperCase()}` : event.key;
  const button = document.querySelector(`#pad [data-shortcut="${CSS.escape(name)}"]:not([disabled])`);
  if (button) {
    event.preventDefault();
    button.click();
  }
});

// The squads are kept on the device too, so a desk reloaded while offline can still score.
function rememberSquads(squads) {
  try {
    localStorage.setItem(`scoreline.squads.${fixtureId}`, JSON.stringify(squads));
  } catch {
    // Storage full or disabled: the desk still works online.
  }
}

function rememberedSquads() {
  try {
    return JSON.parse(localStorage.getItem(`scoreline.squads.${fixtureId}`) || "null");
  } catch {
    return null;
  }
}

// The log as last streamed, so a desk reloaded offline shows the true last state and its taps
// carry the `saw` it really showed (not 0).
function rememberLog() {
  try {
    const entries = desk.log.ordered();
    localStorage.setItem(`scoreline.log.${fixtureId}`, JSON.stringify({ version: desk.version, match: desk.match, entries }));
  } catch {
    // Storage full or disabled: a reload reads the whole log again.
  }
}

function rememberedLog() {
  try {
    return JSON.parse(localStorage.getItem(`scoreline.log.${fixtureId}`) || "null");
  } catch {
    return null;
  }
}

// --- start --------------------------------------------------------------------------------------

async function refreshRecords() {
  desk.records = await outbox.all();
  draw();
}

async function boot() {
  if (!Number.isInteger(fixtureId) || fixtureId < 1) {
    showSignIn("This address names no fixture: open /desk/<fixture id>.");
    return;
  }
  if (!desk.token) {
    showSignIn("");
    return;
  }
  try {
    desk.squads = await call(`/v1/fixtures/${fixtureId}/squads`, { token: desk.token });
    rememberSquads(desk.squads);
  } catch (error) {
    if (error instanceof ApiError && (error.code === "invalid_token" || error.code === "unauthorized")) {
      forgetToken("desk");
      desk.token = null;
      showSignIn("That token is unknown or revoked. Ask your operator for a new one.");
      return;
    }
    if (error instanceof ApiError) {
      showSignIn(error.message);
      return;
    }
    if (!(error instanceof NetworkError)) throw error;
    // Offline at (re)load: the squads this device read before are enough to score with.
    desk.squads = desk.squads || rememberedSquads();
    if (!desk.squads) {
      showSignIn("The API cannot be reached and this device has not opened this match before. Check the network.");
      return;
    }
  }
  byId("signin").hidden = true;
  byId("app").hidden = false;
  byId("app").dataset.sport = desk.squads.sport;
  document.title = `${teamName("home")} vs ${teamName("away")} — Scoreline desk`;
  if (!outbox) {
    outbox = await Outbox.open(fixtureId);
    outbox.onChange(refreshRecords);
    sender = new Sender({
      outbox,
      fixtureId,
      token: () => desk.token,
      known: () => desk.log.entries,
      onChange: draw,
      onAnswer: (record) => {
        if (record.state === "refused") announce(`Refused: ${record.reason ? record.reason.message : "no reason given"}`);
        if (record.state === "conflict") announce("Conflict: someone else changed the match first");
        if (record.state === "paused") {
          if (record.reason && (record.reason.code === "invalid_token" || record.reason.code === "unauthorized")) {
            forgetToken("desk");
            desk.token = null;
            showSignIn("The desk token stopped working. Taps not sent yet stay on this device; sign in again to send them.");
          }
        }
        draw();
      },
    });
    const kept = rememberedLog();
    if (kept) {
      desk.match = kept.match;
      desk.version = kept.version;
      desk.log.add(kept.entries);
    }
    stream = new MatchStream(fixtureId, {
      version: desk.version,
      onValue: (value) => {
        desk.match = value.match;
        desk.version = value.version;
        desk.missing = false;
        desk.log.add(value.entries);
        rememberLog();
        draw();
      },
      onReset: () => {
        desk.log = new MatchLog();
        desk.version = 0;
      },
      onStatus: (status) => {
        const wasDown = desk.stream !== "live";
        desk.stream = status;
        if (status === "live" && wasDown) sender.retryNow();
        draw();
      },
      onMissing: () => {
        desk.missing = true;
      },
    });
    await refreshRecords();
    sender.start();
    stream.start();
    byId("note-form").addEventListener("submit", sendNote);
    window.addEventListener("online", () => {
      sender.retryNow();
      stream.retryNow();
    });
    window.addEventListener("offline", draw);
    setInterval(drawClock, 1000);
    setInterval(() => outbox.prune(), 60000);
  } else {
    sender.resume();
  }
  draw();
}

boot();
