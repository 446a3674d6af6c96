// The Settings tab: the twelve token limits (GET/PUT /api/settings). Only the values the
// researcher changed are sent, so a limit set in the environment is not saved by accident.

import { getJson, sendJson } from "./api.js";
import { byId, el, fill } from "./ui.js";

let loaded = [];  // the settings as the server last reported them

export function init() {
  byId("settings-form").addEventListener("submit", save);
}

export function show() {
  load();
}

export function hide() {}

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
