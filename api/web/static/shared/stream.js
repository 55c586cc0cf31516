// One match's live stream (GET /v1/matches/{id}/stream), read with fetch rather than EventSource.
//
// Why not EventSource: a desk must start from the whole log (it derives the players on the pitch,
// the running period and the undo target from it), and only a `Last-Event-ID` header asks the
// stream for "every entry after version N" — EventSource sends that header on its own
// reconnects only, never on the first request. So this reader sends `Last-Event-ID: <version it
// holds>` on every connect (0 at first: the whole log), and on a reconnect gets exactly what it
// missed. A message whose `previous` is not the version it holds (a gap, or a value without
// history) makes it read again from its own version. Reconnects back off, capped, with jitter.
// A page that kept the log from an earlier visit starts from that log's version.

import { backoffDelay } from "./backoff.js";

export class MatchStream {
  constructor(fixtureId, { onValue, onStatus, onMissing, onReset, version = 0 }) {
    this.fixtureId = fixtureId;
    this.onValue = onValue;
    this.onReset = onReset || (() => {});
    this.onStatus = onStatus || (() => {});
    this.onMissing = onMissing || (() => {});
    this.version = version;
    this.failures = 0;
    this.stopped = false;
    this.controller = null;
    this.wake = null;
  }

  start() {
    this.loop();
  }

  stop() {
    this.stopped = true;
    if (this.controller) this.controller.abort();
    if (this.wake) this.wake();
  }

  // Reconnect now (after the network came back), rather than when the backoff ends.
  retryNow() {
    if (this.wake) this.wake();
  }

  async loop() {
    while (!this.stopped) {
      const outcome = await this.readOnce();
      if (this.stopped) return;
      if (outcome === "ended") this.failures = 0;
      else this.failures += 1;
      this.onStatus(outcome === "missing" ? "missing" : "offline");
      const wait = outcome === "ended" ? 250 : backoffDelay(this.failures, { base: 500, cap: 8000 });
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, wait);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
  }

  async readOnce() {
    this.controller = new AbortController();
    let response;
    try {
      response = await fetch(`/v1/matches/${this.fixtureId}/stream`, {
        headers: { Accept: "text/event-stream", "Last-Event-ID": String(this.version) },
        signal: this.controller.signal,
        cache: "no-store",
      });
    } catch {
      return "failed";
    }
    if (response.status === 404) {
      this.onMissing();
      return "missing";
    }
    if (!response.ok || !response.body) return "failed";
    this.onStatus("live");
    this.failures = 0;
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return "ended";
        buffer += value;
        let cut;
        while ((cut = buffer.search(/\r?\n\r?\n/)) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, "");
          if (this.handle(block) === "gap") {
            this.controller.abort();
            return "ended";
          }
        }
      }
    } catch {
      return "failed";
    }
  }

  handle(block) {
    let event = "message";
    const data = [];
    for (const line of block.split(/\r?\n/)) {
      if (!line || line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") event = text;
      else if (field === "data") data.push(text);
    }
    if (event !== "value" || data.length === 0) return "ok";
    const value = JSON.parse(data.join("\n"));
    if (value.previous === null && value.version < this.version) {
      // The server has an older log than the one we kept (a restored database): start over.
      this.version = 0;
      this.onReset();
      return "gap";
    }
    if (value.version <= this.version) return "ok";
    if (value.previous !== this.version) {
      // Not a continuation of what we hold: read the missing entries explicitly.
      return "gap";
    }
    this.version = value.version;
    this.onValue(value);
    return "ok";
  }
}
