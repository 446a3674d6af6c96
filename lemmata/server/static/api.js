// Calls to the lemmata HTTP API: the bearer token, JSON helpers and server-sent event streams.

const TOKEN_KEY = "lemmata.apiToken";

// One pending token request shared by every call that got a 401 at the same time.
let tokenRequest = null;

/** Thrown for an answer other than 2xx; `status` and the server's one-line `message`. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function storedToken() {
  return sessionStorage.getItem(TOKEN_KEY);
}

/**
 * The token arrives once, in the URL `lemmata serve` prints (http://127.0.0.1:8765/?token=...,
 * as Jupyter does). It is kept in sessionStorage, for this tab only (closing the tab forgets
 * it; another tab opened by hand asks for it), and taken out of the address bar at once, so
 * that it stays out of the history, bookmarks and screenshots. Runs when this module loads,
 * before any call.
 */
function adoptTokenOfUrl() {
  const url = new URL(location.href);
  if (!url.searchParams.has("token")) return;
  const token = url.searchParams.get("token").trim();
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  url.searchParams.delete("token");
  history.replaceState(history.state, "", url.pathname + url.search + url.hash);
}

adoptTokenOfUrl();

/** Show the token form and resolve with what the researcher typed (kept for this tab only). */
function askForToken() {
  if (tokenRequest) return tokenRequest;
  const form = document.getElementById("token-form");
  const input = document.getElementById("token-input");
  tokenRequest = new Promise((resolve) => {
    form.hidden = false;
    input.focus();
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      sessionStorage.setItem(TOKEN_KEY, input.value.trim());
      input.value = "";
      form.hidden = true;
      tokenRequest = null;
      resolve();
    }, { once: true });
  });
  return tokenRequest;
}

/** fetch() of an /api path with the stored token; a 401 asks for the token and tries again. */
export async function request(path, options = {}) {
  for (;;) {
    const headers = new Headers(options.headers || {});
    const token = storedToken();
    if (token) headers.set("Authorization", `Bearer ${token}`);
    const response = await fetch(path, { ...options, headers });
    if (response.status !== 401) return response;
    sessionStorage.removeItem(TOKEN_KEY);
    await askForToken();
  }
}

/** The server's error message of a failed response (its `{"error": ...}` body, else the status). */
export async function errorOf(response) {
  try {
    const body = await response.json();
    if (body && typeof body.error === "string") return new ApiError(response.status, body.error);
  } catch {
    // not JSON: fall through to the status line
  }
  return new ApiError(response.status, `${response.status} ${response.statusText}`);
}

/** The JSON answer of `path`; throws ApiError for any status other than 2xx. */
export async function getJson(path, options = {}) {
  const response = await request(path, options);
  if (!response.ok) throw await errorOf(response);
  return response.json();
}

/** POST or PUT `body` as JSON; resolves with the JSON answer, throws ApiError otherwise. */
export function sendJson(method, path, body) {
  return getJson(path, {
    method,
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** GET a text file (the LaTeX source). */
export async function getText(path) {
  const response = await request(path);
  if (!response.ok) throw await errorOf(response);
  return response.text();
}

/**
 * The URL an <iframe> or link can show for an /api file. An iframe cannot send the
 * Authorization header, so with a token the file is fetched here and shown as a blob URL.
 */
export async function viewableUrl(path) {
  if (!storedToken()) return path;
  const response = await request(path);
  if (!response.ok) throw await errorOf(response);
  return URL.createObjectURL(await response.blob());
}

/**
 * The events of a text/event-stream response, as {event, data} with data parsed from JSON.
 * EventSource cannot send headers, hence fetch() and this small parser: the streams carry the
 * token in the Authorization header like every other call. The API takes it nowhere else; a
 * token in a query string would end up in logs and in the browser's history.
 */
export async function* serverEvents(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n?/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const parsed = parseEvent(block);
      if (parsed) yield parsed;
    }
  }
}

function parseEvent(block) {
  let event = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) continue; // a comment (keep-alive)
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") event = value;
    else if (field === "data") data.push(value);
  }
  if (!data.length) return null;
  const text = data.join("\n");
  try {
    return { event, data: JSON.parse(text) };
  } catch {
    return { event, data: text };
  }
}
