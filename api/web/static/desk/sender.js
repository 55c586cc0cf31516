// The outbox's send loop: one per fixture, oldest tap first, one command in flight.
//
// The command road's answers decide what happens next (docs/desk.md):
// - `accepted` / `duplicate`: the tap is logged; it ticks. A duplicate carries the first answer,
//   which is what this key really got (a refusal stays a refusal).
// - `refused`: a rule said no; the reason is shown and the queue moves on.
// - `conflict`: the log moved after the tap's `saw` in a way this command cares about; the queue
//   stops on it until the scorer resends it on the new state or drops it.
// - `try_again` (503) and no answer at all (offline, the API restarting): the same key again,
//   after a capped exponential backoff with jitter (at least `Retry-After`).
// Anything else is a bug or a setup problem, never retried blindly: a 401/403 pauses the queue
// until the scorer signs in again (nothing is lost), other errors mark the tap refused with the
// API's message.
//
// `saw` on the wire: a tap is made on top of the desk's own taps still in the queue, so the
// entries those taps became are not news to it. At its first send its `saw` moves past the log
// seqs this desk itself made (and commentary, which never conflicts) right after it; any entry
// someone else made stops it there. The value is frozen with the first send: every retry of a key
// must be the same command, or the API would answer `key_reused`.
//
// Web Locks keep it to one loop per fixture across this browser's tabs; the others wait for the
// lock and take over if its tab closes.

import { request, NetworkError } from "../shared/http.js";
import { backoffDelay } from "../shared/backoff.js";
import { OPEN_STATES } from "./outbox.js";

const RETRY = { base: 500, cap: 8000 };
const GATEWAY_STATUSES = new Set([502, 503, 504]);

export function rebasedSaw(saw, records, known) {
  const own = new Set();
  for (const record of records) {
    if ((record.state === "accepted" || record.state === "duplicate") && Number.isInteger(record.seq)) {
      own.add(record.seq);
    }
  }
  let seen = saw;
  for (;;) {
    const next = known.get(seen + 1);
    if (own.has(seen + 1) || (next && next.body && next.body.code === "match.commentary")) seen += 1;
    else return seen;
  }
}

export class Sender {
  constructor({ outbox, fixtureId, token, known, onChange, onAnswer }) {
    this.outbox = outbox;
    this.fixtureId = fixtureId;
    this.token = token;
    this.known = known;
    this.onChange = onChange || (() => {});
    this.onAnswer = onAnswer || (() => {});
    this.inFlight = null;
    this.offline = false;
    this.paused = null;
    this.hurry = false;
    this.stopped = false;
    this.wake = null;
    outbox.onChange(() => this.kick());
  }

  start() {
    const run = () => this.loop();
    if (navigator.locks && navigator.locks.request) navigator.locks.request(`scoreline-send-${this.fixtureId}`, run);
    else run();
  }

  stop() {
    this.stopped = true;
    this.kick();
  }

  kick() {
    if (this.wake) this.wake();
  }

  // The network is back (the stream reconnected, the browser went online): retry now.
  retryNow() {
    this.hurry = true;
    this.kick();
  }

  resume() {
    this.paused = null;
    this.retryNow();
  }

  sleep(ms) {
    return new Promise((resolve) => {
      const timer = Number.isFinite(ms) ? setTimeout(resolve, ms) : null;
      this.wake = () => {
        if (timer) clearTimeout(timer);
        this.wake = null;
        resolve();
      };
    });
  }

  async loop() {
    while (!this.stopped) {
      const records = await this.outbox.all();
      const head = records.find((record) => OPEN_STATES.has(record.state));
      if (!head || head.state === "conflict" || this.paused) {
        await this.sleep(Infinity);
        continue;
      }
      const wait = (head.nextAt || 0) - Date.now();
      if (wait > 0 && !this.hurry) {
        await this.sleep(wait);
        continue;
      }
      this.hurry = false;
      await this.sendOne(head, records);
    }
  }

  async sendOne(head, records) {
    if (head.sentSaw === undefined) {
      if (!this.prepare(head, records)) {
        await this.outbox.put(head);
        this.onAnswer(head);
        return;
      }
    }
    head.tries += 1;
    await this.outbox.put(head);
    this.inFlight = head.key;
    this.onChange();
    let answer;
    try {
      answer = await request(`/v1/matches/${this.fixtureId}/commands`, {
        method: "POST",
        token: this.token(),
        body: { key: head.key, code: head.code, input: head.input, saw: head.sentSaw, sent_at: new Date().toISOString() },
      });
    } catch (error) {
      if (!(error instanceof NetworkError)) throw error;
      this.offline = true;
      await this.retryLater(head, "network", 0);
      return;
    } finally {
      this.inFlight = null;
    }
    this.offline = false;
    await this.settle(head, answer);
  }

  // Freeze what the first send carries: its `saw`, and an undo's target once the tap it takes
  // back has its seq. False when the tap can no longer be sent (its target was never logged).
  prepare(head, records) {
    head.sentSaw = rebasedSaw(head.saw, records, this.known());
    if (!head.undoes) return true;
    const target = records.find((record) => record.key === head.undoes);
    if (target && Number.isInteger(target.seq)) {
      head.input = { ...head.input, target_seq: target.seq };
      return true;
    }
    head.state = "refused";
    head.reason = { code: "nothing_to_undo", message: "the tap it takes back was never logged" };
    return false;
  }

  async settle(head, answer) {
    const body = answer.body || {};
    if (answer.status === 200 && typeof body.outcome === "string") {
      const first = body.outcome === "duplicate" && body.answer ? body.answer : body;
      head.state = body.outcome === "duplicate" && first.outcome === "accepted" ? "duplicate" : first.outcome;
      if (head.state === "duplicate" || head.state === "accepted") head.seq = first.seq;
      if (first.reason) head.reason = first.reason;
      if (first.changed) head.changed = first.changed;
      if (!["accepted", "duplicate", "refused", "conflict"].includes(head.state)) {
        head.state = "refused";
        head.reason = { code: "unknown_outcome", message: `unexpected answer ${first.outcome}` };
      }
      head.answeredAt = new Date().toISOString();
      await this.outbox.put(head);
      this.onAnswer(head);
      return;
    }
    if (answer.status === 503 && body.outcome === "try_again") {
      const retryAfter = Number(answer.headers.get("Retry-After") || "1") * 1000;
      await this.retryLater(head, "try_again", retryAfter);
      return;
    }
    if (GATEWAY_STATUSES.has(answer.status)) {
      this.offline = true;
      await this.retryLater(head, "network", 0);
      return;
    }
    const error = body.error || { code: `http_${answer.status}`, message: `the API answered HTTP ${answer.status}` };
    if (answer.status === 401 || answer.status === 403) {
      this.paused = error;
      this.onAnswer({ ...head, state: "paused", reason: error });
      this.onChange();
      return;
    }
    head.state = "refused";
    head.reason = { code: error.code, message: error.message };
    head.answeredAt = new Date().toISOString();
    await this.outbox.put(head);
    this.onAnswer(head);
  }

  async retryLater(head, why, atLeast) {
    head.lastError = why;
    head.nextAt = Date.now() + Math.max(atLeast, backoffDelay(head.tries, RETRY));
    await this.outbox.put(head);
    this.onChange();
  }
}
