"""Mathematics of model text as a reader sees it, in plain Unicode: for places that cannot typeset,
such as the lemma graph's SVG labels (`If $a$ and $b$ are even, $a + b \\in 2\\mathbb{Z}$` reads
`If a and b are even, a + b ∈ 2ℤ`). A formula's delimiters go, its commands of the Unicode table
(unicode_symbols.py) become their symbols, and a few structures become their usual text form:
\\frac{a}{b} as (a)/(b), \\sqrt{x} as √(x), blackboard letters as ℤ, ℝ, …, font and spacing commands
disappear. What it does not know stays as written: the label is a glance, the full statement with
its source is one hover away (the box's tooltip)."""

from __future__ import annotations

import re

from lemmata.latex.unicode_symbols import LETTER_LIKE, OPERATORS, SUBSCRIPTS, SUPERSCRIPTS

_SYMBOLS = {command: char for char, command in {**OPERATORS, **LETTER_LIKE}.items()}
_SYMBOLS.update(
    {
        r"\le": "≤",
        r"\ge": "≥",
        r"\ne": "≠",
        r"\cdot": "·",
        r"\times": "×",
        r"\mid": "∣",
        r"\nmid": "∤",
        r"\to": "→",
        r"\ldots": "…",
        r"\cdots": "⋯",
        r"\dots": "…",
        r"\infty": "∞",
        r"\pm": "±",
        r"\{": "{",
        r"\}": "}",
        r"\%": "%",
    }
)
_BLACKBOARD = {"N": "ℕ", "Z": "ℤ", "Q": "ℚ", "R": "ℝ", "C": "ℂ", "P": "ℙ"}
_SUPERSCRIPT_OF = {plain: char for char, plain in SUPERSCRIPTS.items()}
_SUBSCRIPT_OF = {plain: char for char, plain in SUBSCRIPTS.items()}

# The formulas of a text, as the browser's math.js finds them: $$…$$, \[…\], \(…\), and $…$ whose
# content neither starts nor ends with a space and which no digit follows ("$5 and $6" is money).
_FORMULA = re.compile(
    r"\$\$([^$]+?)\$\$|\\\[([\s\S]+?)\\\]|\\\(([\s\S]+?)\\\)|(?<![\\$])\$(?!\s)((?:\\.|[^$\\\n])+?)(?<!\s)\$(?!\d)"
)
_BLACKBOARD_LETTER = re.compile(r"\\(?:mathbb|Bbb)\s*\{?\s*([A-Z])\s*\}?")
_FRACTION = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_ROOT = re.compile(r"\\sqrt\s*\{([^{}]*)\}")
_FONT = re.compile(r"\\(?:mathrm|mathit|mathbf|mathsf|mathcal|operatorname|text|textrm|textit|emph)\s*\{([^{}]*)\}")
_SPACING = re.compile(r"\\(?:,|;|:|!|quad|qquad|left|right|big|Big|bigg|Bigg)(?![A-Za-z])|\\ ")
_COMMAND = re.compile(r"\\[A-Za-z]+|\\[{}%]")
_SCRIPT = re.compile(r"([\^_])(?:\{([^{}]*)\}|([0-9A-Za-z+\-]))")


def readable_math(text: str) -> str:
    """`text` with each of its formulas as plain Unicode (see the module's docstring); the prose
    around them is left as it is."""
    return " ".join(_FORMULA.sub(lambda match: _plain(next(part for part in match.groups() if part)), text).split())


def _plain(text: str) -> str:
    text = _BLACKBOARD_LETTER.sub(lambda match: _BLACKBOARD.get(match.group(1), match.group(1)), text)
    text = _FONT.sub(r"\1", text)
    text = _FRACTION.sub(lambda match: f"{_grouped(match.group(1))}/{_grouped(match.group(2))}", text)
    text = _ROOT.sub(lambda match: f"√{_grouped(match.group(1))}", text)
    text = _SPACING.sub(" ", text)
    text = _COMMAND.sub(lambda match: _SYMBOLS.get(match.group(0), match.group(0)), text)
    return _SCRIPT.sub(_script, text).strip()


def _grouped(part: str) -> str:
    """`a` stays `a`; `n+1` becomes `(n+1)`, so that a/(n+1) keeps its meaning."""
    part = part.strip()
    return part if re.fullmatch(r"[\w.]+", part) else f"({part})"


def _script(match: re.Match[str]) -> str:
    marker, body = match.group(1), match.group(2) if match.group(2) is not None else match.group(3)
    table = _SUPERSCRIPT_OF if marker == "^" else _SUBSCRIPT_OF
    if body and all(char in table for char in body):
        return "".join(table[char] for char in body)
    return f"{marker}({body})" if len(body) > 1 else f"{marker}{body}"
