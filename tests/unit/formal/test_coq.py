"""The Coq kernel checker: what a proof body may contain (layer 1), what Coq must say after the
proof (layer 2, tried here with layer 1 bypassed), the standard automation, and the box's limits.

The tests that run Coq take about 0.5 s (integers) to 1.3 s (reals) each; they skip when Coq
cannot run here, unless LEMMATA_REQUIRE_COQ=1 (bin/test sets it: bin/setup installs Coq)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from lemmata.formal import coq
from lemmata.formal.coq import (
    KernelVerdict,
    automation_scripts,
    coq_source,
    portfolio_body,
    proof_body,
    prove,
    script_refusal,
    term_refusal,
)
from lemmata.kernel import coq_file

EVEN_SUM = "forall a b : Z, a mod 2 = 0 -> b mod 2 = 0 -> (a + b) mod 2 = 0"
#: The false twin: what a checker that can be fooled would "prove".
ODD_SUM_ODD = "forall a b : Z, a mod 2 = 1 -> b mod 2 = 1 -> (a + b) mod 2 = 1"


def refused_for(body: str, word: str) -> None:
    reason = script_refusal(body)
    assert reason, f"{body!r} was accepted"
    assert word in reason, reason


# ---------------------------------------------------------------------------------------------
# Layer 1: ordinary scripts pass.


@pytest.mark.parametrize(
    "body",
    [
        "intros a b [k Hk]. exists (k+1). lia.",
        "intros.\n- lia.\n+ nia.\n* auto.",
        "intros. split.\n  -- lia.\n  ++ { nra. }",
        "{ lia. }",
        "intros; first [lia | nia].",
        "intros; Z.div_mod_to_equations; lia.",
        "2: lia. all: lia. 1-2: lia. [x]: lia. !: lia.",
        "2: { lia. }",
        "intros x. (* a comment (* nested *) *) lia.",
        'idtac "Qed. Admitted."; lia.',
        "intros. assert (H : 1.5 > 0) by lra. lra.",
        "intros. destruct (Rle_dec x 0) as [H|H]; [lra|nra].",
        "intros. exists 2%Z. reflexivity.",
        "intros; vm_compute; reflexivity.",
        "(intros; lia).",
    ],
)
def test_ordinary_scripts_are_accepted(body: str) -> None:
    assert script_refusal(body) == ""


def test_lemmatas_own_automation_obeys_the_same_rules() -> None:
    for scope in ("Z", "R"):
        scripts = automation_scripts(scope, ["pow2_ge_0 (a - b)"])
        assert all(script_refusal(body) == "" for _, body in scripts)
        assert script_refusal(portfolio_body(scripts, 2, "0123abcd")) == ""


# ---------------------------------------------------------------------------------------------
# Layer 1: each cheat is refused, and the reason names it.


def test_admitted_is_refused() -> None:
    refused_for("intros. Admitted.", "`Admitted`")


def test_admit_is_refused() -> None:
    refused_for("intros; admit.", "`admit`")


def test_give_up_is_refused() -> None:
    refused_for("give_up.", "`give_up`")


def test_abort_is_refused() -> None:
    refused_for("Abort. Theorem lemmata_goal : True. Proof. exact I.", "`Abort`")


def test_axiom_is_refused() -> None:
    refused_for("Axiom cheat : False. destruct cheat.", "`Axiom`")


def test_parameter_is_refused() -> None:
    refused_for("Parameter cheat : False.", "`Parameter`")


def test_hypothesis_is_refused() -> None:
    refused_for("Hypothesis cheat : False.", "`Hypothesis`")


def test_variable_is_refused() -> None:
    refused_for("Variable cheat : False.", "`Variable`")


def test_conjecture_is_refused() -> None:
    refused_for("Conjecture cheat : False.", "`Conjecture`")


def test_unset_guard_checking_is_refused() -> None:
    refused_for("Unset Guard Checking.", "`Unset`")


def test_setting_any_flag_is_refused() -> None:
    refused_for("Set Printing All. lia.", "`Set`")


def test_an_attribute_is_refused() -> None:
    refused_for("#[bypass_check(guard)] Fixpoint f (n : nat) : False := f n.", "`#`")


def test_declare_ml_module_is_refused() -> None:
    refused_for('Declare ML Module "evil".', "`Declare`")


def test_load_is_refused() -> None:
    refused_for("Load evil.", "`Load`")


def test_require_is_refused() -> None:
    refused_for("Require Import Classical.", "`Require`")


def test_import_and_export_are_refused() -> None:
    refused_for("Import Z.", "`Import`")
    refused_for("Export Z.", "`Export`")


def test_a_notation_redefining_plus_is_refused() -> None:
    refused_for('Notation "x + y" := (x - y).', "`Notation`")


def test_an_infix_is_refused() -> None:
    refused_for('Infix "+" := Z.sub.', "`Infix`")


def test_a_definition_redefining_z_even_is_refused() -> None:
    refused_for("Definition Z_even (n : Z) := true.", "`Definition`")


def test_a_fixpoint_is_refused() -> None:
    refused_for("Fixpoint f (n : nat) : nat := 0.", "`Fixpoint`")


def test_an_ltac_redefining_lia_is_refused() -> None:
    refused_for("Ltac lia := idtac.", "`Ltac`")


def test_an_instance_is_refused() -> None:
    refused_for("Instance i : True.", "`Instance`")


def test_qed_ending_the_proof_early_is_refused() -> None:
    refused_for("lia. Qed. Theorem other : True.", "`Qed`")


def test_qed_glued_to_a_tactic_is_refused() -> None:
    refused_for("lia.Qed.", "`Qed`")


def test_defined_is_refused() -> None:
    refused_for("lia. Defined.", "`Defined`")


def test_proof_inside_the_body_is_refused() -> None:
    refused_for("intros. Proof. lia.", "`Proof`")


def test_theorem_and_lemma_inside_the_body_are_refused() -> None:
    refused_for("Theorem t : True.", "`Theorem`")
    refused_for("Lemma t : True.", "`Lemma`")


def test_print_is_refused() -> None:
    refused_for("Print Assumptions lemmata_goal.", "`Print`")


def test_redirect_is_refused() -> None:
    refused_for('Redirect "out" Check I.', "`Redirect`")


def test_drop_is_refused() -> None:
    refused_for("Drop.", "`Drop`")


def test_extraction_is_refused() -> None:
    refused_for("Extraction Z.add.", "`Extraction`")


def test_native_compute_is_refused() -> None:
    refused_for("native_compute. reflexivity.", "`native_compute`")


def test_exact_no_check_is_refused() -> None:
    refused_for("exact_no_check I.", "`exact_no_check`")


def test_vm_cast_no_check_is_refused() -> None:
    refused_for("vm_cast_no_check I.", "`vm_cast_no_check`")


def test_native_cast_no_check_is_refused() -> None:
    refused_for("native_cast_no_check I.", "`native_cast_no_check`")


def test_a_command_not_on_the_list_is_refused_as_a_sentence_start() -> None:
    refused_for("intros. Frobnicate lemmata_goal.", "`Frobnicate`")
    refused_for("- Frobnicate.", "`Frobnicate`")
    refused_for("2: Frobnicate.", "`Frobnicate`")


def test_a_command_after_a_selector_or_a_bullet_is_refused() -> None:
    refused_for("2: Axiom cheat : False.", "`Axiom`")
    refused_for("- Admitted.", "`Admitted`")
    refused_for("{ Qed. }", "`Qed`")


def test_a_string_in_a_comment_is_refused() -> None:
    # Coq reads the string, so its "*)" does not end the comment: what follows would be code.
    refused_for('(* "*)" *) lia.', "string")


def test_an_unclosed_comment_or_string_is_refused() -> None:
    refused_for("lia. (* Admitted.", "comment")
    refused_for('idtac "lia.', "string")


def test_non_ascii_is_refused() -> None:
    refused_for("intros\u00a0x. lia.", "'\\xa0'")  # a no-break space Coq might read as a blank
    refused_for("intros. Admіtted.", "'і'")  # a Cyrillic i


def test_an_empty_or_huge_body_is_refused() -> None:
    refused_for("  ", "empty")
    refused_for("lia. " * 10_000, "longer")


# ---------------------------------------------------------------------------------------------
# The statement, hints, the body as lemmata writes it.


def test_a_proposition_that_ends_the_statement_is_refused() -> None:
    assert "sentence end" in term_refusal("True. Axiom cheat : False", "the proposition")
    assert "`Admitted`" in term_refusal("Admitted", "the proposition")
    assert "parenthesis" in term_refusal("(a = b", "the proposition")
    assert "comment" in term_refusal("True (* x *)", "the proposition")
    assert term_refusal("forall (a b : Z), (a mod 2 = 0)%Z -> ((IZR a) ^ 2 >= 0)%R", "the proposition") == ""


def test_the_file_fixes_the_statement_before_the_body() -> None:
    source = coq_source(EVEN_SUM, "Z", "intros; lia.", nonce="42")
    lines = source.splitlines()
    assert lines[:2] == ["Require Import ZArith Lia.", "Open Scope Z_scope."]
    assert lines[2] == f"Definition lemmata_statement_42 : Prop := {EVEN_SUM}."
    assert lines[3:7] == [f"Theorem lemmata_goal : {EVEN_SUM}.", "Proof.", "intros; lia.", "Qed."]
    assert lines[7:] == [
        "Check (lemmata_goal : lemmata_statement_42).",
        "Locate lemmata_marker_42.",
        "Print Assumptions lemmata_goal.",
    ]
    assert coq_source("True", "R", "exact I.").startswith("Require Import Reals Lra Psatz Lia ZArith.\n")


def test_a_framed_script_is_unframed_and_a_missing_dot_added() -> None:
    assert proof_body("Proof.\n  intros; lia.\nQed.") == "intros; lia."
    assert proof_body("intros; lia") == "intros; lia."
    assert proof_body("split. { lia. }") == "split. { lia. }"
    assert proof_body("Proof. lia. Qed. Theorem x : True. Proof. exact I. Qed.").count("Qed") == 1


def test_hints_join_the_automation_and_refused_ones_are_left_out() -> None:
    names = [name for name, _ in automation_scripts("R", ["pow2_ge_0 (a - b)", "I. Admitted"])]
    assert names[:3] == ["lra", "hints, nra", "nra"]
    hinted = dict(automation_scripts("R", ["pow2_ge_0 (a - b)", "I. Admitted"]))["hints, nra"]
    assert "pow2_ge_0 (a - b)" in hinted and "Admitted" not in hinted
    assert "hints, nia" not in dict(automation_scripts("Z"))


# ---------------------------------------------------------------------------------------------
# Layer 2: reading Print Assumptions.


def answer(*lines: str, nonce: str = "ab") -> str:
    return "\n".join(["lemmata_try_ab 0", f"No object of basename lemmata_marker_{nonce}", *lines]) + "\n"


def test_closed_under_the_global_context_lists_nothing() -> None:
    assert coq_file._assumptions(answer("Closed under the global context"), "ab") == []


def test_the_reals_axioms_are_read_whole_and_allowed() -> None:
    listed = coq_file._assumptions(
        answer(
            "Axioms:",
            "ClassicalDedekindReals.sig_not_dec : forall P : Prop, {~ ~ P} + {~ P}",
            "ClassicalDedekindReals.sig_forall_dec",
            "  : forall P : nat -> Prop,",
            "    (forall n : nat, {P n} + {~ P n}) ->",
            "    {n : nat | ~ P n} + {forall n : nat, P n}",
            "Classical_Prop.classic : forall P : Prop, P \\/ ~ P",
        ),
        "ab",
    )
    assert listed is not None and set(listed) <= coq_file.STANDARD_AXIOMS["R"] and len(listed) == 3
    assert not set(listed) & coq_file.STANDARD_AXIOMS["Z"]


def test_an_axiom_with_an_allowed_name_and_another_type_is_not_allowed() -> None:
    listed = coq_file._assumptions(answer("Axioms:", "Classical_Prop.classic : False"), "ab")
    assert listed == ["Classical_Prop.classic : False"] and listed[0] not in coq_file.STANDARD_AXIOMS["R"]


def test_unguarded_and_unsafe_lines_are_entries_no_axiom_matches() -> None:
    listed = coq_file._assumptions(answer("Axioms:", "loop is assumed to be guarded."), "ab")
    assert listed == ["loop is assumed to be guarded."]


def test_an_answer_without_the_marker_of_this_run_is_unreadable() -> None:
    assert coq_file._assumptions(answer("Closed under the global context", nonce="other"), "ab") is None
    assert coq_file._assumptions(answer(), "ab") is None


def test_the_first_error_is_found_past_warnings() -> None:
    stderr = (
        'File "./lemmata_goal.v", line 6, characters 0-5:\nWarning: something [w,x]\n'
        'File "./lemmata_goal.v", line 7, characters 2-5:\nError: The reference foo was not found\nin the env.\n'
    )
    assert coq_file.first_error(stderr) == (7, "The reference foo was not found in the env.")


# ---------------------------------------------------------------------------------------------
# Without Coq or a box: unavailable, and Coq never runs unboxed.


def test_without_a_box_coq_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    coq._coq_library.cache_clear()
    monkeypatch.setattr(coq, "box_problem", lambda: "the sandbox needs bubblewrap (bwrap)")
    try:
        assert coq.coq_problem().startswith("Coq runs only in the box, and the sandbox needs bubblewrap")
    finally:
        coq._coq_library.cache_clear()


def test_prove_reports_unavailable_without_running_anything(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_run(*arguments: object) -> None:
        raise AssertionError("coqc must not run")

    monkeypatch.setattr(coq, "coq_problem", lambda: "Coq's compiler /usr/bin/coqc is not installed")
    monkeypatch.setattr(coq, "_run_in_box", no_run)
    verdict = prove(EVEN_SUM, "Z", "intros; lia.")
    assert (verdict.outcome, verdict.detail) == ("unavailable", "Coq's compiler /usr/bin/coqc is not installed")
    assert not verdict.proved


# ---------------------------------------------------------------------------------------------
# With Coq, in the box.


@pytest.mark.usefixtures("needs_coq")
@pytest.mark.parametrize(
    ("proposition", "scope", "hints"),
    [
        (EVEN_SUM, "Z", ()),
        ("forall a b : Z, a mod 2 = 1 -> b mod 2 = 1 -> (a + b) mod 2 = 0", "Z", ()),
        ("forall x : Z, 3*x+5 = 20 -> x = 5", "Z", ()),
        ("2^100 mod 7 = 2", "Z", ()),
        ("forall n : Z, 0 <= n -> (n*(n+1)) mod 2 = 0", "Z", ()),
        ("forall a b : R, a^2 + b^2 >= 2*a*b", "R", ("pow2_ge_0 (a - b)",)),
        ("forall x : R, x > 0 -> x + 1/x >= 2", "R", ()),
        ("forall (x y : R), (x < y)%R -> (x + 1 < y + 1)%R", "R", ()),
    ],
)
def test_the_automation_proves_the_standard_examples(proposition: str, scope: coq.Scope, hints: tuple) -> None:
    verdict = prove(proposition, scope, hints=hints)
    assert verdict.outcome == "proved", verdict.detail
    assert verdict.method.startswith("automation: ") and verdict.script
    assert set(verdict.axioms) <= coq_file.STANDARD_AXIOMS[scope]


@pytest.mark.usefixtures("needs_coq")
def test_the_models_script_proves_and_its_file_checks_on_its_own() -> None:
    verdict = prove(
        "forall a b : R, a^2 + b^2 >= 2*a*b", "R", "Proof. intros a b. pose proof (pow2_ge_0 (a - b)). nra. Qed."
    )
    assert (verdict.outcome, verdict.method, verdict.detail) == ("proved", "model script", "")
    assert verdict.script == "intros a b. pose proof (pow2_ge_0 (a - b)). nra."
    assert "ClassicalDedekindReals.sig_forall_dec" in " ".join(verdict.axioms)
    again = coq._run_in_box(["/bin/sh", "-c", "cat > again.v && exec coqc -q again.v"], verdict.source.encode(), 20)
    assert again.returncode == 0 and "Axioms:" in again.stdout


@pytest.mark.usefixtures("needs_coq")
def test_an_ill_typed_statement_fails_once_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    runs = []
    real_run = coq._run_in_box

    def counted(argv: Sequence[str], stdin: bytes, timeout: float) -> coq_file.CoqRun:
        runs.append(argv)
        return real_run(argv, stdin, timeout)

    monkeypatch.setattr(coq, "_run_in_box", counted)
    verdict = prove("forall x : Z, x = true", "Z", "intros; lia.")
    assert verdict.outcome == "failed" and verdict.detail.startswith("the statement does not check: ")
    assert len(runs) == 1  # the automation would fail on the same statement


@pytest.mark.usefixtures("needs_coq")
def test_a_false_twin_is_not_proved_and_a_refused_script_says_so() -> None:
    verdict = prove(ODD_SUM_ODD, "Z", "intros. Admitted.")
    assert verdict.outcome == "refused" and not verdict.proved
    assert "`Admitted`" in verdict.detail and "the automation failed" in verdict.detail
    assert "first [" in verdict.source  # the file checked last: the automation's


@pytest.mark.usefixtures("needs_coq")
def test_layer_two_alone_catches_an_admitted_helper() -> None:
    cheat = f"Abort. Lemma helper : {ODD_SUM_ODD}. Admitted. Theorem lemmata_goal : {ODD_SUM_ODD}. Proof. exact helper."
    assert script_refusal(cheat)  # layer 1 would stop it; here it is bypassed
    check = coq._check(ODD_SUM_ODD, "Z", cheat, 20)
    assert check.outcome == "refused" and "helper" in check.detail
    assert check.axioms == (f"helper : {ODD_SUM_ODD}",)


@pytest.mark.usefixtures("needs_coq")
def test_layer_two_alone_catches_unset_guard_checking() -> None:
    cheat = (
        "Abort. Unset Guard Checking. Fixpoint loop (n : nat) : False := loop n. Set Guard Checking. "
        f"Theorem lemmata_goal : {ODD_SUM_ODD}. Proof. destruct (loop 0)."
    )
    check = coq._check(ODD_SUM_ODD, "Z", cheat, 20)
    assert check.outcome == "refused" and "loop is assumed to be guarded" in check.detail


@pytest.mark.usefixtures("needs_coq")
def test_layer_two_alone_catches_a_proof_of_a_different_statement() -> None:
    cheat = "Abort. Theorem lemmata_goal : True. Proof. exact I."
    check = coq._check(ODD_SUM_ODD, "Z", cheat, 20)
    assert check.outcome == "refused" and check.detail.startswith("the theorem proved is not the statement")


@pytest.mark.usefixtures("needs_coq")
def test_a_proof_that_loops_times_out() -> None:
    verdict = coq.check_script(ODD_SUM_ODD, "Z", "repeat (assert True by exact I).", timeout_seconds=2)
    assert (verdict.outcome, verdict.detail) == ("timed_out", "Coq did not finish within 2 s")
    assert verdict.seconds >= 2  # stopped by its limit, not by anything earlier


@pytest.mark.usefixtures("needs_coq")
def test_a_flood_of_output_is_read_only_in_part(monkeypatch: pytest.MonkeyPatch) -> None:
    runs = []
    real_run = coq._run_in_box

    def recorded(argv: Sequence[str], stdin: bytes, timeout: float) -> coq_file.CoqRun:
        runs.append(run := real_run(argv, stdin, timeout))
        return run

    monkeypatch.setattr(coq, "_run_in_box", recorded)
    flood = 'do 100000 idtac "' + "x" * 200 + '"; fail.'  # 20 MB of messages, then a failure
    verdict = coq.check_script(ODD_SUM_ODD, "Z", flood)
    assert verdict.outcome == "failed" and len(verdict.detail) <= coq.DETAIL_CHARS
    assert len(runs[0].stdout.encode()) <= coq.OUTPUT_TAIL_BYTES


def test_a_verdict_says_proved_only_when_proved() -> None:
    assert KernelVerdict("proved", "", "model script", "lia.", "...", (), 0.5).proved
    assert not KernelVerdict("timed_out", "Coq did not finish within 2 s", "", "", "...", (), 2.0).proved
