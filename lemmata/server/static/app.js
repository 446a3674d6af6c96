// The page: the run picker, the "New run" form and the three tabs. The selected run and tab
// live in the URL hash (#run=<id>&tab=live), so a reload shows the same view.

import { getJson, sendJson } from "./api.js";
import { byId, el, toast } from "./ui.js";
import * as live from "./live.js";
import * as paper from "./paper.js";
import * as settings from "./settings.js";

const TABS = { paper, live, settings };
const DEFAULT_TAB = "live";

function currentView() {
  const params = new URLSearchParams(location.hash.slice(1));
  const tab = params.get("tab");
  return { runId: params.get("run") || "", tab: tab in TABS ? tab : DEFAULT_TAB };
}

/** Change the hash; the hashchange listener then shows the view. */
function navigate(runId, tab) {
  const params = new URLSearchParams();
  if (runId) params.set("run", runId);
  params.set("tab", tab);
  location.hash = params.toString();
}

let shown = { runId: null, tab: null };

function showView() {
  const { runId, tab } = currentView();
  for (const [name, module] of Object.entries(TABS)) {
    const active = name === tab;
    byId(`panel-${name}`).hidden = !active;
    byId(`tab-${name}`).setAttribute("aria-selected", String(active));
    if (!active && shown.tab === name) module.hide();
  }
  byId("run-select").value = runId;
  if (runId !== shown.runId || tab !== shown.tab) TABS[tab].show(runId);
  shown = { runId, tab };
}

function runLabel(run) {
  const task = run.task.length > 60 ? `${run.task.slice(0, 57)}…` : run.task;
  return `${task} — ${run.outcome || run.status} (${run.id})`;
}

/** Fill the run picker, newest first, keeping the selection of the hash. */
async function loadRuns() {
  const { runs } = await getJson("/api/runs");
  runs.sort((a, b) => b.created - a.created);
  const select = byId("run-select");
  select.replaceChildren(
    el("option", { value: "" }, "(no run selected)"),
    ...runs.map((run) => el("option", { value: run.id }, runLabel(run))),
  );
  select.value = currentView().runId;
}

/** Keep the picker's label of one run in step with its status (called by the Live tab). */
function updateRunLabel(run) {
  const option = [...byId("run-select").options].find((o) => o.value === run.id);
  if (option) option.textContent = runLabel(run);
}

async function startRun(event) {
  event.preventDefault();
  const mode = byId("new-run-mode").value;
  const body = { mode };
  const gate = byId("new-run-gate").value;  // "": the GATE_MODE setting decides
  if (gate) body.gate = gate;
  if (mode === "from-papers") {
    body.papers = byId("new-run-papers").value.split(",").map((p) => p.trim()).filter(Boolean);
  } else {
    body.task = byId("new-run-task").value.trim();
  }
  const domain = byId("new-run-domain").value.trim();
  if (domain && mode !== "explore") body.domain = domain;
  const budget = byId("new-run-budget").value.trim();  // "": LEMMATA_BUDGET_USD, if set
  if (budget) body.budget_usd = Number(budget);
  byId("new-run-error").textContent = "";
  try {
    const started = await sendJson("POST", "/api/runs", body);
    byId("new-run-form").hidden = true;
    byId("new-run-toggle").setAttribute("aria-expanded", "false");
    await loadRuns();
    navigate(started.id, "live");
  } catch (error) {
    byId("new-run-error").textContent = error.message;
  }
}

/** from-papers starts from paper ids or titles; prove and explore from a task. An explore
 * run's domain is its task. */
function showModeFields(mode) {
  const papers = mode === "from-papers";
  byId("new-run-domain-row").hidden = mode === "explore";
  byId("new-run-task-row").hidden = papers;
  byId("new-run-task").required = !papers;
  byId("new-run-papers-row").hidden = !papers;
  byId("new-run-papers").required = papers;
}

function toggleNewRunForm() {
  const form = byId("new-run-form");
  form.hidden = !form.hidden;
  byId("new-run-toggle").setAttribute("aria-expanded", String(!form.hidden));
  if (!form.hidden) byId("new-run-task").focus();
}

function wire() {
  byId("run-select").addEventListener("change", (e) => navigate(e.target.value, currentView().tab));
  byId("refresh-runs").addEventListener("click", () => loadRuns().catch((e) => toast(e.message, "error")));
  byId("new-run-toggle").addEventListener("click", toggleNewRunForm);
  byId("new-run-mode").addEventListener("change", (e) => showModeFields(e.target.value));
  byId("new-run-form").addEventListener("submit", startRun);
  for (const name of Object.keys(TABS)) {
    byId(`tab-${name}`).addEventListener("click", () => navigate(currentView().runId, name));
  }
  window.addEventListener("hashchange", showView);
}

function main() {
  wire();
  live.init({ onRun: updateRunLabel });
  paper.init();
  settings.init();
  loadRuns().catch((error) => toast(`Could not list the runs: ${error.message}`, "error"));
  showView();
}

main();
