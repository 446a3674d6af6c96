"""bench/formal.py's false twins: each real statement below (miniF2F's validation split, copied
here: CI may not have ../shared) and each edge case gets a twin that differs from it, by the rule
its form calls for, with an answer that is not numerically the original's. And the bench's sample,
outcomes and exit status."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

from unit.bench import load_bench

formal = load_bench("formal")

#: name, statement (verbatim), the twin's rule, what the twin says instead (the end of the twin).
ROWS = [
    (
        "aimeI_2000_p7",
        "Suppose that $x,$ $y,$ and $z$ are three positive numbers that satisfy the equations $xyz = 1,$ $x + \\frac {1}{z} = 5,$ and $y + \\frac {1}{x} = 29.$ Then $z + \\frac {1}{y} = \\frac {m}{n},$ where $m$ and $n$ are [[relatively prime]] positive integers. Find $m + n$.\n\n\nnote: this is the type of problem that makes you think symmetry, but actually can be solved easily with substitution, and other normal technniques Show that it is 005.",
        "answer +1",
        "Show that it is 006.",
    ),
    (
        "amc12_2000_p15",
        "Let $f$ be a [[function]] for which $f\\left(\\dfrac{x}{3}\\right) = x^2 + x + 1$. Find the sum of all values of $z$ for which $f(3z) = 7$.\n\n$\\text {(A)}\\ -1/3 \\qquad \\text {(B)}\\ -1/9 \\qquad \\text {(C)}\\ 0 \\qquad \\text {(D)}\\ 5/9 \\qquad \\text {(E)}\\ 5/3$ Show that it is \\textbf{(B) }-\\frac19.",
        "answer +1",
        "Show that it is \\textbf{(B) }-\\frac29.",
    ),
    (
        "amc12a_2008_p2",
        "What is the [[reciprocal]] of $\\frac{1}{2}+\\frac{2}{3}$?\n\n$\\mathrm{(A)}\\ \\frac{6}{7}\\qquad\\mathrm{(B)}\\ \\frac{7}{6}\\qquad\\mathrm{(C)}\\ \\frac{5}{3}\\qquad\\mathrm{(D)}\\ 3\\qquad\\mathrm{(E)}\\ \\frac{7}{2}$ Show that it is \\frac{6}{7}.",
        "answer +1",
        "Show that it is \\frac{7}{7}.",
    ),
    (
        "mathd_algebra_182",
        "Expand the following expression: $7(3y+2)$ Show that it is 21y+14.",
        "answer +1",
        "Show that it is 22y+14.",
    ),
    (
        "mathd_algebra_126",
        "The midpoint of the line segment between $(x,y)$ and $(-9,1)$ is $(3,-5)$. Find $(x,y)$. Show that it is (15,-11).",
        "answer +1",
        "Show that it is (16,-11).",
    ),
    (
        "mathd_algebra_140",
        "The expression $24x^2-19x-35$ can be written as $(Ax-5)(2Bx+C)$, where $A$, $B$, and $C$ are positive numbers. Find $AB-3C$. Show that it is -9.",
        "answer +1",
        "Show that it is -10.",
    ),
    (
        "mathd_numbertheory_169",
        "What is the greatest common factor of $20 !$ and $200,\\!000$?  (Reminder: If $n$ is a positive integer, then $n!$ stands for the product $1\\cdot 2\\cdot 3\\cdot \\cdots \\cdot (n-1)\\cdot n$.) Show that it is 40,\\!000.",
        "answer +1",
        "Show that it is 40,\\!001.",
    ),
    (
        "mathd_numbertheory_37",
        "Compute the least common multiple of $9999$ and $100{,}001$. Show that it is 90{,}900{,}909.",
        "answer +1",
        "Show that it is 90{,}900{,}910.",
    ),
    (
        "mathd_algebra_104",
        "In a 8 fluid ounce bottle of Vitamin Water, there are 125 calories. How many calories would be contained in a 12 fluid ounce bottle? Express your answer in decimal form. Show that it is 187.5.",
        "answer +1",
        "Show that it is 188.5.",
    ),
    (
        "amc12a_2010_p22",
        "What is the minimum value of $f(x)=\\left|x-1\\right| + \\left|2x-1\\right| + \\left|3x-1\\right| + \\cdots + \\left|119x - 1 \\right|$?\n\n$\\textbf{(A)}\\ 49 \\qquad \\textbf{(B)}\\ 50 \\qquad \\textbf{(C)}\\ 51 \\qquad \\textbf{(D)}\\ 52 \\qquad \\textbf{(E)}\\ 53$ Show that it is 49\\ \\textbf{(A)}.",
        "answer +1",
        "Show that it is 50\\ \\textbf{(A)}.",
    ),
    (
        "amc12b_2003_p17",
        "If $\\log (xy^3) = 1$ and $\\log (x^2y) = 1$, what is $\\log (xy)$?\n\n$\\mathrm{(A)}\\ -\\frac 12 \n\\qquad\\mathrm{(B)}\\ 0 \n\\qquad\\mathrm{(C)}\\ \\frac 12\n\\qquad\\mathrm{(D)}\\ \\frac 35 \n\\qquad\\mathrm{(E)}\\ 1$ Show that it is \\mathrm{(D)} \\frac 35.",
        "answer +1",
        "Show that it is \\mathrm{(D)} \\frac 45.",
    ),
    (
        "amc12a_2003_p25",
        "Let $f(x)= \\sqrt{ax^2+bx} $.  For how many [[real number | real]] values of $a$ is there at least one [[positive number | positive]] value of $ b $ for which the [[domain]] of $f $ and the [[range]] of $ f $ are the same [[set]]?\n\n$ \\mathrm{(A) \\ 0 } \\qquad \\mathrm{(B) \\ 1 } \\qquad \\mathrm{(C) \\ 2 } \\qquad \\mathrm{(D) \\ 3 } \\qquad \\mathrm{(E) \\ \\mathrm{infinitely \\ many} }  $ Show that it is \\mathrm{(B) \\ 2 }.",
        "answer +1",
        "Show that it is \\mathrm{(B) \\ 3 }.",
    ),
    (
        "amc12b_2003_p6",
        "The second and fourth terms of a geometric sequence are $2$ and $6$. Which of the following is a possible first term?\n\n$\\textbf{(A) } -\\sqrt{3}  \\qquad\\textbf{(B) } -\\frac{2\\sqrt{3}}{3} \\qquad\\textbf{(C) } -\\frac{\\sqrt{3}}{3} \\qquad\\textbf{(D) } \\sqrt{3} \\qquad\\textbf{(E) } 3$ Show that it is \\textbf{(B)}\\ -\\frac{2\\sqrt{3}}{3}.",
        "answer +1",
        "Show that it is \\textbf{(B)}\\ -\\frac{3\\sqrt{3}}{3}.",
    ),
    (
        "amc12a_2009_p5",
        "One dimension of a cube is increased by $1$, another is decreased by $1$, and the third is left unchanged. The volume of the new rectangular solid is $5$ less than that of the cube. What was the volume of the cube?\n\n$\\textbf{(A)}\\ 8 \\qquad \\textbf{(B)}\\ 27 \\qquad \\textbf{(C)}\\ 64 \\qquad \\textbf{(D)}\\ 125 \\qquad \\textbf{(E)}\\ 216$ Show that it is \\text{(D)}.",
        "next choice",
        "Show that it is \\text{(E)}.",
    ),
    (
        "amc12b_2002_p3",
        "For how many positive integers $n$ is $n^2 - 3n + 2$ a [[prime]] number?\n\n$\\mathrm{(A)}\\ \\text{none}\n\\qquad\\mathrm{(B)}\\ \\text{one}\n\\qquad\\mathrm{(C)}\\ \\text{two}\n\\qquad\\mathrm{(D)}\\ \\text{more\\ than\\ two,\\ but\\ finitely\\ many}\n\\qquad\\mathrm{(E)}\\ \\text{infinitely\\ many}$ Show that it is \\mathrm{(B)}\\ \\text{one}.",
        "next choice",
        "Show that it is \\mathrm{(C)}\\ \\text{two}.",
    ),
    (
        "mathd_algebra_568",
        "Simplify $(a-1)(a+1)(a+2) - (a-2)(a+1).$ Show that it is a^3 + a^2.",
        "answer + 1 appended",
        "Show that it is a^3 + a^2 + 1.",
    ),
    (
        "algebra_apb4leq8ta4pb4",
        "Show that for any positive real numbers $a$ and $b$, $(a+b)^4 \\leq 8(a^4 + b^4)$.",
        "relation turned",
        "$(a+b)^4 > 8(a^4 + b^4)$.",
    ),
    (
        "algebra_2varlineareq_xpeeq7_2xpeeq3_eeq11_xeqn4",
        "Given two complex numbers x and e, if we assume that $x + e = 7$ and $2x + e = 3$, then show that $e = 11$ and $x=-4$.",
        "relation turned",
        "show that $e = 11$ and $x\\neq-4$.",
    ),
    (
        "induction_sum_odd",
        "Show that for positive integer $n$, $\\sum_{k=0}^{n-1} (2k + 1) = n^2$.",
        "relation turned",
        "$\\sum_{k=0}^{n-1} (2k + 1) \\neq n^2$.",
    ),
    (
        "induction_divisibility_3divnto3m2n",
        "Show that for any natural number $n \\in \\mathbb{N}$, $3 \\mid n^3 + 2n$ .",
        "relation turned",
        "$3 \\nmid n^3 + 2n$ .",
    ),
    (
        "imo_1966_p4",
        "Prove that for every natural number $n$, and for every real number $x \\neq \\frac{k\\pi}{2^t}$ ($t=0,1, \\dots, n$; $k$ any integer)\n$ \\frac{1}{\\sin{2x}}+\\frac{1}{\\sin{4x}}+\\dots+\\frac{1}{\\sin{2^nx}}=\\cot{x}-\\cot{2^nx}  $",
        "relation turned",
        "\\frac{1}{\\sin{2^nx}}\\neq\\cot{x}-\\cot{2^nx}  $",
    ),
    (
        "imo_1964_p1_2",
        "Show that for any natural number $n$, $7$ does not divide $2^n + 1$.\n",
        "relation word",
        "$7$ divides $2^n + 1$.\n",
    ),
    (
        "imo_1987_p6",
        "Let $n $ be an integer greater than or equal to 2.  Prove that if $k^2 + k + n $ is prime for all integers $k $ such that $ 0 \\leq k \\leq \\sqrt{n/3} $, then $k^2 + k + n $ is prime for all integers $k $ such that $0 \\leq k \\leq n - 2 $.",
        "relation word",
        "then $k^2 + k + n $ is not prime for all integers $k $ such that $0 \\leq k \\leq n - 2 $.",
    ),
    (
        "numbertheory_xsqpysqintdenomeq",
        "Let $x$ and $y$ be rational numbers. Show that if $x^2 + y^2$ is an integer, then $x$ and $y$ have the same denominator.",
        "it is false that",
        "then it is false that $x$ and $y$ have the same denominator.",
    ),
    (
        "imo_1990_p3",
        "Determine all integers $n > 1$ such that $\\frac{2^n+1}{n^2}$ is an integer.",
        "no claim",
        "It is false that determine all integers $n > 1$ such that $\\frac{2^n+1}{n^2}$ is an integer.",
    ),
]

#: Answers that are expressions, not numbers: their twins above are checked by hand (22y+14 is not
#: 21y+14 at y = 0; -3 sqrt(3)/3 is not -2 sqrt(3)/3).
EXPRESSION_ANSWERS = {"mathd_algebra_182", "amc12b_2003_p6"}

#: Edge cases of the answer rule: answer -> the twin's answer.
EDGES = [
    ("0", "1"),
    ("999", "1000"),
    ("099", "100"),
    ("-1", "-2"),
    ("-0.5", "-1.5"),
    ("9{,}999", "10{,}000"),
    ("$\\frac{9}{10}$", "$\\frac{10}{10}$"),
    ("\\frac98", "\\frac{10}8"),
    ("\\dfrac{-1}{2}", "\\dfrac{-2}{2}"),
    ("2^{10}", "3^{10}"),
    ("x_1 + 5", "x_1 + 6"),
    ("\\textbf{(E)}", "\\textbf{(A)}"),
    ("$\\text{E}$", "$\\text{A}$"),
    ("C", "D"),
    ("p+q-r", "p+q-r + 1"),
]


@pytest.mark.parametrize(("name", "statement", "rule", "ending"), ROWS, ids=[row[0] for row in ROWS])
def test_the_twin_of_a_real_statement_changes_what_it_claims(name: str, statement: str, rule: str, ending: str) -> None:
    twin = formal.false_twin(statement)
    assert twin.statement != statement
    assert twin.rule == rule
    assert twin.statement.endswith(ending), twin.statement[-120:]
    assert not statement.endswith(ending)
    assert formal.false_twin(statement) == twin  # deterministic
    original, changed = answer_of(statement), answer_of(twin.statement)
    if original is not None:
        assert changed is not None and changed != original
        before, after = value(original), value(changed)
        if rule == "answer +1" and name not in EXPRESSION_ANSWERS:
            assert before is not None and after is not None and after != before, (original, changed)


@pytest.mark.parametrize(("answer", "expected"), EDGES)
def test_the_answer_rule_on_edge_cases(answer: str, expected: str) -> None:
    statement = f"What is it? Show that it is {answer}."
    twin = formal.false_twin(statement)
    assert twin.statement == f"What is it? Show that it is {expected}."
    before, after = value(answer), value(expected)
    if before is not None or after is not None:
        assert before is not None and after is not None and after != before


def test_only_the_last_answer_and_the_conclusion_change() -> None:
    statement = "Given $x = 3$ and $y \\leq 2$, show that it is 5. Show that it is 7."
    assert formal.false_twin(statement).statement == statement[:-2] + "8."
    claim = "Suppose $a \\geq 1$ and $b = 2$. Prove that $a + b \\geq 3$."
    assert formal.false_twin(claim).statement == "Suppose $a \\geq 1$ and $b = 2$. Prove that $a + b < 3$."
    left = "Show that $\\left| x \\right| \\le y$ when $y \\ge x$ and $y\\ge -x$."
    assert formal.false_twin(left).statement.endswith("$y< -x$.")


def test_every_twin_differs_and_its_answer_is_another_number() -> None:
    for name, statement, _, _ in ROWS:
        twin = formal.false_twin(statement).statement
        assert twin != statement, name
    for answer, _ in EDGES:
        assert formal.false_twin(f"Show that it is {answer}.").statement != f"Show that it is {answer}."


def test_the_sample_is_seeded_and_a_smaller_one_is_a_prefix_of_a_larger_one() -> None:
    rows = [{"name": f"r{number}", "statement": "s"} for number in range(244)]
    hundred = formal.sample(rows, 100, formal.DEFAULT_SEED)
    assert len(hundred) == 100 and len({row["name"] for row in hundred}) == 100
    assert formal.sample(rows, 100, formal.DEFAULT_SEED) == hundred
    assert formal.sample(rows, 6, formal.DEFAULT_SEED) == hundred[:6]
    assert sorted(row["name"] for row in formal.sample(rows, None, 34)) == sorted(row["name"] for row in rows)
    assert formal.sample(rows, 100, 35) != hundred


def entry(kind: str, status: str, not_formalized: str = "") -> dict:
    return {
        "name": "n",
        "kind": kind,
        "rule": "",
        "statement": "s",
        "wall_seconds": 10.0,
        "model_calls": 1,
        "tokens_evaluated": 50,
        "result": {
            "status": status,
            "formal": {
                "statement": "x = 1",
                "checker": "z3",
                "method": "solver",
                "counterexample": {"x": "0"} if status == "refuted" else None,
                "not_formalized": not_formalized,
            },
        },
    }


def test_a_false_twin_machine_checked_fails_the_bench_and_is_listed() -> None:
    fine = [entry("true", "machine_checked"), entry("twin", "refuted"), entry("twin", "unverified", "refused")]
    assert formal.exit_status(fine) == 0
    assert [formal.outcome(item) for item in fine] == ["machine_checked", "refuted", "not_formalized"]
    assert formal.outcome({"kind": "twin", "error": "exit 2", "wall_seconds": 1.0}) == "failed"
    unsound = [*fine, entry("twin", "machine_checked"), entry("true", "refuted")]
    assert formal.exit_status(unsound) == 1
    listing = formal.cases_to_look_at(unsound)
    assert "False twin machine-checked" in listing and "True statement refuted" in listing
    assert "counterexample: x = 0" in listing
    text = formal.table(unsound)
    assert "| machine-checked | 1/2 (50%) | 1/3 (33%) |" in text
    assert "| refuted | 1/2 (50%) | 1/3 (33%) |" in text


# ---------------------------------------------------------------------------------------------
# An independent reading of an answer's value, for the checks above.

_MARKS = re.compile(
    r"\\(?:textbf|mathrm|mathbf|text)\s*\{\s*\(?[A-E]\)?\s*\}?|\(\s*\\(?:text|mathrm)\s*\{?[A-E]\}?\s*\)|\([A-E]\)"
)


def answer_of(statement: str) -> str | None:
    head, marker, answer = statement.rpartition("Show that it is")
    return answer.strip().rstrip(".").strip() if marker else None


def value(answer: str) -> tuple[Fraction, ...] | None:
    """The number(s) an answer states: an integer (separators, leading zeros), a decimal, a
    fraction (\\frac{a}{b}, \\frac ab, a/b), signed; a pair (a, b). None for anything else."""
    text = _MARKS.sub(" ", answer).replace("$", "").replace("\\ ", " ").replace("~", " ").replace("\\;", " ")
    text = text.replace(",\\!", "").replace("{,}", "").strip()
    if text.count("{") != text.count("}"):  # what a choice mark leaves: \mathrm{(B) \ 2 }
        text = text.strip("{} ")
    if text.startswith("{") and text.endswith("}") and text.count("{") == 1:
        text = text[1:-1].strip()
    if text.startswith("(") and text.endswith(")"):
        parts = [value(part) for part in text[1:-1].split(",")]
        return None if any(part is None for part in parts) else tuple(part[0] for part in parts if part)
    sign = -1 if text.startswith("-") else 1
    text = text.lstrip("-").strip()
    short = re.fullmatch(r"\\[dtc]?frac\s*(\d)\s*(\d)", text)
    braced = re.fullmatch(r"\\[dtc]?frac\s*\{\s*(-?\d+)\s*\}\s*\{\s*(\d+)\s*\}", text)
    mixed = re.fullmatch(r"\\[dtc]?frac\s*\{\s*(\d+)\s*\}\s*(\d)", text)
    slash = re.fullmatch(r"(\d+)\s*/\s*(\d+)", text)
    for match in (short, braced, mixed, slash):
        if match:
            return (sign * Fraction(int(match.group(1)), int(match.group(2))),)
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        return (sign * Fraction(text),)
    return None
