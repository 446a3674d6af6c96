// The Paper tab: the version switcher, the PDF or its LaTeX source, the Q&A chat (answers
// streamed from POST /ask) and rewrites (POST /rewrite, or a chat message the server reads as
// revision instructions, then a poll until the version exists).

import { ApiError, errorOf, getJson, getText, request, sendJson, serverEvents, viewableUrl } from "./api.js";
import { byId, el, fill, toast } from "./ui.js";
import { withMath } from "./math.js";

const REWRITE_POLL_MS = 2000;
const MARKER_LABELS = {
  rewrite_requested: "rewrite requested",
  rewrite_saved: "rewrite saved",
  rewrite_failed: "rewrite failed",
  error: "error",
};

let runId = "";
let versions = [];       // GET /versions entries
let shownPdf = "";       // pdf_url in the frame now (setting the same src again would reload it)
let shownTex = "";       // tex_url in the <pre> now
let rewritePoll = null;  // {runId, version, timer} while a rewrite works

export function init() {
  byId("version-select").addEventListener("change", showVersion);
  // Which PDF the viewer has loaded (its pdf_url), for whoever waits for it: tests, screenshots.
  byId("pdf-frame").addEventListener("load", (e) => { e.target.dataset.loaded = e.target.dataset.src || ""; });
  byId("show-pdf").addEventListener("click", () => setView("pdf"));
  byId("show-tex").addEventListener("click", () => setView("tex"));
  byId("ask-form").addEventListener("submit", ask);
  byId("rewrite-form").addEventListener("submit", requestRewrite);
}

export function show(id) {
  if (id !== runId) {
    runId = id;
    versions = [];
    shownPdf = shownTex = "";
    fill("version-select"); // another run: its newest version first
    byId("paper-view").hidden = true;
    fill("chat");
    byId("rewrite-status").textContent = "";
  }
  byId("paper-empty").textContent = "Select a run with a paper.";
  byId("paper-empty").hidden = Boolean(id);
  byId("paper-main").hidden = !id;
  if (!id) return;
  loadVersions(false);
  loadHistory();
  watchRunningRewrite();
}

export function hide() {}

// --- versions --------------------------------------------------------------------------------

/** Fill the switcher, newest first; keep the shown version unless `newest` or it is gone. */
async function loadVersions(newest) {
  const id = runId;
  let answer;
  try {
    answer = await getJson(`/api/runs/${encodeURIComponent(id)}/versions`);
  } catch (error) {
    toast(`Could not list the paper versions: ${error.message}`, "error");
    return;
  }
  if (id !== runId) return;
  versions = answer.versions;
  const select = byId("version-select");
  const keep = select.value;
  select.replaceChildren(...[...versions].reverse().map((v) =>
    el("option", { value: String(v.version) }, `v${v.version}${v.pdf ? "" : " (no PDF)"}`)));
  if (!newest && versions.some((v) => String(v.version) === keep)) select.value = keep;
  byId("paper-view").hidden = versions.length === 0;
  byId("paper-empty").hidden = versions.length > 0;
  byId("paper-empty").textContent = "This run has no paper yet.";
  if (versions.length) showVersion();
}

async function showVersion() {
  const chosen = versions.find((v) => String(v.version) === byId("version-select").value);
  if (!chosen) return;
  const frame = byId("pdf-frame");
  const link = byId("open-pdf");
  link.hidden = !chosen.pdf;
  if (chosen.pdf && chosen.pdf_url !== shownPdf) {
    shownPdf = chosen.pdf_url;
    frame.dataset.src = chosen.pdf_url;
    try {
      const url = await viewableUrl(chosen.pdf_url);
      if (frame.src.startsWith("blob:")) URL.revokeObjectURL(frame.src); // the previous version's copy
      frame.src = url;
      link.href = url;
    } catch (error) {
      toast(`Could not load the PDF: ${error.message}`, "error");
    }
  } else if (!chosen.pdf) {
    shownPdf = "";
    delete frame.dataset.src;
    frame.removeAttribute("src");
  }
  if (chosen.tex_url !== shownTex) {
    shownTex = chosen.tex_url;
    try {
      byId("tex-source").textContent = await getText(chosen.tex_url);
    } catch (error) {
      byId("tex-source").textContent = `Could not load the LaTeX source: ${error.message}`;
    }
  }
}

function setView(view) {
  byId("pdf-frame").hidden = view !== "pdf";
  byId("tex-source").hidden = view !== "tex";
  byId("show-pdf").setAttribute("aria-pressed", String(view === "pdf"));
  byId("show-tex").setAttribute("aria-pressed", String(view === "tex"));
}

// --- the chat --------------------------------------------------------------------------------

async function loadHistory() {
  const id = runId;
  try {
    const { records } = await getJson(`/api/runs/${encodeURIComponent(id)}/history`);
    if (id === runId) fill("chat", records.map(recordNode));
    scrollChat();
  } catch (error) {
    toast(`Could not read the chat: ${error.message}`, "error");
  }
}

