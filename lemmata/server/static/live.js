// The Live tab: the stage track, the gate the run waits at, summary cards, tokens, the lemma
// graph, pause and resume, and the workflow's event log read from GET /events.

import { errorOf, getJson, request, sendJson, serverEvents } from "./api.js";
import { byId, count, el, fill, toast } from "./ui.js";
import { mathOf, withMath } from "./math.js";

const POLL_MS = 2500;
const MAX_LOG_LINES = 2000;

let runId = "";
let run = null;          // the latest GET /api/runs/{id}
let visible = false;
let onRun = () => {};
let stream = null;       // {runId, controller} of the event stream read now or last
let shownGate = "";      // key of the gate whose form is shown (re-rendering would lose typing)
let decidedGate = "";    // key of the gate just answered: hidden until the run moves on
let graphUrl = "";       // the lemma graph's URL shown (the status poll changes it when the picture changes)

export function init(options) {
  onRun = options.onRun;
  byId("pause-button").addEventListener("click", () => control("pause", "pause requested"));
  byId("resume-button").addEventListener("click", () => {
    const budget = byId("resume-budget").value.trim();  // "": the run keeps its budget
    control("resume", "resumed", budget ? { budget_usd: Number(budget) } : {});
  });
  setInterval(poll, POLL_MS);
}

export function show(id) {
  visible = true;
  byId("live-empty").hidden = Boolean(id);
  byId("live-view").hidden = !id;
  if (id !== runId) {
    runId = id;
    run = null;
    shownGate = decidedGate = graphUrl = "";
    fill("lemma-graph");
    fill("gate-form");
    byId("gate").hidden = true;
    if (id && stream?.runId !== id) openStream();
  }
  if (id) refresh();
}

export function hide() {
  visible = false;
}

/** Poll while the run moves (the stage track follows it) or a decision was just sent. */
function poll() {
  if (visible && run && (run.status === "running" || run.working || decidedGate)) refresh();
}

async function refresh() {
  const id = runId;
  try {
    const fresh = await getJson(`/api/runs/${encodeURIComponent(id)}`);
    if (id !== runId) return; // another run was selected meanwhile
    run = fresh;
    render(run);
    onRun(run);
  } catch (error) {
    byId("run-message").textContent = `Could not read the run: ${error.message}`;
  }
}

/** An unfinished rewrite (the status poll's `rewrite`): its version and steps. */
function renderRewrite(rewrite) {
  byId("rewrite-progress").hidden = !rewrite;
  if (!rewrite) return;
  byId("rewrite-progress-title").textContent =
    `Rewrite to version ${rewrite.version}: ${rewrite.instructions}`;
  fill("rewrite-track", rewrite.steps.map((s) =>
    el("li", { class: `stage state-${s.state}`, "data-state": s.state },
      el("span", { class: "stage-name" }, s.step), el("span", { class: "badge" }, s.state))));
}

function render(current) {
  byId("run-task").textContent = current.task;
  // The outcome, not the bare status: a completed run says when its main result is not established.
  const status = byId("run-status");
  status.textContent = current.outcome || current.status;
  status.className = `badge status-${current.status}`;
  status.dataset.established = String(current.main_result_established);
  status.title = (current.main_result_issues || []).join("; ");
  byId("run-message").textContent = current.message || "";
  const forecasts = new Map((current.forecasts || []).map((f) => [f.stage, f]));
  fill("stage-track", (current.stages || []).map((s) =>
    el("li", { class: `stage state-${s.state}`, "data-state": s.state, title: stageTitle(s, forecasts.get(s.stage)) },
      el("span", { class: "stage-name" }, s.stage), el("span", { class: "badge" }, s.state))));
  renderRewrite(current.rewrite);
  const tokens = current.tokens || {};
  byId("tokens").textContent =
    `${count(tokens.calls)} model calls · ${count(tokens.in)} tokens in · ${count(tokens.out)} tokens out` +
    (tokens.cost ? ` · cost ${tokens.cost}` : "");
  renderSpending(forecasts, current.budget, current.stages || []);
  fill("cards", (current.cards || []).map((card) =>
    el("section", { class: "card", "data-stage": card.stage },
      el("h3", {}, card.stage),
      // Line by line: a formula the card's wrapping split across lines stays its source.
      el("pre", {}, card.text.split("\n").flatMap((line) => [...withMath(line), "\n"])))));
  // A decision starts a process, so it is taken only once the one that reached the gate has
  // exited (for a moment the run can report "waiting" while that process still works).
  renderGate(current.status === "waiting" && !current.working ? current.gate : null);
  renderLemmaGraph(current.lemma_graph);
}

/** A stage chip's hover text: the file that proves it done, and its forecast once made. */
function stageTitle(stage, forecast) {
  return forecast ? `${stage.artifact}\n${forecast.text} (from ${forecast.basis})` : stage.artifact;
}

