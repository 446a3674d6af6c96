"""The statement as a question to an SMT solver (Z3): is there an input in the domains, where the
statement is defined, that satisfies the hypotheses and not the conclusion?

- `unsat`: there is none — the statement is proved by the solver (a decision procedure for the
  arithmetic it uses; Z3 is complete for linear integer and nonlinear real arithmetic, and may give
  up on nonlinear integers);
- `sat`: the solver's model is a counterexample candidate. It refutes the statement only once
  the exact evaluator (evaluate.py) confirms it at those values: the two must agree, and a
  disagreement is reported as a defect, never as a verdict;
- `unknown` (a timeout, or arithmetic beyond the solver): nothing is decided.

Python semantics are kept exactly: `//` and `%` round towards minus infinity (Z3's `div` and `mod`
are Euclidean, which differs for negative divisors), and each square root is a fresh variable
defined only where its argument is not negative, so a branch that never reaches it is not
constrained by it. Sums and products are written out first (expansion.py). The solver assumes
Statement.premises, the same premises Coq does; an `unsat` carries the kernel's certificate of the
statement's text (certificate.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

import z3

from lemmata.kernel.certificate import solver_certificate
from lemmata.kernel.evaluate import Interval, Value, evaluate
from lemmata.kernel.render import statement_text
from lemmata.kernel.semantics import Kind, kind_of
from lemmata.kernel.statement import Statement
from lemmata.kernel.surd import Surd, compare_exact, surd
from lemmata.kernel.tree import Const, Expr, FormalError, Op, Reduce, Var, integer_literal

#: Powers of a variable up to this exponent are written as products.
MAX_EXPANDED_POWER = 64
#: A power of an integer numeral is left to Z3 up to this exponent (1999**2000 is fine).
MAX_NUMERAL_POWER = 100_000
#: Digits of an irrational model value kept as an interval around it.
ALGEBRAIC_DIGITS = 40
#: The largest number handed to the solver, in bits (about 3,000 digits): Python turns larger
#: ones into text only past its own limit, and `factorial(2000)` once crashed the check so.
MAX_NUMERAL_BITS = 10_000


class NotExpressible(Exception):
    """The statement uses something the solver has no counterpart for (a variable exponent, gcd of
    variables, a sum over a variable range)."""


@dataclass(frozen=True)
class SolverAnswer:
    outcome: Literal["unsat", "sat", "unknown"]
    model: dict[str, Value] | None = None  # for sat: each variable's value (an Interval when irrational)
    reason: str = ""  # for unknown: the solver's reason
    certificate: str = ""  # for the unsat of prove_or_find_model: the kernel's certificate


def prove_or_find_model(statement: Statement, timeout_seconds: float = 5.0) -> SolverAnswer:
    """Ask for an input satisfying the premises (domains, hypotheses, definedness) but not the
    conclusion. NotExpressible when the statement cannot be put to the solver."""
    expanded = _expanded(statement)
    translation = _Translation(expanded)
    answer = _asked(lambda: translation.check([translation.term(expanded.conclusion, negated=True)], timeout_seconds))
    if answer.outcome == "unsat":
        return SolverAnswer("unsat", certificate=solver_certificate(statement_text(statement)))
    return answer


def satisfiable_assumptions(statement: Statement, timeout_seconds: float = 5.0) -> SolverAnswer:
    """Ask for an input satisfying the premises: `unsat` means the statement is vacuous (no input
    satisfies its hypotheses), `sat` gives a witness candidate."""
    expanded = _expanded(statement)
    return _asked(lambda: _Translation(expanded).check([], timeout_seconds))


def _expanded(statement: Statement) -> Statement:
    try:
        return statement.expanded()
    except FormalError as error:
        raise NotExpressible(str(error)) from None


def _asked(question: Callable[[], SolverAnswer]) -> SolverAnswer:
    """The solver's answer; NotExpressible when the statement could not be put to it at all."""
    try:
        return question()
    except (z3.Z3Exception, ValueError, OverflowError, RecursionError, ArithmeticError) as error:
        raise NotExpressible(f"the solver could not be given the statement ({type(error).__name__}: {error})") from None