/** A history record: a message of the researcher or the assistant, or a small system line. */
function recordNode(record) {
  const version = record.paper_version ? `v${record.paper_version}` : "";
  if (record.role === "event") {
    const label = MARKER_LABELS[record.marker] || record.marker || "event";
    return systemLine(`${label}: ${record.content}`, record.marker, version);
  }
  const who = record.role === "user" ? "you" : "assistant";
  const tools = (record.tool_calls || []).map((call) => `${call.tool} ${call.argument ?? ""}`.trim());
  return el("div", { class: `msg msg-${record.role}` },
    el("div", { class: "msg-meta" }, [who, version].filter(Boolean).join(" · ")),
    el("div", { class: "msg-text" }, record.role === "assistant" ? withMath(record.content) : record.content),
    tools.length > 0 && el("div", { class: "msg-tools" }, `tools: ${tools.join("; ")}`));
}

function systemLine(text, marker = "error", version = "") {
  return el("div", { class: `system marker-${marker || "event"}`, "data-marker": marker || "event" },
    version ? `[${version}] ${text}` : text);
}

function scrollChat() {
  const chat = byId("chat");
  chat.scrollTop = chat.scrollHeight;
}

/** Ask a question; the answer's pieces fill a pending bubble as they arrive. */
async function ask(event) {
  event.preventDefault();
  const question = byId("question").value.trim();
  if (!question) return;
  const chat = byId("chat");
  const text = el("div", { class: "msg-text" });
  const bubble = el("div", { class: "msg msg-assistant pending", "data-testid": "pending-answer" },
    el("div", { class: "msg-meta" }, "assistant"), text);
  chat.append(recordNode({ role: "user", content: question }), bubble);
  byId("question").value = "";
  byId("ask-button").disabled = true;
  try {
    const response = await request(`/api/runs/${encodeURIComponent(runId)}/ask`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ question }),
    });
    if (!response.ok) throw await errorOf(response);
    if (response.status === 202) { // revision instructions: the server started a rewrite
      const started = await response.json();
      bubble.remove();
      rewriteStarted(started);
      return;
    }
    let finished = false;
    for await (const { event: name, data } of serverEvents(response)) {
      if (name === "piece") text.textContent += data;
      else if (name === "restart") text.textContent = "";
      else if (name === "answer") {
        bubble.replaceWith(recordNode(data));
        finished = true;
      } else if (name === "error") {
        bubble.replaceWith(systemLine(`error: ${data.error}`));
        finished = true;
      }
      scrollChat();
    }
    if (!finished) bubble.replaceWith(systemLine("error: the answer stream ended without an answer"));
  } catch (error) {
    if (error instanceof ApiError && error.status === 409) {
      bubble.remove();
      toast(`Rewrite refused: ${error.message}`, "warning");
    } else {
      bubble.replaceWith(systemLine(`error: ${error.message}`));
    }
  } finally {
    byId("ask-button").disabled = false;
    scrollChat();
  }
}

// --- rewrites --------------------------------------------------------------------------------

async function requestRewrite(event) {
  event.preventDefault();
  const instructions = byId("rewrite-instructions").value.trim();
  if (!instructions) return;
  const status = byId("rewrite-status");
  try {
    const started = await sendJson("POST", `/api/runs/${encodeURIComponent(runId)}/rewrite`, { instructions });
    byId("rewrite-instructions").value = "";
    rewriteStarted(started);
  } catch (error) {
    if (error instanceof ApiError && error.status === 409) {
      toast(`Rewrite refused: ${error.message}`, "warning");
    } else {
      status.textContent = `rewrite refused: ${error.message}`;
      loadHistory(); // a 400 left an error marker in the chat
    }
  }
}

/** A 202 of POST /rewrite, or of POST /ask for a chat message that gave revision instructions. */
function rewriteStarted(started) {
  byId("rewrite-status").textContent = started.from_chat
    ? `your message reads as revision instructions: rewrite to version ${started.version} started`
    : `rewrite to version ${started.version} started`;
  startRewritePoll(started.version);
  loadHistory(); // the chat's "rewrite requested" marker
}

/** After a reload while a rewrite works: keep waiting for it. */
async function watchRunningRewrite() {
  const id = runId;
  try {
    const run = await getJson(`/api/runs/${encodeURIComponent(id)}`);
    if (id === runId && run.rewrite_in_progress && rewritePoll?.runId !== id) {
      byId("rewrite-status").textContent = "a rewrite is in progress";
      startRewritePoll(null);
    }
  } catch {
    // the versions and history calls already report an unreadable run
  }
}

function startRewritePoll(version) {
  if (rewritePoll) clearTimeout(rewritePoll.timer);
  rewritePoll = { runId, version, timer: setTimeout(checkRewrite, REWRITE_POLL_MS) };
}

async function checkRewrite() {
  const poll = rewritePoll;
  if (!poll || poll.runId !== runId) {
    rewritePoll = null; // another run was selected: its own show() looks for its rewrites
    return;
  }
  let run;
  try {
    run = await getJson(`/api/runs/${encodeURIComponent(poll.runId)}`);
  } catch {
    run = { rewrite_in_progress: true }; // a missed poll: try again
  }
  if (rewritePoll !== poll) return;
  if (run.rewrite_in_progress) {
    poll.timer = setTimeout(checkRewrite, REWRITE_POLL_MS);
    return;
  }
  rewritePoll = null;
  const made = poll.version === null || (run.versions || []).includes(poll.version);
  byId("rewrite-status").textContent = poll.version === null ? "the rewrite finished"
    : made ? `version ${poll.version} is ready` : `rewrite to version ${poll.version} failed: see the chat`;
  await loadVersions(made);
  loadHistory();
}
