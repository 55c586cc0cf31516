// The operator console: every match (state, mode, version, last change, Live Activities, its
// workflow in the Temporal UI) and, per match, the scoring mode switch, a replay, and its desks
// with their tokens. Scores and states move live from `/v1/stream?matches=live`; the rest of a
// row (modes, counts) is re-read shortly after any change and every 15 s. A cricket row reads like
// a scoreboard: `/v1/console/matches` carries only each side's runs, so its innings and target come
// from the match's public view (the stream's values, else `GET /v1/matches/{id}`). The Webhooks
// panel lists every partner endpoint (state, lag, owed, last failure) from `/v1/ops/webhooks`,
// re-read with the rest, and resumes a paused one.

import { call, request, ApiError } from "../shared/http.js";
import { h, byId, replace } from "../shared/dom.js";
import { loadToken, saveToken, forgetToken, looksLike } from "../shared/tokens.js";

const REFRESH_MS = 15000;
const state = { token: loadToken("operator"), matches: [], webhooks: [], webhookNotes: new Map(), open: new Set(), desks: new Map(), tokens: new Map(), notes: new Map(), views: new Map() };
let refreshTimer = null;
let started = false;

function notice(text, kind = "") {
  const element = byId("notice");
  element.textContent = text;
  element.dataset.kind = kind;
}

function showSignIn(problem) {
  byId("app").hidden = true;
  byId("signin").hidden = false;
  byId("signin-problem").textContent = problem || "";
  byId("signin-token").focus();
}

byId("signin-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const token = byId("signin-token").value.trim();
  if (!looksLike("operator", token)) {
    byId("signin-problem").textContent = "That is not an operator token (it starts with sl_op_).";
    return;
  }
  saveToken("operator", token);
  state.token = token;
  byId("signin-token").value = "";
  await boot();
});

byId("signout").addEventListener("click", () => {
  forgetToken("operator");
  state.token = null;
  showSignIn("Signed out.");
});

async function api(path, options = {}) {
  try {
    return await call(path, { ...options, token: state.token });
  } catch (error) {
    if (error instanceof ApiError && (error.code === "invalid_token" || error.code === "unauthorized" || error.code === "operators_only")) {
      forgetToken("operator");
      state.token = null;
      showSignIn(error.code === "operators_only" ? "That token is not an operator's." : "That token is unknown or revoked.");
    }
    throw error;
  }
}

async function refresh() {
  clearTimeout(refreshTimer);
  try {
    const [answer, hooks] = await Promise.all([api("/v1/console/matches"), api("/v1/ops/webhooks")]);
    state.matches = answer.matches;
    state.webhooks = hooks.endpoints;
    for (const id of state.open) await loadDesks(id);
    await loadCricketViews();
    draw();
    byId("connection").dataset.state = "live";
  } catch (error) {
    if (!(error instanceof ApiError)) byId("connection").dataset.state = "offline";
  } finally {
    refreshTimer = setTimeout(refresh, REFRESH_MS);
  }
}

function soon() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(refresh, 700);
}

async function loadDesks(id) {
  const answer = await api(`/v1/console/matches/${id}/desks`);
  state.desks.set(id, answer.desks);
}

// The views of cricket matches whose latest version the stream has not brought (loaded, or not live).
async function loadCricketViews() {
  const stale = state.matches.filter((m) => m.sport === "cricket" && (state.views.get(m.id)?.version ?? -1) < m.version);
  await Promise.all(stale.map(async (m) => {
    try {
      remember(m.id, await call(`/v1/matches/${m.id}`));
    } catch {
      // The row keeps its last view, or a dash, until the next refresh.
    }
  }));
}

function remember(id, view) {
  if ((state.views.get(id)?.version ?? -1) <= view.version) state.views.set(id, view);
}

// --- actions ------------------------------------------------------------------------------------

async function switchMode(match) {
  const mode = match.mode === "desk" ? "provider" : "desk";
  const answer = await request(`/v1/matches/${match.id}/commands`, {
    method: "POST",
    token: state.token,
    body: { key: crypto.randomUUID(), code: "match.set_mode", input: { mode }, saw: match.version },
  });
  const body = answer.body || {};
  const outcome = body.outcome === "duplicate" && body.answer ? body.answer : body;
  if (outcome.outcome === "accepted") state.notes.set(match.id, `Scoring handed to the ${mode === "desk" ? "desks" : "provider"}.`);
  else if (outcome.reason) state.notes.set(match.id, `Not switched: ${outcome.reason.message}`);
  else if (outcome.outcome === "conflict") state.notes.set(match.id, "Not switched: the match moved on; look again and retry.");
  else state.notes.set(match.id, `Not switched: ${(body.error && body.error.message) || `HTTP ${answer.status}`}`);
  await refresh();
}

async function replay(match) {
  try {
    const started = await api(`/v1/console/matches/${match.id}/replay`, { method: "POST" });
    state.notes.set(match.id, `Replay started: ${started.workflow_id}`);
    state.replays = { ...(state.replays || {}), [match.id]: started };
  } catch (error) {
    state.notes.set(match.id, `Replay not started: ${error.message}`);
  }
  draw();
}