/** The forecast of the stage under way (else the last one made) beside what it used; the budget. */
function renderSpending(forecasts, budget, stages) {
  const running = stages.find((s) => s.state === "running" && forecasts.has(s.stage));
  const shown = running ? forecasts.get(running.stage) : [...forecasts.values()].filter((f) => f.calls).pop();
  const parts = [];
  if (shown) parts.push(`${shown.stage}: ${shown.text}`);
  if (budget) parts.push(`budget ${budget.text}`);
  const line = byId("spending");
  line.hidden = parts.length === 0;
  line.textContent = parts.join(" · ");
}

// --- the lemma graph ------------------------------------------------------------------------

const SVG_NS = "http://www.w3.org/2000/svg";
const PICTURE_ELEMENTS = new Set(["svg", "g", "rect", "path", "text", "title"]);

/**
 * The picture of the theory's lemmas (GET /lemma-graph.svg), fetched again only when the status
 * poll gives it a new URL. It is shown inline, so that each lemma's title shows on hover; at the
 * theory review it moves into the gate, above the decision.
 */
async function renderLemmaGraph(url) {
  const figure = byId("lemma-graph");
  const gate = byId("gate");
  const atReview = !gate.hidden && gate.dataset.kind === "theory_review";
  const place = atReview ? byId("gate-lemma-graph") : byId("lemma-graph-box");
  if (figure.parentElement !== place) place.append(figure);
  byId("lemma-graph-box").hidden = atReview || !url;
  if (!url) {
    graphUrl = "";
    figure.replaceChildren();
    return;
  }
  if (url === graphUrl) return;
  graphUrl = url;
  const id = runId;
  try {
    const response = await request(url);
    if (!response.ok) throw await errorOf(response);
    const picture = pictureOf(await response.text());
    if (id === runId && url === graphUrl) figure.replaceChildren(picture);
  } catch (error) {
    if (id !== runId || url !== graphUrl) return;
    graphUrl = ""; // the next poll tries again
    figure.replaceChildren(el("p", { class: "error" }, `Could not show the lemma graph: ${error.message}`));
  }
}

/**
 * The server's SVG as a node of this page: parsed as XML, never as HTML. The server escapes every
 * text of the model and writes no script, link or style; as a second guard, any element other
 * than the picture's own kinds, event handler or link is dropped here.
 */
function pictureOf(text) {
  const parsed = new DOMParser().parseFromString(text, "image/svg+xml");
  const svg = parsed.documentElement;
  if (svg.namespaceURI !== SVG_NS || svg.localName !== "svg" || parsed.getElementsByTagName("parsererror").length) {
    throw new Error("the answer is not an SVG picture");
  }
  for (const node of [svg, ...svg.querySelectorAll("*")]) {
    if (node.namespaceURI !== SVG_NS || !PICTURE_ELEMENTS.has(node.localName)) {
      node.remove();
      continue;
    }
    for (const { name } of [...node.attributes]) {
      if (/^on|href$|^style$/i.test(name)) node.removeAttribute(name);
    }
  }
  return document.importNode(svg, true);
}

function gateKey(gate) {
  return gate ? `${gate.gate}|${gate.second_look}|${gate.question}` : "";
}

function renderGate(gate) {
  const key = gateKey(gate);
  if (key !== decidedGate) decidedGate = ""; // the run moved on from the answered gate
  const section = byId("gate");
  section.hidden = !gate || key === decidedGate;
  if (section.hidden || key === shownGate) return;
  shownGate = key;
  section.dataset.gate = gate.gate;
  section.dataset.kind = gate.kind;
  byId("gate-question").textContent = gate.question;
  byId("gate-card").textContent = gate.card || "";
  renderReview(gate);
  byId("gate-error").textContent = "";
  fill("gate-form", gateFields(gate));
}

/** The theory review typeset (mathematics by KaTeX); the card's text stays below, folded. */
function renderReview(gate) {
  const lemmas = gate.lemmas || [];
  const typeset = lemmas.length > 0;
  byId("gate-review").hidden = !typeset;
  byId("gate-card-box").open = !typeset;
  fill("gate-head", (gate.head || []).map((line) => el("p", {}, withMath(line))));
  fill("gate-lemmas", lemmas.map((lemma) => el("li", { "data-lemma": lemma.id },
    el("strong", {}, lemma.name), " ",
    el("span", { class: `tag ${lemma.tag.startsWith("verified") ? "tag-verified" : "tag-low"}` }, lemma.tag),
    el("div", { class: "statement" }, withMath(lemma.statement)),
    lemma.formal && el("div", { class: "formal" }, "formally: ", mathOf(lemma.formal)),
    lemma.why && el("div", { class: "why" }, "why: ", withMath(lemma.why)))));
  fill("gate-refuted", (gate.refuted || []).map((line) => el("p", { class: "why" }, withMath(line))));
}

