// Where a page keeps its bearer token: the browser's localStorage, never the URL.
//
// One key per kind of user, so a laptop that runs the console and a desk keeps both. The token
// is only ever sent in an Authorization header to this same origin (the CSP allows no other).

const KEYS = { desk: "scoreline.token.desk", operator: "scoreline.token.operator" };
const PREFIXES = { desk: "sl_desk_", operator: "sl_op_" };

export function loadToken(kind) {
  try {
    return localStorage.getItem(KEYS[kind]);
  } catch {
    return null;
  }
}

export function saveToken(kind, token) {
  localStorage.setItem(KEYS[kind], token);
}

export function forgetToken(kind) {
  localStorage.removeItem(KEYS[kind]);
}

// A quick check before any request: a console token pasted into a desk is told apart at once.
export function looksLike(kind, token) {
  return typeof token === "string" && token.startsWith(PREFIXES[kind]) && token.length > PREFIXES[kind].length;
}
