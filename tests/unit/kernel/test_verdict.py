"""The status rule (kernel/verdict.py): a proof counts only with the kernel's certificate of the
statement shown and, when the statement has premises, a witness exact evaluation confirms; a
counterexample only when exact evaluation confirms it; and a record written by an earlier
version is judged again when it is read."""

from __future__ import annotations

import json

from lemmata.artifacts import FormalCheck, MachineCheck, ProvedLemma, read_artifact
from lemmata.kernel.verdict import exact_values, formal_verdict
from support.formal import EVEN_SUM, KERNEL, SAMPLED, SOLVED, formal, kernel_proof, refuted, solved, spec


def test_a_certified_proof_with_a_witness_is_machine_checked_and_names_it() -> None:
    judged = formal_verdict(formal("s", SAMPLED, SOLVED, KERNEL))
    assert judged.word == "machine_checked" and judged.proofs == (1, 2)
    assert judged.witness == (("a", "0"), ("b", "0"))


def test_without_a_witness_a_proof_does_not_count_and_the_verdict_says_why() -> None:
    nothing = formal("s", SAMPLED, SOLVED, KERNEL).model_copy(update={"witness": None})
    judged = formal_verdict(nothing)
    assert judged.word == "tested" and "could hold vacuously" in judged.why


def test_a_witness_that_fails_a_premise_witnesses_nothing() -> None:
    for bad in ({"a": "1", "b": "0"}, {"a": "0"}, {"a": "0", "b": "0", "c": "1"}, {"a": "0", "b": "≈0.5"}):
        check = formal("s", SOLVED).model_copy(update={"witness": bad})
        assert formal_verdict(check).word == "unverified", bad


def test_a_statement_without_premises_needs_no_witness() -> None:
    commutes = spec({"a": "integer", "b": "integer"}, [], "a + b == b + a")
    from lemmata.formal.checking import falsify

    check = falsify("For all integers a and b, a + b = b + a.", commutes)
    check = check.model_copy(update={"witness": None})
    assert check.verdict == "machine_checked" and check.judged.witness == ()


def test_a_certificate_of_another_statement_or_another_kernel_version_does_not_count() -> None:
    other = formal("s", SAMPLED, solved(spec({"x": "real"}, [], "x*x >= 0")))
    assert other.verdict == "tested"
    older = KERNEL.model_copy(update={"certificate": KERNEL.certificate.replace("kernel-2:", "kernel-1:")})
    assert formal("s", SAMPLED, older).verdict == "tested"
    assert formal("s", SAMPLED, kernel_proof(EVEN_SUM)).verdict == "machine_checked"


def test_a_text_that_is_not_the_kernels_rendering_makes_nothing_machine_checked() -> None:
    shown = formal("s", SAMPLED, SOLVED, KERNEL)
    misread = shown.model_copy(update={"text": shown.text.replace("(a + b) mod 2", "a + b mod 2")})
    assert formal_verdict(misread).word == "unverified" and "does not read back" in formal_verdict(misread).why
    other = shown.model_copy(update={"text": shown.text.replace("(a + b) mod 2", "(a + b + 2) mod 2")})
    assert formal_verdict(other).word != "machine_checked"  # the proofs are of the statement before


def test_a_counterexample_counts_only_when_exact_evaluation_confirms_it() -> None:
    assert refuted().verdict == "refuted"
    not_one = refuted(a="0", b="0")  # 0 + 0 is even: no counterexample to the even-plus-odd twin
    assert not_one.verdict == "unverified" and "not one by exact evaluation" in not_one.judged.why
    assert refuted(a="0", b="≈1").verdict == "unverified"


def test_values_are_read_exactly_in_their_domains_kind() -> None:
    from lemmata.formal.reading import read_statement

    statement = read_statement([("n", "integer"), ("x", "real")], [], "n + x > 0")
    assert exact_values(statement, {"n": "3", "x": "-1/2"}) == {"n": 3, "x": __import__("fractions").Fraction(-1, 2)}
    assert exact_values(statement, {"n": "1/2", "x": "0"}) is None  # half an integer
    assert exact_values(statement, {"n": "3"}) is None


def test_a_record_of_an_earlier_version_is_judged_again_when_read(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A lemma recorded `machine_checked` by a kernel that issued no certificates (a53e6da) is
    read as what today's kernel finds in its evidence, not refused and not believed."""
    old_proof = MachineCheck(checker="z3", method="solver", outcome="proved", detail="unsat")
    old = formal("The sum of two even integers is even.", SAMPLED, old_proof)
    record = {
        "id": "L1",
        "statement": "The sum of two even integers is even.",
        "proof_text": "…",
        "confidence": 1.0,
        "verified": True,
        "status": "machine_checked",
        "verification_method": "not_checked",
        "formal": json.loads(old.model_dump_json()),
        "attempts": 0,
    }
    path = tmp_path / "L1.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    lemma = read_artifact(path, ProvedLemma)
    assert (lemma.status, lemma.verified) == ("tested", False)


def test_a_new_record_that_claims_more_than_its_evidence_is_refused() -> None:
    import pytest
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="contradict the evidence"):
        ProvedLemma(
            id="L1",
            statement="s",
            proof_text="…",
            confidence=1.0,
            verified=True,
            status="machine_checked",
            verification_method="not_checked",
            formal=formal("s", SAMPLED, MachineCheck(checker="z3", method="solver", outcome="proved")),
            attempts=0,
        )


def test_a_formal_check_without_a_statement_is_unverified() -> None:
    assert FormalCheck(prose="The regret is O(sqrt(T)).", not_formalized="asymptotic").verdict == "unverified"
