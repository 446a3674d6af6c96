"""The writer's compile check: which fragment broke the trial pass, and what becomes of it."""

from __future__ import annotations

import shutil

import pytest

from lemmata.latex.document import render_document
from lemmata.latex.trial import TrialError, trial_compile
from lemmata.stages.paper.compile_check import check_document
from lemmata.stages.paper.fragments import Fragment, fragment_at, render

needs_tex = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")

ITEMS = [
    "\\section{Introduction}",
    Fragment("part:introduction", "Intro \\oops.", "Intro oops.", by_writer=True),
    "\\begin{proof}",
    Fragment("proof:L1", "Proof \\bad.", "Proof bad."),
    "\\end{proof}",
    Fragment("part:conclusion", "\\def\\loop{\\loop}Done.", "Done.", by_writer=True),
]


def line_of(tex: str, text: str) -> int:
    return next(number for number, line in enumerate(tex.splitlines(), start=1) if text in line)


def test_an_error_is_blamed_on_the_fragment_holding_its_line_or_the_last_one_before_it() -> None:
    tex = render(ITEMS, annotated=True)
    assert fragment_at(tex, line_of(tex, "Proof \\bad.")) == "proof:L1"
    assert fragment_at(tex, line_of(tex, "\\end{proof}")) == "proof:L1"  # TeX noticed it after the fragment
    assert fragment_at(tex, line_of(tex, "\\section{Introduction}")) is None


class ScriptedTrials:
    """A stand-in for the trial pass: fails on lines holding given texts while they are in the document."""

    def __init__(self, *failing: str, timeout: bool = False) -> None:
        self.failing, self.timeout, self.documents = failing, timeout, []

    def __call__(self, tex: str) -> list[TrialError]:
        self.documents.append(tex)
        if self.timeout and "\\loop" in tex:
            return [
                TrialError("pdflatex timed out after 3 s on paper.tex (an endless macro loop?)", None, timed_out=True)
            ]
        for text in self.failing:
            if text in tex:
                return [TrialError(f"paper.tex:{line_of(tex, text)}: Missing $ inserted.", line_of(tex, text))]
        return []


def test_a_broken_proof_is_printed_as_plain_text_and_a_broken_part_is_left_to_the_model() -> None:
    trials = ScriptedTrials("\\bad", "\\oops")
    result = check_document(ITEMS, lambda body: body, trials)
    assert result.plain == {"proof:L1": "Missing $ inserted."}
    assert result.writer_errors == {"part:introduction": "Missing $ inserted."}
    assert not result.compiles and result.passes == 3  # one pass per fragment blamed, then a clean one
    assert "Printed as plain text: its LaTeX did not compile" in render(ITEMS, plain=result.plain)
    assert result.remaining_errors() == ["part:introduction: Missing $ inserted."]


def test_an_endless_loop_is_blamed_on_the_fragment_that_defines_macros() -> None:
    result = check_document(ITEMS, lambda body: body, ScriptedTrials(timeout=True))
    assert (
        list(result.writer_errors) == ["part:conclusion"]
        and "endless macro loop" in result.writer_errors["part:conclusion"]
    )


def test_an_error_outside_every_fragment_is_reported_as_it_is() -> None:
    result = check_document(ITEMS, lambda body: body, ScriptedTrials("\\section{Introduction}"))
    assert result.unlocated and not result.plain and not result.writer_errors and not result.compiles


def test_a_fragment_still_failing_as_plain_text_ends_the_check() -> None:
    result = check_document(ITEMS, lambda body: body, ScriptedTrials("Intro "))
    assert result.passes == 2 and result.unlocated  # the writer's part blamed once, then the error stays


@needs_tex
def test_a_real_trial_pass_names_the_line_and_leaves_nothing_behind(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    body = "Fine text.\n\nThe power $x^{1}^{2}$ is ambiguous.\n"
    tex = render_document(title="T", abstract="", body=body, bibliography_stem=None)
    [error] = trial_compile(tex, timeout=30)
    assert error.line == line_of(tex, "x^{1}^{2}") and error.detail == "Double superscript."
    assert (
        trial_compile(render_document(title="T", abstract="", body="Fine.", bibliography_stem=None), timeout=30) == []
    )
    assert list(tmp_path.iterdir()) == []  # the scratch directory is gone
