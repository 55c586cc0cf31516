// Capped exponential backoff with jitter, shared by the outbox's sender and the stream reader.
//
// "Equal jitter": half of the capped exponential step is kept, the other half is random. Many
// desks that lost the network together (a stadium's Wi-Fi) then come back spread out rather than
// in one burst, and no retry comes sooner than half its step (full jitter may retry at once).

export function backoffDelay(attempt, { base = 500, cap = 10000, random = Math.random } = {}) {
  const step = Math.min(cap, base * 2 ** Math.max(0, attempt - 1));
  return step / 2 + random() * (step / 2);
}
