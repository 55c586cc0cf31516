// The desk's outbox in IndexedDB: every tap is saved here before anything goes over the network.
//
// A record is {key, fixture, order, code, input, saw, createdAt, tries, state, ...}:
// - `key` is crypto.randomUUID(), made once when the tap is saved and sent unchanged on every
//   retry, so a resend after a lost answer is answered `duplicate` instead of logging twice;
// - `order` keeps taps in the order they were made (one send loop per fixture, oldest first);
// - `saw` is the log version the desk showed at the tap; `sentSaw` is frozen at the first send
//   (see sender.js) so every retry of one key is byte-for-byte the same command;
// - `state` is `waiting` until an answer ends it: `accepted`, `duplicate`, `refused`, or
//   `conflict` (which stops the queue until the scorer resends or drops it).
// Answered records are kept (the newest `KEEP_ANSWERED` per fixture) so the log can tick the
// desk's own entries and the sender knows which log seqs this desk made.
//
// The database outlives a reload, a tab crash and a deploy; `put` resolves only once the
// transaction is durable, and every change is announced on a BroadcastChannel so the other tabs
// of this desk redraw (and their send loops notice new taps).

const DB_NAME = "scoreline-desk";
const DB_VERSION = 1;
const STORE = "outbox";
const KEEP_ANSWERED = 300;
export const OPEN_STATES = new Set(["waiting", "conflict"]);

function promised(request) {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

function done(transaction) {
  return new Promise((resolve, reject) => {
    transaction.oncomplete = () => resolve();
    transaction.onerror = () => reject(transaction.error);
    transaction.onabort = () => reject(transaction.error || new Error("outbox transaction aborted"));
  });
}

export class Outbox {
  static async open(fixtureId) {
    const request = indexedDB.open(DB_NAME, DB_VERSION);
    request.onupgradeneeded = () => {
      const store = request.result.createObjectStore(STORE, { keyPath: "key" });
      store.createIndex("byFixture", ["fixture", "order"]);
    };
    const db = await promised(request);
    return new Outbox(db, fixtureId);
  }

  constructor(db, fixtureId) {
    this.db = db;
    this.fixture = fixtureId;
    this.lastOrder = 0;
    this.listeners = new Set();
    this.adding = Promise.resolve();
    this.channel = typeof BroadcastChannel === "function" ? new BroadcastChannel(`${DB_NAME}-${fixtureId}`) : null;
    if (this.channel) this.channel.onmessage = () => this.notify(false);
  }

  onChange(listener) {
    this.listeners.add(listener);
  }

  notify(broadcast = true) {
    if (broadcast && this.channel) this.channel.postMessage("changed");
    for (const listener of this.listeners) listener();
  }

  // Every record of this fixture, oldest first.
  async all() {
    const range = IDBKeyRange.bound([this.fixture, -Infinity], [this.fixture, Infinity]);
    const transaction = this.db.transaction(STORE, "readonly");
    const records = await promised(transaction.objectStore(STORE).index("byFixture").getAll(range));
    for (const record of records) this.lastOrder = Math.max(this.lastOrder, record.order);
    return records;
  }

  // Save a new tap; resolves once it is durable. Nothing is sent before this resolves. Adds run
  // one after the other, so taps made faster than IndexedDB answers keep their order.
  add(code, input, saw, extra = {}) {
    const added = this.adding.then(() => this.addNow(code, input, saw, extra));
    this.adding = added.catch(() => undefined);
    return added;
  }

  async addNow(code, input, saw, extra) {
    await this.all();
    const order = Math.max(Date.now(), this.lastOrder + 1);
    this.lastOrder = order;
    const record = {
      key: crypto.randomUUID(),
      fixture: this.fixture,
      order,
      code,
      input,
      saw,
      createdAt: new Date().toISOString(),
      tries: 0,
      state: "waiting",
      ...extra,
    };
    await this.write((store) => store.put(record));
    return record;
  }

  async put(record) {
    await this.write((store) => store.put(record));
  }

  async remove(key) {
    await this.write((store) => store.delete(key));
  }

  // A conflicted tap sent again on the new state: a new record (a new key: the old one's answer
  // is stored as a conflict for good) in the old one's place in the queue.
  async replace(old, saw) {
    const record = {
      ...old,
      key: crypto.randomUUID(),
      saw,
      sentSaw: undefined,
      tries: 0,
      state: "waiting",
      changed: undefined,
      reason: undefined,
      nextAt: undefined,
      createdAt: new Date().toISOString(),
      replaces: old.key,
    };
    await this.write((store) => {
      store.delete(old.key);
      store.put(record);
    });
    return record;
  }

  async write(change) {
    const transaction = this.db.transaction(STORE, "readwrite", { durability: "strict" });
    change(transaction.objectStore(STORE));
    await done(transaction);
    this.notify();
  }

  // Forget the oldest answered records beyond KEEP_ANSWERED; open ones are never pruned.
  async prune() {
    const answered = (await this.all()).filter((record) => !OPEN_STATES.has(record.state));
    const extra = answered.slice(0, Math.max(0, answered.length - KEEP_ANSWERED));
    if (extra.length) await this.write((store) => extra.forEach((record) => store.delete(record.key)));
  }
}
