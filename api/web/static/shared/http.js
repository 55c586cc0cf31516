// Calls to the Scoreline API from the browser, with the bearer token the page signed in with.
//
// Every API error has one body, {"error": {"code", "message"}}; `ApiError` carries its code so a
// page branches on it (`invalid_token` → sign in again) and shows its message as it is.

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// Thrown when no HTTP answer came at all (offline, connection refused, aborted): the caller
// decides whether that is worth a retry. `fetch` itself rejects with a bare TypeError.
export class NetworkError extends Error {}

export async function request(path, { token, method = "GET", body, signal } = {}) {
  const headers = { Accept: "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
      cache: "no-store",
    });
  } catch (error) {
    throw new NetworkError(String(error && error.message ? error.message : error));
  }
  const text = await response.text().catch(() => "");
  let parsed = null;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

// The answer's body, or an ApiError built from the one error shape.
export async function call(path, options = {}) {
  const answer = await request(path, options);
  if (answer.status >= 200 && answer.status < 300) return answer.body;
  throw errorOf(answer);
}

export function errorOf(answer) {
  const error = answer.body && answer.body.error;
  if (error && typeof error.code === "string") {
    return new ApiError(answer.status, error.code, error.message || error.code);
  }
  return new ApiError(answer.status, `http_${answer.status}`, `the API answered HTTP ${answer.status}`);
}