class _Translation:
    def __init__(self, statement: Statement) -> None:
        self.statement = statement
        self.context = z3.Context()  # one per question: jobs in threads never share Z3's state
        self.kinds = statement.kinds
        self.symbols = {
            v.name: (z3.Int(v.name, self.context) if v.kind == "int" else z3.Real(v.name, self.context))
            for v in statement.variables
        }
        self.side_conditions: list[Any] = []
        self.fresh = 0

    def check(self, extra: list[Any], timeout_seconds: float) -> SolverAnswer:
        solver = z3.Solver(ctx=self.context)
        solver.set("timeout", max(1, int(timeout_seconds * 1000)))
        for premise in self.statement.premises():
            solver.add(self.term(premise))
        for term in extra:
            solver.add(term)
        solver.add(*self.side_conditions)
        result = solver.check()
        if result == z3.unsat:
            return SolverAnswer("unsat")
        if result == z3.sat:
            return SolverAnswer("sat", self._model(solver.model()))
        return SolverAnswer("unknown", reason=solver.reason_unknown())

    def term(self, expr: Expr, negated: bool = False) -> Any:
        translated = self._term(expr)
        return z3.Not(translated) if negated else translated

    def _model(self, model: Any) -> dict[str, Value]:
        values: dict[str, Value] = {}
        for variable in self.statement.variables:
            value = model.eval(self.symbols[variable.name], model_completion=True)
            values[variable.name] = _python_value(value)
        return values

    def _term(self, expr: Expr) -> Any:
        if isinstance(expr, Const):
            if isinstance(expr.value, int):
                return self._numeral(expr.value)
            return z3.RealVal(f"{expr.value.numerator}/{expr.value.denominator}", self.context)
        if isinstance(expr, Var):
            return self.symbols[expr.name]
        if isinstance(expr, Reduce):
            raise NotExpressible("a sum, product, all or any over a range that depends on a variable")
        return self._operation(expr)

    def _operation(self, expr: Op) -> Any:
        name, args = expr.name, expr.args
        if name in ("true", "false"):
            return z3.BoolVal(name == "true", self.context)
        if name in ("and", "or", "not", "implies", "iff", "ite"):
            return self._logic(name, args)
        if name in ("gcd", "lcm", "factorial"):
            return self._integer_function(expr)
        if name == "pow":
            return self._power(args[0], args[1])
        if name == "sqrt":
            return self._sqrt(args[0])
        kind = kind_of(expr, self.kinds) if name not in ("eq", "ne", "lt", "le", "gt", "ge") else self._common(args)
        terms = [self._as(kind, arg) for arg in args]
        return self._arithmetic(name, terms, kind)

    def _logic(self, name: str, args: tuple[Expr, ...]) -> Any:
        if name == "ite":
            kind = kind_of(Op("ite", args), self.kinds)
            branches = (
                [self._term(args[1]), self._term(args[2])] if kind == "bool" else [self._as(kind, a) for a in args[1:]]
            )
            return z3.If(self._term(args[0]), branches[0], branches[1])
        terms = [self._term(arg) for arg in args]
        return {
            "and": lambda: z3.And(*terms),
            "or": lambda: z3.Or(*terms),
            "not": lambda: z3.Not(terms[0]),
            "implies": lambda: z3.Implies(terms[0], terms[1]),
            "iff": lambda: terms[0] == terms[1],
        }[name]()

    def _arithmetic(self, name: str, terms: list[Any], kind: Kind) -> Any:
        a = terms[0]
        b = terms[1] if len(terms) > 1 else None
        simple = {
            "add": lambda: a + b,
            "sub": lambda: a - b,
            "mul": lambda: a * b,
            "neg": lambda: -a,
            "abs": lambda: z3.If(a >= 0, a, -a),
            "eq": lambda: a == b,
            "ne": lambda: a != b,
            "lt": lambda: a < b,
            "le": lambda: a <= b,
            "gt": lambda: a > b,
            "ge": lambda: a >= b,
        }
        if name in simple:
            return simple[name]()
        if name in ("min", "max"):
            result = terms[0]
            for term in terms[1:]:
                result = z3.If(term < result, term, result) if name == "min" else z3.If(term > result, term, result)
            return result
        if name == "truediv":
            return z3.ToReal(a) / z3.ToReal(b) if z3.is_int(a) else a / b
        if name in ("floordiv", "mod"):
            return self._floor_division(name, a, b)
        if name in ("divides", "even", "odd"):
            divisor, multiple = (a, b) if name == "divides" else (z3.IntVal(2, self.context), a)
            remainder = self._floor_division("mod", multiple, divisor)
            return remainder == (1 if name == "odd" else 0)
        if name == "floor":
            return z3.ToInt(a) if z3.is_real(a) else a
        if name == "ceil":
            return -z3.ToInt(-a) if z3.is_real(a) else a
        raise NotExpressible(f"{name} has no counterpart in the solver")

    def _floor_division(self, name: str, a: Any, b: Any) -> Any:
        # Z3's div is Euclidean; Python's rounds down. They agree for a positive divisor, and
        # a // b == (-a) // (-b) turns a negative divisor into a positive one.
        quotient = z3.If(b > 0, a / b, (-a) / (-b))
        return quotient if name == "floordiv" else a - b * quotient

    def _power(self, base: Expr, exponent: Expr) -> Any:
        literal = integer_literal(exponent)
        if literal is None:
            raise NotExpressible("a power with a variable or fractional exponent")
        kind = kind_of(Op("pow", (base, exponent)), self.kinds)
        term = self._as(kind, base)
        if isinstance(base, Const) and isinstance(base.value, int) and 0 <= literal <= MAX_NUMERAL_POWER:
            return self._as_kind(kind, self._numeral(base.value) ** literal)  # Z3 computes it
        if abs(literal) > MAX_EXPANDED_POWER:
            raise NotExpressible(f"a power of a variable with exponent {literal}")
        result = z3.IntVal(1, self.context) if kind == "int" else z3.RealVal(1, self.context)
        for _ in range(abs(literal)):
            result = result * term
        return 1 / result if literal < 0 else result

    def _sqrt(self, argument: Expr) -> Any:
        value = self._as("real", argument)
        self.fresh += 1
        root = z3.Real(f"sqrt!{self.fresh}", self.context)
        # Defined only where it is reached with a non-negative argument (definedness says where).
        self.side_conditions.append(z3.Implies(value >= 0, z3.And(root >= 0, root * root == value)))
        return root

    def _integer_function(self, expr: Op) -> Any:
        if any(not isinstance(arg, Const) for arg in expr.args):
            raise NotExpressible(f"{expr.name} of a variable has no counterpart in the solver")
        try:
            value = evaluate(expr, {}, {})
        except ArithmeticError as error:  # Undefined, TooLarge, Undecided
            raise NotExpressible(f"{expr.name}: {error}") from None
        assert isinstance(value, int)
        return self._numeral(value)

    def _numeral(self, value: int) -> Any:
        if value.bit_length() > MAX_NUMERAL_BITS:
            raise NotExpressible(f"a number of {value.bit_length()} bits, more than the solver is given")
        return z3.IntVal(value, self.context)

    def _as_kind(self, kind: Kind, term: Any) -> Any:
        return z3.ToReal(term) if kind == "real" else term

    def _common(self, args: tuple[Expr, ...]) -> Kind:
        kinds = [kind_of(arg, self.kinds) for arg in args]
        return "real" if "real" in kinds else "int"

    def _as(self, kind: Kind, expr: Expr) -> Any:
        term = self._term(expr)
        return z3.ToReal(term) if kind == "real" and z3.is_int(term) else term