async function createDesk(match, name) {
  try {
    const created = await api(`/v1/console/matches/${match.id}/desks`, { method: "POST", body: { name } });
    state.tokens.set(match.id, created);
    await loadDesks(match.id);
  } catch (error) {
    state.notes.set(match.id, `No desk made: ${error.message}`);
  }
  draw();
}

async function revokeDesk(match, name) {
  try {
    await api(`/v1/console/desks/${encodeURIComponent(name)}/revoke`, { method: "POST" });
    state.notes.set(match.id, `Desk “${name}” revoked (its token stops working within 5 s).`);
    await loadDesks(match.id);
  } catch (error) {
    state.notes.set(match.id, `Not revoked: ${error.message}`);
  }
  draw();
}

async function toggle(match) {
  if (state.open.has(match.id)) state.open.delete(match.id);
  else {
    state.open.add(match.id);
    await loadDesks(match.id);
  }
  draw();
}

async function resumeWebhook(endpoint) {
  try {
    const resumed = await api(`/v1/ops/webhooks/${endpoint.id}/resume`, { method: "POST" });
    state.webhooks = state.webhooks.map((each) => (each.id === resumed.id ? resumed : each));
    state.webhookNotes.set(endpoint.id, "Resumed: sending from the first undelivered change.");
  } catch (error) {
    state.webhookNotes.set(endpoint.id, `Not resumed: ${error.message}`);
  }
  drawWebhooks();
}

// --- drawing ------------------------------------------------------------------------------------

function ago(iso) {
  if (!iso) return "—";
  const seconds = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  return new Date(iso).toLocaleString();
}

function scoreText(match) {
  if (match.sport !== "cricket") return `${match.score.home}–${match.score.away}`;
  const view = state.views.get(match.id);
  const innings = view && view.innings ? view.innings : [];
  const current = innings.findLast((each) => each.side === view.batting_side) || innings.at(-1);
  if (!current) return "—";
  const chasing = current.target !== null && !view.result;
  return `${current.runs}/${current.wickets} (${current.overs})${chasing ? ` · target ${current.target}` : ""}`;
}

