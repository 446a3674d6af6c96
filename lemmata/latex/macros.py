"""What the writer may use of lemmata-math, as prompt text (the environments are in prompts/writer.md)."""

from __future__ import annotations

_MACRO_GROUPS: tuple[tuple[str, str], ...] = (
    (
        "Number sets, expectation, probability (blackboard bold)",
        r"\RR \NN \ZZ \QQ \CC \FF \EE \PP, also \R \N \Z \Q \C \E \Prob",
    ),
    ("Calligraphic letters", " ".join("\\c" + letter for letter in "ABCDEFGHIJKLMNOPQRSTUVWXYZ")),
    (
        "Bold vectors",
        r"\ba \bb \bc \bd \be \bg \bh \bk \bn \bp \bq \br \bs \bt \bu \bv \bw \bx \by \bz, "
        r"\bzero \bone",
    ),
    ("Bold matrices", r"\bA \bB \bD \bH \bI \bK \bL \bM \bP \bQ \bS \bU \bV \bW \bX \bY \bZ"),
    (
        "Bold Greek",
        r"\balpha \bbeta \bgamma \bdelta \bepsilon \bvarepsilon \btheta \bkappa \blambda "
        r"\bmu \bnu \bxi \bpi \brho \bsigma \btau \bphi \bpsi \bomega \bGamma \bDelta "
        r"\bTheta \bLambda \bPi \bSigma \bPhi \bPsi \bOmega",
    ),
    ("Any bold symbol", r"\bm{x}"),
    (
        r"Paired delimiters (the starred form grows with its content: \norm*{x})",
        r"\abs{x} \norm{x} \inner{x, y} \set{x : x > 0} \paren{x} \bracket{x} \floor{x} \ceil{x}",
    ),
    ("Operators", r"\argmin \argmax \Var \Cov \tr \rank \diag \supp \sign \dist"),
    ("Other", r"\eps (varepsilon), \ind (bold 1, the indicator), \defeq (colon-equals)"),
)
#: The titles of the macro list's groups, as the writer's prompt shows them (never the paper's text).
MACRO_GROUP_TITLES = tuple(title for title, _ in _MACRO_GROUPS)

MACRO_SUMMARY: str = "\n".join(f"- {title}: {macros}" for title, macros in _MACRO_GROUPS)
