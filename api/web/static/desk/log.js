// The match log as the desk holds it: every entry by seq, and the entries that still stand.
//
// The desk derives what it offers from the log, the way the workflow's rules do: an undo takes
// its target out (the rules restore the game exactly as it was before it), a VAR overturn marks
// its target. Folding the standing entries gives the same state the server holds, so the pad
// offers the players actually on the pitch and undoes the entry the server will accept.

const NOT_UNDOABLE = new Set(["match.commentary", "match.set_mode", "match.undo"]);

export class MatchLog {
  constructor() {
    this.entries = new Map();
  }

  add(entries) {
    for (const entry of entries) this.entries.set(entry.seq, entry);
  }

  ordered() {
    return [...this.entries.values()].sort((a, b) => a.seq - b.seq);
  }

  // Entries neither undone nor undos, oldest first; `undone` holds the seqs taken back.
  standing() {
    const kept = [];
    const undone = new Set();
    for (const entry of this.ordered()) {
      const code = entry.body && entry.body.code;
      if (code === "match.undo") {
        const target = entry.target_seq ?? entry.body.target_seq;
        undone.add(target);
        const at = kept.findIndex((kept_entry) => kept_entry.seq === target);
        if (at >= 0) kept.splice(at, 1);
        continue;
      }
      kept.push(entry);
    }
    const overturned = new Set(
      kept
        .filter((entry) => entry.body && entry.body.code === "match.var" && entry.body.decision === "overturned")
        .map((entry) => entry.target_seq ?? entry.body.target_seq),
    );
    return { kept, undone, overturned };
  }

  // The newest entry `match.undo` may target, or null.
  undoTarget() {
    const { kept } = this.standing();
    for (let i = kept.length - 1; i >= 0; i -= 1) {
      const entry = kept[i];
      const code = entry.body && entry.body.code;
      if (entry.kind !== "command" || !code || NOT_UNDOABLE.has(code)) continue;
      if (code === "match.var" && entry.body.decision !== "overturned") continue;
      return entry;
    }
    return null;
  }
}

export function isUndoable(code, input) {
  if (NOT_UNDOABLE.has(code)) return false;
  return !(code === "match.var" && input && input.decision !== "overturned");
}