/** The inputs and buttons of one gate kind; each button sends its decision. */
function gateFields(gate) {
  const field = (id, label, input) => el("div", { class: "field" }, el("label", { for: id }, label), input);
  const button = (id, text, body) => el("button", { type: "button", id, onclick: () => decide(gate, body()) }, text);
  const value = (id) => byId(id).value.trim();
  if (gate.kind === "theory_review" || gate.kind === "stage_review") {
    const rework = gate.kind === "theory_review" && !gate.second_look;
    const rejection = () => ({ approved: false, feedback: value("gate-feedback"),
      ...(rework ? { step: value("gate-step"), issue: value("gate-issue") } : {}) });
    return [
      gate.second_look && el("p", { class: "muted" },
        "Second look, after your objection: rejecting now stops the run."),
      field("gate-feedback", "Feedback for the next agent (optional)", el("textarea", { id: "gate-feedback", rows: 2 })),
      rework && el("fieldset", {},
        el("legend", {}, "If you reject: the theory runs once more with this objection"),
        field("gate-step", "Most problematic step (lemma number or id)", el("input", { id: "gate-step", type: "text" })),
        field("gate-issue", "The issue", el("textarea", { id: "gate-issue", rows: 2 }))),
      el("div", { class: "row" },
        button("gate-approve", "Approve", () => ({ approved: true, feedback: value("gate-feedback") })),
        button("gate-reject", "Reject", rejection)),
    ];
  }
  if (gate.kind === "survey_papers") {
    return [
      field("gate-papers", "Paper ids or titles, comma separated (empty: go on without papers)",
        el("input", { id: "gate-papers", type: "text" })),
      button("gate-continue", "Continue", () => ({ papers: value("gate-papers") })),
    ];
  }
  if (gate.kind === "direction") {
    return [
      field("gate-direction", "The direction to take", el("input", { id: "gate-direction", type: "text" })),
      button("gate-continue", "Continue", () => ({ direction: value("gate-direction") })),
    ];
  }
  return [el("p", { class: "error" }, `This page does not know the gate kind "${gate.kind}".`)];
}

async function decide(gate, body) {
  const path = `/api/runs/${encodeURIComponent(runId)}/gates/${encodeURIComponent(gate.gate)}`;
  try {
    await sendJson("POST", path, body);
  } catch (error) {
    byId("gate-error").textContent = error.message;
    return;
  }
  decidedGate = gateKey(gate);
  shownGate = "";
  byId("gate").hidden = true;
  openStream();
  refresh();
}

/** Pause or resume; a refusal (409: nothing runs, or it already runs) shows as a toast. */
async function control(action, done, body = {}) {
  try {
    await sendJson("POST", `/api/runs/${encodeURIComponent(runId)}/${action}`, body);
    toast(done);
  } catch (error) {
    toast(`${action}: ${error.message}`, "error");
    return;
  }
  if (action === "resume") openStream();
  refresh();
}

// --- the event log --------------------------------------------------------------------------

/** Read the run's event stream from its start; it ends by itself (event `end`). */
async function openStream() {
  stream?.controller.abort();
  const current = { runId, controller: new AbortController() };
  stream = current;
  fill("event-log");
  try {
    const response = await request(`/api/runs/${encodeURIComponent(runId)}/events`,
      { signal: current.controller.signal });
    if (!response.ok) throw await errorOf(response);
    for await (const { event, data } of serverEvents(response)) {
      if (event === "workflow") logLine(describe(data));
      else if (event === "status") {
        logLine(`status: ${data.status}${data.message ? ` (${data.message})` : ""}`, "status");
        if (current.runId === runId) refresh();
      } else if (event === "end") {
        logLine(`stream ended: ${data.status}`, "status");
        if (current.runId === runId) {
          decidedGate = ""; // nothing works on the run now: a gate it reports is a new question
          refresh();
        }
        break;
      }
    }
  } catch (error) {
    if (error.name !== "AbortError") logLine(`event stream: ${error.message}`, "error");
  }
}

/** One line for a workflow event, e.g. "job 3 started: prove_lemma L2". */
function describe(event) {
  if (typeof event !== "object" || event === null) return String(event);
  const wildcards = Object.values(event.wildcards || {}).join(" ");
  switch (event.event) {
    case "workflow_started":
      return "workflow started";
    case "job_started":
      return `job ${event.job} started: ${event.rule}${wildcards ? ` ${wildcards}` : ""}`;
    case "job_finished":
      return `job ${event.job} finished: ${event.rule}`;
    case "job_failed": // a gate rule "fails" to stop the workflow until the decision is given
      return event.gate ? `job ${event.job} stopped at a gate: ${event.rule}` : `job ${event.job} failed: ${event.rule}`;
    case "progress":
      return `progress ${event.done}/${event.total}`;
    default:
      return JSON.stringify(event);
  }
}

function logLine(text, kind = "workflow") {
  const log = byId("event-log");
  const atBottom = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
  log.append(el("li", { class: `log-${kind}` }, text));
  while (log.childElementCount > MAX_LOG_LINES) log.firstElementChild.remove();
  if (atBottom) log.scrollTop = log.scrollHeight;
}