function lagText(seconds) {
  if (seconds < 1) return "none";
  if (seconds < 120) return `${Math.round(seconds)} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

function drawWebhooks() {
  const rows = state.webhooks.map((endpoint) =>
    h("tr", { "data-endpoint": endpoint.id, "data-state": endpoint.state },
      h("td", { class: "partner", "data-label": "Partner" }, endpoint.partner),
      h("td", { class: "url", "data-label": "URL" }, endpoint.url),
      h("td", { class: "state", "data-label": "State" }, endpoint.state === "paused" ? `paused: ${endpoint.paused_reason || "no reason given"}` : "active"),
      h("td", { class: "num lag", "data-label": "Lag" }, lagText(endpoint.lag_seconds)),
      h("td", { class: "num owed", "data-label": "Owed" }, endpoint.owed),
      h("td", { class: "failure", "data-label": "Last failure" }, endpoint.last_failure ? `${endpoint.last_failure}, ${ago(endpoint.last_failure_at)}` : "—"),
      h("td", {},
        endpoint.state === "paused" ? h("button", { type: "button", "aria-label": `Resume ${endpoint.url}`, onclick: () => resumeWebhook(endpoint) }, "Resume") : null,
        h("span", { class: "note", role: "status" }, state.webhookNotes.get(endpoint.id) || ""),
      ),
    ));
  if (rows.length === 0) rows.push(h("tr", {}, h("td", { colspan: 7, class: "empty" }, "No partner webhook endpoints.")));
  replace(byId("webhooks"), rows);
}

function draw() {
  drawWebhooks();
  const rows = [];
  for (const match of state.matches) {
    const counts = match.live_activities;
    const open = state.open.has(match.id);
    rows.push(
      h("tr", { "data-fixture": match.id },
        h("td", { class: "name", "data-label": "Match" }, match.name, h("span", { class: "sub" }, `${match.sport}${match.competition ? ` · ${match.competition}` : ""} · ${match.id}`)),
        h("td", { class: "state", "data-label": "State" }, match.state.replaceAll("_", " ")),
        h("td", { class: "num score", "data-label": "Score" }, scoreText(match)),
        h("td", { class: "mode", "data-mode": match.mode, "data-label": "Mode" }, match.mode),
        h("td", { class: "num version", "data-label": "Version" }, `v${match.version}`),
        h("td", { class: "changed", "data-label": "Last change" }, h("time", { datetime: match.last_change || "" }, ago(match.last_change))),
        h("td", { class: "activities", "data-label": "Live Activities" }, `${counts.followers} following · ${counts.active} active · ${counts.pushes_sent} pushes`),
        h("td", { "data-label": "Workflow" }, match.workflow_url ? h("a", { href: match.workflow_url, target: "_blank", rel: "noopener" }, match.workflow_id) : match.workflow_id),
        h("td", {}, h("button", { type: "button", "aria-expanded": String(open), "aria-controls": `detail-${match.id}`, onclick: () => toggle(match) }, open ? "Close" : "Manage")),
      ),
    );
    if (open) rows.push(detailRow(match));
  }
  // A redraw must not eat what the operator is typing (a live change can come at any moment).
  const active = document.activeElement;
  const typing = active instanceof HTMLInputElement && active.id ? { id: active.id, value: active.value } : null;
  replace(byId("matches"), rows);
  if (typing) {
    const again = document.getElementById(typing.id);
    if (again) {
      again.value = typing.value;
      again.focus();
    }
  }
}

function detailRow(match) {
  const counts = match.live_activities;
  const desks = state.desks.get(match.id) || [];
  const created = state.tokens.get(match.id);
  const nameId = `desk-name-${match.id}`;
  const form = h("form", { class: "row", onsubmit: (event) => {
    event.preventDefault();
    const input = event.target.querySelector("input");
    if (input.value.trim()) createDesk(match, input.value.trim());
  } },
    h("label", { for: nameId }, "New desk"),
    h("input", { id: nameId, type: "text", maxlength: 100, placeholder: "e.g. north stand desk", required: true }),
    h("button", { type: "submit" }, "Create token"),
  );
  return h("tr", { class: "detail-row", id: `detail-${match.id}` },
    h("td", { colspan: 9 },
      h("div", { class: "detail" },
        h("section", { "aria-label": "Scoring" },
          h("h3", {}, "Scoring"),
          h("p", {}, `Scored by the ${match.mode === "desk" ? "desks" : "provider"}.`),
          h("div", { class: "row" },
            h("button", { type: "button", "data-action": "mode", onclick: () => switchMode(match) }, match.mode === "desk" ? "Hand to the provider" : "Hand to the desks"),
            h("button", { type: "button", "data-action": "replay", onclick: () => replay(match) }, "Start a replay"),
            h("a", { href: `/desk/${match.id}` }, "Open the desk"),
          ),
          h("p", { class: "note", role: "status" }, state.notes.get(match.id) || ""),
          state.replays && state.replays[match.id] && state.replays[match.id].workflow_url
            ? h("a", { href: state.replays[match.id].workflow_url, target: "_blank", rel: "noopener" }, "The replay in the Temporal UI")
            : null,
        ),
        h("section", { "aria-label": "Desks" },
          h("h3", {}, "Desks"),
          h("ul", { class: "desks" }, desks.map((desk) =>
            h("li", { "data-revoked": String(Boolean(desk.revoked_at)) },
              h("span", { class: "desk-name" }, desk.name),
              desk.revoked_at ? h("span", {}, "revoked") : h("button", { type: "button", onclick: () => revokeDesk(match, desk.name) }, `Revoke ${desk.name}`),
            ))),
          form,
          created ? h("div", {}, h("p", {}, `Token for “${created.name}” (shown once):`), h("p", { class: "token", "data-role": "new-token" }, created.token)) : null,
        ),
        h("section", { "aria-label": "Live Activities" },
          h("h3", {}, "Live Activities"),
          h("dl", { class: "counts" },
            h("dt", {}, "Followers"), h("dd", {}, counts.followers),
            h("dt", {}, "Pending"), h("dd", {}, counts.pending),
            h("dt", {}, "Active"), h("dd", {}, counts.active),
            h("dt", {}, "Ended"), h("dd", {}, counts.ended),
            h("dt", {}, "Pushes sent"), h("dd", {}, counts.pushes_sent),
          ),
        ),
      ),
    ),
  );
}

// --- live ---------------------------------------------------------------------------------------

function follow() {
  const source = new EventSource("/v1/stream?matches=live");
  source.addEventListener("value", (event) => {
    const value = JSON.parse(event.data);
    remember(value.fixture_id, value.match);
    const match = state.matches.find((m) => m.id === value.fixture_id);
    if (match && value.version > match.version) {
      match.version = value.version;
      match.score = value.match.score;
      match.state = value.match.state;
      match.last_change = value.match.updated_at;
    }
    if (match) draw();
    soon();
  });
  source.onopen = () => {
    byId("connection").dataset.state = "live";
    byId("connection").textContent = "Live";
  };
  source.onerror = () => {
    byId("connection").dataset.state = "offline";
    byId("connection").textContent = "Reconnecting…";
  };
}

async function boot() {
  if (!state.token) {
    showSignIn("");
    return;
  }
  try {
    await api("/v1/console/matches");
  } catch (error) {
    if (!state.token) return;
    showSignIn(error.message);
    return;
  }
  byId("signin").hidden = true;
  byId("app").hidden = false;
  await refresh();
  if (!started) {
    started = true;
    follow();
    setInterval(() => {
      for (const cell of document.querySelectorAll("#matches time")) cell.textContent = ago(cell.getAttribute("datetime"));
    }, 5000);
  }
}

boot();
