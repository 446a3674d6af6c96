"""Unicode math symbols that pdflatex cannot typeset, rewritten as LaTeX commands."""

from __future__ import annotations

import re

# Letter-like symbols are wrapped in braces so `x_α` becomes `x_{\ensuremath{\alpha}}`:
# a bare \ensuremath after _ or ^ would be taken as the whole subscript and break.
_LETTER_LIKE: dict[str, str] = {
    "α": r"\alpha", "β": r"\beta", "γ": r"\gamma", "δ": r"\delta", "ε": r"\varepsilon",
    "ϵ": r"\epsilon", "ζ": r"\zeta", "η": r"\eta", "θ": r"\theta", "ϑ": r"\vartheta",
    "ι": r"\iota", "κ": r"\kappa", "λ": r"\lambda", "μ": r"\mu", "µ": r"\mu", "ν": r"\nu",
    "ξ": r"\xi", "π": r"\pi", "ϖ": r"\varpi", "ρ": r"\rho", "ϱ": r"\varrho", "σ": r"\sigma",
    "ς": r"\varsigma", "τ": r"\tau", "υ": r"\upsilon", "φ": r"\varphi", "ϕ": r"\phi",
    "χ": r"\chi", "ψ": r"\psi", "ω": r"\omega", "Γ": r"\Gamma", "Δ": r"\Delta",
    "Θ": r"\Theta", "Λ": r"\Lambda", "Ξ": r"\Xi", "Π": r"\Pi", "Σ": r"\Sigma",
    "Υ": r"\Upsilon", "Φ": r"\Phi", "Ψ": r"\Psi", "Ω": r"\Omega",
    "ℝ": r"\mathbb{R}", "ℕ": r"\mathbb{N}", "ℤ": r"\mathbb{Z}", "ℚ": r"\mathbb{Q}",
    "ℂ": r"\mathbb{C}", "ℙ": r"\mathbb{P}", "𝔼": r"\mathbb{E}", "ℓ": r"\ell", "ℏ": r"\hbar",
    "ℵ": r"\aleph", "∞": r"\infty", "∂": r"\partial", "∇": r"\nabla", "∅": r"\emptyset",
    "∗": r"\ast", "⋆": r"\star", "†": r"\dagger", "′": r"\prime", "⊤": r"\top", "⊥": r"\bot",
    "∎": r"\blacksquare", "□": r"\square", "■": r"\blacksquare", "△": r"\triangle",
}

# Relations, operators, arrows and delimiters keep their math spacing: no braces.
_OPERATORS: dict[str, str] = {
    "≤": r"\leq", "≥": r"\geq", "⩽": r"\leqslant", "⩾": r"\geqslant", "≠": r"\neq",
    "≈": r"\approx", "≡": r"\equiv", "≅": r"\cong", "≃": r"\simeq", "∼": r"\sim",
    "∝": r"\propto", "≪": r"\ll", "≫": r"\gg", "≺": r"\prec", "≻": r"\succ",
    "⪯": r"\preceq", "⪰": r"\succeq", "∈": r"\in", "∉": r"\notin", "∋": r"\ni",
    "⊂": r"\subset", "⊃": r"\supset", "⊆": r"\subseteq", "⊇": r"\supseteq",
    "⊊": r"\subsetneq", "⊋": r"\supsetneq", "∪": r"\cup", "∩": r"\cap", "⋃": r"\bigcup",
    "⋂": r"\bigcap", "∖": r"\setminus", "∑": r"\sum", "∏": r"\prod", "∫": r"\int",
    "∮": r"\oint", "√": r"\surd", "∀": r"\forall", "∃": r"\exists", "∄": r"\nexists",
    "¬": r"\neg", "∧": r"\wedge", "∨": r"\vee", "⊕": r"\oplus", "⊗": r"\otimes",
    "⊙": r"\odot", "∘": r"\circ", "∙": r"\bullet", "⋅": r"\cdot", "·": r"\cdot",
    "×": r"\times", "÷": r"\div", "±": r"\pm", "∓": r"\mp", "−": "-", "→": r"\to",
    "←": r"\leftarrow", "↔": r"\leftrightarrow", "⇒": r"\Rightarrow", "⇐": r"\Leftarrow",
    "⇔": r"\Leftrightarrow", "⟹": r"\implies", "⟸": r"\impliedby", "⟺": r"\iff",
    "↦": r"\mapsto", "↑": r"\uparrow", "↓": r"\downarrow", "⟶": r"\longrightarrow",
    "⟵": r"\longleftarrow", "↪": r"\hookrightarrow", "⊢": r"\vdash", "⊨": r"\models",
    "∥": r"\parallel", "‖": r"\|", "∣": r"\mid", "⟨": r"\langle", "⟩": r"\rangle",
    "⌊": r"\lfloor", "⌋": r"\rfloor", "⌈": r"\lceil", "⌉": r"\rceil", "⋯": r"\cdots",
    "⋮": r"\vdots", "⋱": r"\ddots", "∶": ":", "°": r"^{\circ}", "½": r"\tfrac{1}{2}",
    "¼": r"\tfrac{1}{4}", "¾": r"\tfrac{3}{4}",
}

_SUPERSCRIPTS = dict(zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻ⁿⁱ", "0123456789+-ni"))
_SUBSCRIPTS = dict(zip("₀₁₂₃₄₅₆₇₈₉₊₋", "0123456789+-"))


def _build_table() -> dict[str, str]:
    """Every symbol mapped to text that works in both text and math mode."""
    table = {char: "{\\ensuremath{" + cmd + "}}" for char, cmd in _LETTER_LIKE.items()}
    table.update({char: "\\ensuremath{" + cmd + "}" for char, cmd in _OPERATORS.items()})
    table.update({char: "\\ensuremath{^{" + s + "}}" for char, s in _SUPERSCRIPTS.items()})
    table.update({char: "\\ensuremath{_{" + s + "}}" for char, s in _SUBSCRIPTS.items()})
    return table


UNICODE_TO_LATEX: dict[str, str] = _build_table()
_SYMBOL_PATTERN = re.compile("|".join(re.escape(char) for char in UNICODE_TO_LATEX))


def replace_unicode_symbols(text: str) -> str:
    """Rewrite the Unicode math symbols of `text` as \\ensuremath commands."""
    return _SYMBOL_PATTERN.sub(lambda match: UNICODE_TO_LATEX[match.group(0)], text)
