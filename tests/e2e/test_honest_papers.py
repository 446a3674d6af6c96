"""The answers that made real runs lie, scripted, through the real workflow to the PDF's text.

Each case is the even-sum session with one role answering as a weak or careless model did
(issue 21), with no statement formalized (the formalizer says each cannot be written, as for the
research-level statements whose only evidence is the model checks: issue 34), so that the model
checks alone decide: a verifier that says "valid" while naming a flaw, a proof with an open [GAP], a
writer cut off mid-sentence before any lemma, a writer whose LaTeX never compiles, a
crystallizer that chats instead of stating a theorem. Each run must deliver an honest, whole
paper (tests/support/paper_audit.py reads it as a researcher would), or, for LaTeX that never compiles,
fail clearly once the writer's turns are spent, keeping the .tex.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import cli_environment

from lemmata.artifacts import PaperMeta, Theory, read_artifact
from support import even_sum_session
from support.fake_llm_server import Answer, FakeLLMServer
from support.paper_audit import audit_run, pdf_text

FLAW = "the case of negative integers is not treated"


def prove(server: FakeLLMServer, tmp_path: Path, **settings: str) -> tuple[subprocess.CompletedProcess, Path]:
    home = tmp_path / "home"
    env = cli_environment(
        home, LLM_BACKEND="local", LOCAL_LLM_BASE_URL=server.openai_base_url, SEARCH_TOOLS="false", **settings
    )
    result = subprocess.run(
        [sys.executable, "-m", "lemmata", "prove", even_sum_session.TASK, "-o", "out"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    return result, next((home / "runs").iterdir())


@pytest.fixture
def server():
    server = FakeLLMServer()
    even_sum_session.install(server)
    server.set_default("formalizer", json.dumps(even_sum_session.NOT_FORMALIZABLE))
    with server:
        yield server


def delivered(result: subprocess.CompletedProcess, run_dir: Path, tmp_path: Path) -> tuple[Theory, str]:
    """The run completed and its paper is an honest, whole account of its theory."""
    assert result.returncode == 0, result.stderr[-3000:]
    pdf = tmp_path / "out" / "paper_v1.pdf"
    assert audit_run(run_dir, pdf) == []
    return read_artifact(run_dir / "theory.json", Theory), pdf_text(pdf)


def lemma_section(text: str, lemma_id: str) -> str:
    """The PDF text from lemma `lemma_id`'s statement to the next lemma's (or the end)."""
    start = re.search(rf"Lemma \d+ \({lemma_id}\)", text).start()
    following = re.search(r"Lemma \d+ \(L\d+\)", text[start + 1 :])
    return text[start : start + 1 + following.start()] if following else text[start:]


def test_a_verifier_that_says_valid_while_naming_a_flaw_verifies_nothing(server, tmp_path):
    server.set_default("verifier", json.dumps({"verdict": "valid", "issues": [FLAW]}))
    result, run_dir = prove(server, tmp_path)
    theory, text = delivered(result, run_dir, tmp_path)
    checked = [lemma for lemma in theory.lemmas if lemma.verification_method != "auto_accepted"]
    assert checked and all(lemma.verification_method == "flagged" and not lemma.verified for lemma in checked)
    assert not theory.main_result_established and "completed (main result not established)" in result.stderr
    for lemma in checked:
        assert "[Unverified step]" in lemma_section(text, lemma.id)
    assert FLAW in text  # the flaw the verifier named is what the paper says is wrong


def test_a_gap_proof_is_marked_whatever_the_verifier_says(server, tmp_path):
    """Malformed model output: a proof with an open [GAP] at confidence 0.45, and a verifier saying valid."""

    def prover(request):
        answer = even_sum_session.prover_answer(request)
        if "Lemma to prove now [L2]" not in request.body["messages"][-1]["content"]:
            return answer
        return (
            "Write $a = 2m$. [GAP: why $b$ has the form $2n$ is not shown] Hence $b = 2n$.\n\n"
            + even_sum_session._fenced(
                {
                    "confidence": 0.45,
                    "completeness": "complete",
                    "gaps": [],
                    "weakest_step": "the form of b",
                    "techniques_used": [],
                }
            )
        )

    server.set_default("prover", prover)
    result, run_dir = prove(server, tmp_path)
    theory, text = delivered(result, run_dir, tmp_path)
    gap_lemma = next(lemma for lemma in theory.lemmas if lemma.id == "L2")
    assert not gap_lemma.verified and gap_lemma.verification_method == "flagged"
    assert "[Unverified step]" in lemma_section(text, "L2")
    assert "not established" in text


def test_a_writer_cut_off_mid_sentence_before_any_lemma_still_gives_the_whole_paper(server, tmp_path):
    """Malformed model output, as the embedded model wrote it: stopped at its token cap mid-sentence."""
    server.enqueue(
        "writer",
        Answer(
            "%%% ABSTRACT\nWe prove it.\n%%% INTRODUCTION\nParity is the first invariant of intege",
            finish_reason="length",
        ),
    )
    result, run_dir = prove(server, tmp_path)
    theory, text = delivered(result, run_dir, tmp_path)
    meta = read_artifact(run_dir / "paper_v1.json", PaperMeta)
    assert meta.writer_turns == 2 and meta.turn_reasons[0].startswith("cut off (finish reason length)")
    assert meta.lemmas_stated == len(theory.lemmas) == 4
    assert "We prove it." in text and "intege " not in text


def test_a_writer_whose_latex_never_compiles_fails_clearly_after_its_turns(server, tmp_path):
    broken = even_sum_session.WRITER.replace(
        "The even integers are closed under addition.", "The power $x^{1}^{2}$ is ambiguous."
    )
    assert broken != even_sum_session.WRITER
    server.set_default("writer", broken)
    result, run_dir = prove(server, tmp_path, WRITER_MAX_TURNS="2")
    assert result.returncode != 0
    assert "Double superscript" in result.stderr and "Traceback" not in result.stderr
    assert len(server.calls("writer")) == 2  # the error went back to the model once, then the turns were spent
    assert (run_dir / "paper_v1.tex").is_file() and not (run_dir / "paper_v1.pdf").exists()
    # The writer's card still shows, with the compile's failure (issue 23: no card when it failed).
    card = result.stdout[result.stdout.index("┌ writer: session summary") :]
    assert "Compile FAILED after pdflatex" in card and "Double superscript" in card


@pytest.mark.parametrize(
    "chatter",
    [
        "I cannot determine the main theorem from the information given.",
        "",
    ],
)
def test_a_crystallizer_that_chats_leaves_the_main_result_not_established(server, tmp_path, chatter):
    server.set_default("crystallizer", chatter)
    result, run_dir = prove(server, tmp_path)
    theory, text = delivered(result, run_dir, tmp_path)
    assert not theory.main_result_established
    assert theory.crystallization_error and any("could not be stated" in issue for issue in theory.main_result_issues())
    assert "completed (main result not established)" in result.stderr
    assert not chatter or chatter not in text
    assert "not established" in text


#: A false lemma of the kind the embedded model planned (the README's main command, 2026-11-26).
FALSE_LEMMA = "The sum of two integers is even if one of them is even and the other is odd."


def test_a_false_lemma_of_the_plan_is_refuted_reported_and_never_printed_as_a_step(server, tmp_path):
    """Issue 34: the plan holds a false lemma; the machines refute its formal statement with a
    counterexample before any proof, the decomposer cannot repair it, and the paper reports it
    and never prints it as a step; the goal itself is machine-checked, so the main result stands."""
    plan = [*even_sum_session.LEMMAS, {"id": "L5", "statement": FALSE_LEMMA, "depends_on": ["L1"], "source": ""}]

    def decomposer(request) -> str:
        text = request.body["messages"][-1]["content"]
        if "The false lemma [L5]" in text:
            return "```json\n" + json.dumps({"lemmas": [{"id": "L5", "statement": "", "depends_on": []}]}) + "\n```"
        return "```json\n" + json.dumps({"lemmas": plan}) + "\n```"

    def formalizer(request) -> str:
        if FALSE_LEMMA in request.body["messages"][-1]["content"]:
            false = {**even_sum_session.FORMAL, "hypotheses": ["a % 2 == 0", "b % 2 == 1"]}
            return json.dumps(false)
        return even_sum_session.formalizer_answer(request)

    server.set_default("decomposer", decomposer)
    server.set_default("formalizer", formalizer)
    server.set_default("architect", "The plan is fine.")  # unusable: the decomposer's plan is kept
    result, run_dir = prove(server, tmp_path)
    theory, text = delivered(result, run_dir, tmp_path)
    assert [lemma.id for lemma in theory.lemmas] == ["L1", "L2", "L3", "L4"]
    [refuted] = theory.refuted
    assert refuted.id == "L5" and refuted.formal.refutation is not None
    assert refuted.formal.refutation.counterexample == {"a": "0", "b": "1"}
    assert not any(FALSE_LEMMA in request.body["messages"][-1]["content"] for request in server.calls("prover"))
    assert re.findall(r"Lemma \d+ \((L\d)\)", text) == ["L1", "L2", "L3", "L4"]  # never a step
    squeezed = re.sub(r"\s+", "", text)
    assert re.sub(r"\s+", "", "A statement first planned as L5 was refuted as formalized before any proof") in squeezed
    assert re.sub(r"\s+", "", "counterexample a = 0, b = 1, found by sampling") in squeezed
    assert theory.main_result_established and theory.main_result_status == "machine_checked"
    assert re.search(r"Theorem\d+\(machine-checkedinCoq", squeezed)