def _quadratic_root(value: Any, around: Interval) -> Surd | None:
    """The algebraic number exactly, as r + c·√d, when its polynomial is quadratic: the root of
    a·x² + b·x + c that lies in `around`. Which root it is needs no trust in Z3's numbering: a
    wrong one would fail the exact evaluation that confirms any value the solver gives."""
    try:
        coefficients = [term.as_long() for term in value.poly()]
    except (AttributeError, z3.Z3Exception):  # a polynomial not read as integers: the interval stays
        return None
    if len(coefficients) != 3 or coefficients[2] == 0:
        return None
    c, b, a = (Fraction(number) for number in coefficients)
    discriminant = b * b - 4 * a * c
    if discriminant < 0:  # no real root: not a value Z3 gives for a real
        return None
    for root in (surd(-b / (2 * a), Fraction(sign, 2) / a, int(discriminant)) for sign in (1, -1)):
        if isinstance(root, Surd) and compare_exact("ge", root, around.low) and compare_exact("le", root, around.high):
            return root
    return None


def _python_value(value: Any) -> Value:
    if z3.is_int_value(value):
        return value.as_long()
    if z3.is_rational_value(value):
        fraction = Fraction(value.numerator_as_long(), value.denominator_as_long())
        return fraction.numerator if fraction.denominator == 1 else fraction
    if z3.is_algebraic_value(value):
        approximation = value.approx(ALGEBRAIC_DIGITS)
        middle = Fraction(approximation.numerator_as_long(), approximation.denominator_as_long())
        width = Fraction(1, 10**ALGEBRAIC_DIGITS)
        around = Interval(middle - width, middle + width)
        return _quadratic_root(value, around) or around
    if z3.is_true(value) or z3.is_false(value):
        return z3.is_true(value)
    raise FormalError(f"the solver gave a value lemmata cannot read: {value}")
