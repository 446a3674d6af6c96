// Small DOM helpers shared by the tabs. Text always goes in through textContent, never as HTML.

/** Children to keep: `cond && node` leaves out a node by giving false. */
const present = (child) => child !== null && child !== undefined && child !== false;

/**
 * An element with attributes (`class`, `data-*`, properties like `hidden` or `onclick`) and
 * children (strings or nodes; null, undefined and false are left out).
 */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value;
    else if (name in node && !name.startsWith("data-") && !name.startsWith("aria-")) node[name] = value;
    else node.setAttribute(name, value === true ? "" : value);
  }
  node.append(...children.flat().filter(present));
  return node;
}

const TOAST_SECONDS = 6;

/** A transient message (role="status"), e.g. a refused rewrite; it removes itself. */
export function toast(message, kind = "info") {
  const node = el("div", { class: `toast toast-${kind}`, role: "status" }, message);
  document.getElementById("toasts").append(node);
  setTimeout(() => node.remove(), TOAST_SECONDS * 1000);
  return node;
}

/** Replace the children of the element with id `id` (null, undefined and false left out). */
export function fill(id, ...children) {
  document.getElementById(id).replaceChildren(...children.flat().filter(present));
}

export function byId(id) {
  return document.getElementById(id);
}

/** "12,345" */
export function count(n) {
  return Number(n || 0).toLocaleString("en-US");
}
