"""Which commands are math, and what arguments they take, for repairing math written in text.

An argument spec is a string read left to right: `s` an optional star, `o` an optional
[..] argument, `m` a mandatory argument (a {..} group or one token), `d` a delimiter
token (`(`, `\\langle`). The lists are curated: every MATH_ONLY command stops the compile
with "Missing $ inserted" (or "allowed only in math mode") when it stands in running text.
"""

from __future__ import annotations

import re

from lemmata.latex.document import MATH_PACKAGE_PATH
from lemmata.latex.texscan import ESCAPE, matching_brace, optional_argument_end, skip_blanks

_GREEK = """
alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa varkappa lambda mu
nu xi pi varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta
Lambda Xi Pi Sigma Upsilon Phi Psi Omega
"""
# Relations, binary operators, arrows, quantifiers, big and named operators (\sum, \lim): each
# expects an operand beside it, so the repair may pull `x` and `y` of `x \leq y` into the formula.
_JOINERS = """
leq le geq ge neq ne leqslant geqslant lesssim gtrsim ll gg approx approxeq equiv sim simeq
cong propto prec succ preceq succeq in notin ni subset subseteq subsetneq supset supseteq
supsetneq sqsubseteq mid nmid parallel perp models vdash dashv asymp doteq coloneqq eqqcolon
triangleq cdot times div pm mp ast star circ bullet oplus ominus otimes odot cup cap setminus
smallsetminus wedge vee land lor sqcup sqcap uplus dagger ddagger to gets rightarrow leftarrow
leftrightarrow Rightarrow Leftarrow Leftrightarrow longrightarrow longleftarrow Longrightarrow
Longleftarrow longleftrightarrow Longleftrightarrow implies impliedby iff mapsto longmapsto
hookrightarrow hookleftarrow uparrow downarrow Uparrow Downarrow rightharpoonup
twoheadrightarrow forall exists nexists neg lnot not sum prod coprod int iint iiint oint
bigcup bigcap bigoplus bigotimes bigodot bigvee bigwedge bigsqcup biguplus bmod colon
therefore because log ln lg exp det lim sup inf limsup liminf max min Pr gcd deg dim ker hom arg
sin cos tan cot sec csc sinh cosh tanh coth arcsin arccos arctan
"""
_SYMBOLS = """
infty partial nabla emptyset varnothing ell hbar hslash aleph imath jmath Re Im wp angle
triangle square blacksquare Box Diamond top bot prime backslash surd cdots ddots vert Vert
lvert rvert lVert rVert langle rangle lfloor rfloor lceil rceil displaystyle textstyle |
"""
_WITH_ARGUMENTS = {
    "m": """mathbb mathcal mathbf mathrm mathit mathsf mathtt mathfrak mathnormal boldsymbol
            hat bar tilde vec dot ddot check breve acute grave mathring widehat widetilde overline
            underbrace overbrace overrightarrow overleftarrow pmod pod mod substack""",
    "mm": "frac dfrac tfrac binom dbinom tbinom overset underset stackrel",
    "omm": "cfrac",
    "om": "sqrt xrightarrow xleftarrow",
    "sm": "operatorname",
    "d": "big Big bigg Bigg bigl bigr Bigl Bigr biggl biggr Biggl Biggr",
}

MATH_ONLY: dict[str, str] = {
    "\\" + name: spec
    for spec, names in [("", _GREEK + _JOINERS + _SYMBOLS), *_WITH_ARGUMENTS.items()]
    for name in names.split()
}
JOINERS: frozenset[str] = frozenset("\\" + name for name in _JOINERS.split()) | {
    "\\pmod",
    "\\pod",
    "\\mod",
    "\\defeq",
    "\\argmin",
    "\\argmax",
}
# \left and \right pair up across the formula between them; \middle sits inside one.
SIZED_PAIR = ("\\left", "\\right", "\\middle")

_STY_LINE = re.compile(r"^\\lemmata@(provide|operator|delimiter|define)\*?\{(\\[A-Za-z]+)\}(.*)$", re.M)


def _text_safe_commands() -> dict[str, str]:
    """The lemmata-math macros (usable in text and math) with their argument specs."""
    commands = {"\\ensuremath": "m"}
    for kind, name, rest in _STY_LINE.findall(MATH_PACKAGE_PATH.read_text(encoding="utf-8")):
        takes_one = kind == "define" and "[1]" in rest
        commands[name] = "som" if kind == "delimiter" else "m" if takes_one else ""
    return commands


# Math that also works in text mode: wrapped only when a `_` or `^` follows it (\RR^n).
TEXT_SAFE: dict[str, str] = _text_safe_commands()


# One argument token: a control sequence or a character that can stand as an argument.
_TOKEN = re.compile(ESCAPE + r"|[^\s}$%\x00]")


def arguments_end(text: str, index: int, spec: str) -> int:
    """Index after the arguments that `spec` describes, as many of them as are present."""
    for kind in spec:
        if kind == "s":
            star = skip_blanks(text, index)
            index = star + 1 if text[star : star + 1] == "*" else index
        elif kind == "o":
            index = optional_argument_end(text, index) or index
        else:
            token = _TOKEN.match(text, skip_blanks(text, index))
            if token is None:
                return index
            if token.group(0) == "{" and kind == "m":
                index = matching_brace(text, token.start()) or index
            else:
                index = token.end()
    return index
