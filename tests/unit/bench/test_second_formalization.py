"""bench/second_formalization.py's comparison: two formal statements hold at the same inputs, or
the solver names one where they do not."""

from __future__ import annotations

from lemmata.formal.reading import read_statement
from unit.bench import load_bench

bench = load_bench("second_formalization")


def test_a_renamed_statement_is_equivalent_and_a_swap_of_names_is_no_renaming() -> None:
    first = read_statement([("n", "integer"), ("m", "integer")], ["n % 2 == 0"], "(n + m) % 2 == m % 2")
    second = read_statement([("a", "integer"), ("b", "integer")], ["a % 2 == 0"], "(a + b) % 2 == b % 2")
    assert bench.compared(first, second) == ("equivalent", "")
    swapped = read_statement([("m", "integer"), ("n", "integer")], ["m % 2 == 0"], "(n + m) % 2 == n % 2")
    assert bench.compared(first, swapped)[0] == "equivalent"  # m and n matched by name, the claim the same


def test_a_hypothesis_the_first_does_not_make_is_found_with_an_input() -> None:
    """A hypothesis added to a true statement leaves a true claim: equivalent. Added to a false one,
    it may make it true, and the solver names an input where the two claims part."""
    first = read_statement([("n", "integer")], [], "(2*n + 4) % 2 == 0")
    added = read_statement([("n", "integer")], ["n % 3 == 0"], "(2*n + 4) % 2 == 0")
    assert bench.compared(first, added) == ("equivalent", "")
    false_first = read_statement([("n", "integer")], [], "(n**2 - n) % 6 == 0")
    false_added = read_statement([("n", "integer")], ["n % 6 == 0"], "(n**2 - n) % 6 == 0")
    outcome, detail = bench.compared(false_first, false_added)
    assert outcome == "differ" and "n" in detail


def test_variables_of_other_kinds_are_not_matched() -> None:
    first = read_statement([("x", "real")], [], "x**2 >= 0")
    second = read_statement([("n", "integer")], [], "n**2 >= 0")
    assert bench.compared(first, second) == ("undecided", "the variables cannot be matched")


def test_an_added_hypothesis_shows_in_the_assumptions_though_both_claims_hold() -> None:
    """Two true statements are equivalent claims: the n^3 - n lemma with `n % 2 == 0 and n % 3 == 0`
    added (issue 52) differs from the prose's in what it assumes."""
    first = read_statement([("n", "integer")], [], "(n**3 - n) % 2 == 0")
    added = read_statement([("n", "integer")], ["n % 2 == 0", "n % 3 == 0"], "(n**3 - n) % 2 == 0")
    outcome, detail = bench.compared(first, added, "assumptions")
    assert outcome == "differ" and "n" in detail
    assert bench.compared(first, first, "assumptions") == ("equivalent", "")
