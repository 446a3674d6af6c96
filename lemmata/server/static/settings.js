// The Settings tab: the twelve token limits (GET/PUT /api/settings). Only the values the
// researcher changed are sent, so a limit set in the environment is not saved by accident.
// Below them, each backend's checking model and its trust (GET /api/calibrations), with a button
// that measures it (POST); while a calibration runs, the tab polls its progress.

import { getJson, sendJson } from "./api.js";
import { byId, el, fill } from "./ui.js";

let loaded = [];  // the settings as the server last reported them
const POLL_MS = 2000;
let poll = null;  // the timer of the next progress poll while a calibration runs

export function init() {
  byId("settings-form").addEventListener("submit", save);
}

export function show() {
  load();
  loadCalibrations();
}

export function hide() {
  clearTimeout(poll);
  poll = null;
}

async function load() {
  byId("settings-status").textContent = "";
  byId("settings-error").textContent = "";
  try {
    render((await getJson("/api/settings")).settings);
  } catch (error) {
    byId("settings-error").textContent = `Could not read the settings: ${error.message}`;
  }
}

function render(settings) {
  loaded = settings;
  fill("settings-fields", settings.map((s) => {
    const id = `setting-${s.field}`;
    return el("div", { class: "setting", "data-field": s.field },
      el("label", { for: id }, s.name),
      el("input", { id, name: s.field, type: "number", min: "1", step: "1", value: String(s.value),
        "aria-describedby": `${id}-help` }),
      el("span", { id: `${id}-help`, class: "help" },
        `${s.used_for} · default ${s.default} · `, el("span", { class: "source" }, `source: ${s.source}`)));
  }));
}

async function save(event) {
  event.preventDefault();
  const changed = {};
  for (const s of loaded) {
    const raw = byId(`setting-${s.field}`).value.trim();
    // Sent as typed when it is not a number, so the server's message names the field.
    if (raw !== String(s.value)) changed[s.field] = raw === "" || isNaN(Number(raw)) ? raw : Number(raw);
  }
  byId("settings-status").textContent = "";
  byId("settings-error").textContent = "";
  try {
    render((await sendJson("PUT", "/api/settings", changed)).settings);
    byId("settings-status").textContent = "saved: the next run uses these";
  } catch (error) {
    byId("settings-error").textContent = error.message;
  }
}

const TRUST_LABELS = {
  calibrated: "calibrated",
  not_discriminating: "not discriminating",
  uncalibrated: "not measured",
  unreadable: "record unreadable",
  unavailable: "not available here",
};

async function loadCalibrations() {
  clearTimeout(poll);
  try {
    renderCalibrations(await getJson("/api/calibrations"));
  } catch (error) {
    byId("calibration-error").textContent = `Could not read the checking models: ${error.message}`;
  }
}

function renderCalibrations({ models, running }) {
  fill("calibration-rows", models.map((m) => el("div", { class: "checking-model", "data-backend": m.backend },
    el("strong", {}, m.backend),
    el("div", {},
      el("div", {}, m.model && el("code", {}, m.model), m.model && " · ",
        el("span", { class: `trust trust-${m.trust}`, "data-testid": `trust-${m.backend}` },
          TRUST_LABELS[m.trust] || m.trust)),
      el("div", { class: "help" }, m.in_words),
      m.measured > 0 && m.measured < m.proofs && el("div", { class: "help", "data-testid": `progress-${m.backend}` },
        `${m.measured} of ${m.proofs} proofs measured${m.running ? "" : " (stopped: calibrate again to go on)"}`),
      (m.running || m.output) && el("pre", { "data-testid": `output-${m.backend}` }, m.output),
      m.command && el("div", { class: "help" }, "or in a terminal: ", el("code", {}, m.command))),
    el("button", {
      type: "button",
      disabled: running || !m.available,
      title: m.available ? `forecast: ${m.forecast}` : "this backend has no credential here",
      onclick: () => calibrate(m),
    }, m.running ? "Calibrating…" : "Calibrate"))));
  if (running) poll = setTimeout(loadCalibrations, POLL_MS);
}

async function calibrate(model) {
  byId("calibration-error").textContent = "";
  if (!window.confirm(`Measure ${model.model} (${model.backend}) on the human-labelled proofs?\n` +
                      `Forecast: ${model.forecast}`)) return;
  try {
    renderCalibrations(await sendJson("POST", "/api/calibrations", { backend: model.backend }));
  } catch (error) {
    byId("calibration-error").textContent = error.message;
  }
}
