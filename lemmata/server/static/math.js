// Mathematics in model text, typeset by KaTeX (static/katex, served with the app: no network).
// Only katex.render is used, with HTML output: it builds DOM nodes whose styles are set through
// the CSSOM, which the page's CSP allows (inline style attributes it does not). A formula KaTeX
// cannot typeset stays its source, as text. A typeset formula shows its LaTeX source on a click
// (or Enter), and the formula again on the next.

import { el } from "./ui.js";

// $$…$$, \[…\], \(…\), and $…$ whose content neither starts nor ends with a space and which is
// not followed by a digit: "$5 and $6" is money, not a formula.
const FORMULA = /\$\$([^$]+?)\$\$|\\\[([\s\S]+?)\\\]|\\\(([\s\S]+?)\\\)|(?<![\\$])\$(?!\s)((?:\\.|[^$\\\n])+?)(?<!\s)\$(?!\d)/g;

/** `text` as nodes: plain text, and a typeset span for each formula KaTeX can typeset. */
export function withMath(text) {
  const nodes = [];
  let last = 0;
  for (const match of String(text ?? "").matchAll(FORMULA)) {
    const [source, display, bracketed, parenthesised, inline] = match;
    if (match.index > last) nodes.push(text.slice(last, match.index));
    nodes.push(formula(source, display ?? bracketed ?? parenthesised ?? inline, display !== undefined || bracketed !== undefined));
    last = match.index + source.length;
  }
  if (last < String(text ?? "").length) nodes.push(String(text).slice(last));
  return nodes;
}

/** A formula given as LaTeX without delimiters (a formal statement), typeset inline. */
export function mathOf(tex) {
  return formula(tex, tex, false);
}

function formula(source, tex, display) {
  const katex = window.katex;
  if (!katex) return source;
  const span = el("span", {
    class: display ? "math math-display" : "math",
    tabindex: "0",
    title: "click: the LaTeX source",
    "data-source": source,
  });
  try {
    katex.render(tex, span, { displayMode: display, output: "html", throwOnError: true, strict: "ignore" });
  } catch {
    return source;
  }
  const typeset = [...span.childNodes];
  const toggle = () => {
    const showSource = span.classList.toggle("math-source");
    span.replaceChildren(...(showSource ? [el("code", {}, source)] : typeset));
  };
  span.addEventListener("click", toggle);
  span.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      toggle();
    }
  });
  return span;
}
