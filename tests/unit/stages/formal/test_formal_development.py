"""The formal development (issue 34, item 8): every statement Coq's kernel proved, with the proof it
accepted, in one file that re-checks with `coqc` on its own; what it does not hold, said in its
header; a proof that does not re-check in the shared file left out, not shipped broken."""

from __future__ import annotations

import subprocess

import pytest

from lemmata import layout
from lemmata.artifacts import Theory, read_artifact
from lemmata.formal.coq import check_file
from lemmata.stages.formal.development import development, write_development
from support import DATA

#: The README's main command on the embedded model (2026-11-26): goal and L3 proved in Coq.
THEORY = read_artifact(DATA / "theories" / "even-sum-machine-checked.json", Theory)


@pytest.mark.usefixtures("needs_coq")
def test_the_development_holds_each_kernel_proof_and_re_checks_on_its_own(tmp_path) -> None:
    source = development(THEORY, 1)
    assert source is not None
    assert "Module Main_result." in source and "Module Lemma_L3." in source
    assert "intros; Z.div_mod_to_equations; lia." in source
    assert "- Lemma L1: no formal statement a machine could check" in source  # said, not hidden
    assert source.rstrip().endswith("Print Assumptions Lemma_L3.statement.")
    assert check_file(source) == (None, "")
    path = write_development(tmp_path, 1, THEORY)
    assert path == tmp_path / layout.FORMAL_DEVELOPMENT and path.read_text(encoding="utf-8") == source
    if subprocess.run(["which", "coqc"], capture_output=True).returncode == 0:
        # The researcher's command, outside the box, in a folder of their own.
        (tmp_path / "formal_v1.v").write_text(source, encoding="utf-8")
        checked = subprocess.run(["coqc", "-q", "formal_v1.v"], cwd=tmp_path, capture_output=True, text=True)
        assert checked.returncode == 0, checked.stderr
        assert checked.stdout.count("Closed under the global context") == 2


@pytest.mark.usefixtures("needs_coq")
def test_a_proof_that_does_not_re_check_is_left_out_and_said(tmp_path) -> None:
    goal = THEORY.goal_check
    assert goal is not None
    broken = goal.model_copy(
        update={
            "checks": [c.model_copy(update={"proof": "intros; lia."}) if c.checker == "coq" else c for c in goal.checks]
        }
    )
    source = development(THEORY.model_copy(update={"goal_check": broken}), 1)
    assert source is not None and "Module Main_result." not in source and "Module Lemma_L3." in source
    assert "the main result: its proof did not re-check in this file" in source


def test_nothing_the_kernel_proved_means_no_file_and_no_stale_one(tmp_path) -> None:
    unproved = THEORY.model_copy(update={"goal_check": None, "lemmas": [THEORY.lemmas[0]]})
    stale = tmp_path / layout.FORMAL_DEVELOPMENT
    stale.parent.mkdir(parents=True)
    stale.write_text("old", encoding="utf-8")
    assert write_development(tmp_path, 1, unproved) is None and not stale.exists()


@pytest.mark.usefixtures("needs_coq")
def test_prose_with_a_quote_or_comment_marks_cannot_break_the_file() -> None:
    """Coq reads strings inside comments: one `"` in a lemma's prose left an unterminated string."""
    lemma, prose = THEORY.lemmas[-1], 'The "even (* case *) holds.'
    assert lemma.formal is not None
    odd = lemma.model_copy(update={"statement": prose, "formal": lemma.formal.model_copy(update={"prose": prose})})
    source = development(THEORY.model_copy(update={"lemmas": [*THEORY.lemmas[:-1], odd]}), 1)
    assert source is not None and "''even ( * case * ) holds." in source
    assert check_file(source) == (None, "")
