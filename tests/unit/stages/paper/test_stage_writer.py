"""The writer: a paper whole by construction, whatever the model does.

Every lemma in plan order with its statement, its checked proof (or why there is none), its
status and, when it is not verified, exactly one marker; the main result stated or said not to be
established; Limitations. The model's prose comes in turns: a cut-off or incomplete answer is
completed, a part that breaks the compile goes back with pdflatex's error. The prompt it is sent
(style rules, macros, citation keys) and what the paper keeps of its citations are tested too.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from pypdf import PdfReader

from lemmata.artifacts import (
    ConsistencyCheck,
    Direction,
    Directions,
    Experiment,
    LemmaCheck,
    PaperRecord,
    ProvedLemma,
    Survey,
    TaskInput,
    Theory,
    read_artifact,
)
from lemmata.latex.compile import compile_paper
from lemmata.latex.macros import MACRO_SUMMARY
from lemmata.llm.base import ChatResponse
from lemmata.stages.paper.parts import part_keys
from lemmata.stages.paper.prose_claims import RefutedClaim
from lemmata.stages.paper.unverified_marks import add_numerical_warnings
from lemmata.stages.paper.writer import (
    BIB_STEM,
    PROOF_STYLE_RULES,
    WriterInputs,
    WrittenPaper,
    paper_title,
    write_paper,
)
from support import DATA
from support.scripted_backend import scripted_client

needs_tex = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")


def lemma(
    lemma_id: str,
    status: str = "proved",
    proof: str | None = None,
    statement: str | None = None,
    depends_on: tuple[str, ...] = (),
) -> ProvedLemma:
    verified = status == "proved"
    method = "auto_accepted" if verified else "failed" if status == "failed" else "flagged"
    reason = {
        "proved": "auto-accepted at confidence 0.95",
        "low_confidence": "verifier: uncertain (a gap in step 2)",
        "failed": "verifier: invalid, the bound in step 3 is wrong",
    }[status]
    return ProvedLemma(
        id=lemma_id,
        statement=statement or f"Claim {lemma_id[1:]} holds: $n + {lemma_id[1:]} > n$.",
        depends_on=list(depends_on),
        proof_text="By the order of the integers. QED" if proof is None else proof,
        confidence=0.95 if verified else 0.5,
        verified=verified,
        status=status,  # type: ignore[arg-type]
        verification_method=method,
        verification=reason,
    )  # type: ignore[arg-type]


def theory(*lemmas: ProvedLemma, assembled: str = "By [L1] and [L2].") -> Theory:
    return Theory(
        goal="The sum of two even integers is even.",
        theorem_statement="For even $a, b$, $a + b$ is even.",
        lemmas=list(lemmas),
        assembled_proof=assembled,
        consistency=ConsistencyCheck(passed=True),
        proof_status="partial",
    )


ALL_VERIFIED = theory(lemma("L1"), lemma("L2"))
SOME_UNVERIFIED = theory(lemma("L1"), lemma("L2", "low_confidence"), lemma("L3", "failed"))


def task(mode: str) -> TaskInput:
    return TaskInput(session_id="s1", mode=mode, task="Prove that the sum of two even integers is even.")  # type: ignore[arg-type]


def directions(goal: str) -> Directions:
    return Directions(
        candidates=[Direction(title="Prove the sum of two odd integers is even", summary="s")],
        chosen=0,
        goal=goal,
        research_brief="",
    )


def writer_inputs(
    proved: Theory = SOME_UNVERIFIED,
    papers: list[PaperRecord] | None = None,
    feedback: str = "",
    experiment: Experiment | None = None,
) -> WriterInputs:
    return WriterInputs(
        task=task("prove"),
        survey=Survey(papers=papers or []),
        directions=directions("The sum of two even integers is even."),
        theory=proved,
        experiment=experiment or Experiment(skipped=True, skip_reason="EXPERIMENT_MODE=false"),
        feedback=feedback,
    )


def answer(proved: Theory = SOME_UNVERIFIED, **parts: str) -> str:
    """A well-formed answer for `proved`; keyword arguments replace parts (key with `_` for `:`)."""
    texts = {
        "abstract": "We prove that sums of even integers are even.",
        "introduction": "Parity matters.",
        "preliminaries": "An integer $n$ is even if $n = 2k$.",
        "discussion": "The chain is short.",
        "conclusion": "Sums of evens are even.",
        **{f"lemma:{lemma.id}": f"Idea of {lemma.id}: compare with $n$." for lemma in proved.lemmas},
    }
    texts.update({key.replace("_", ":"): text for key, text in parts.items()})
    body = "\n".join(
        f"%%% {k.split(':')[0].upper()}{' ' + k.split(':')[1] if ':' in k else ''}\n{texts[k]}"
        for k in part_keys([lemma.id for lemma in proved.lemmas])
        if texts.get(k) is not None
    )
    return body + "\n%%% END\n"


def compiles(tex: str) -> list:
    """A trial pass that finds nothing wrong: for tests about what the paper holds, not whether it compiles."""
    return []


def write(*answers, inputs: WriterInputs | None = None, check=compiles, **settings) -> tuple[WrittenPaper, list]:
    """The paper from scripted answers (by default no real trial compile) and the writer's requests."""
    client, backend = scripted_client({"writer": list(answers)}, **settings)
    paper = write_paper(client, inputs or writer_inputs(), version=1, enforce_style=True, check=check)
    return paper, backend.calls("writer")


def pdf_text(paper: WrittenPaper, directory: Path) -> str:
    (directory / f"{BIB_STEM}.bib").write_text(paper.bibtex, encoding="utf-8")
    tex = directory / paper.meta.tex_file
    tex.write_text(paper.tex, encoding="utf-8")
    result = compile_paper(tex, bibliography=bool(paper.bibtex))
    return " ".join(" ".join(page.extract_text() for page in PdfReader(result.pdf_path).pages).split())


def written_with_trials(*answers, inputs: WriterInputs | None = None, **settings) -> tuple[WrittenPaper, list]:
    """As `write`, with the real trial compile."""
    return write(*answers, inputs=inputs, check=None, **settings)


def lemma_sections(text: str) -> dict[str, str]:
    """PDF text of each lemma, from its heading `Lemma k (L3).` to the next lemma's heading."""
    headings = list(re.finditer(r"Lemma \d+ \((L\d+)\)\.", text))
    ends = [h.start() for h in headings[1:]] + [text.find("Main result", headings[-1].end())]
    return {h.group(1): text[h.end() : end] for h, end in zip(headings, ends)}


def assert_whole(text: str, proved: Theory) -> None:
    """Every lemma stated in order, markers exactly on the unverified ones, Limitations, the main result."""
    sections = lemma_sections(text)
    assert list(sections) == [lemma.id for lemma in proved.lemmas]
    for item in proved.lemmas:
        assert item.statement.split("$")[0].strip() in sections[item.id]
        assert sections[item.id].count("[Unverified step]") == (0 if item.verified else 1), item.id
    assert text.count("[Unverified step]") == sum(not lemma.verified for lemma in proved.lemmas)
    if not all(lemma.verified for lemma in proved.lemmas):
        assert "Limitations" in text and "The main result is not established:" in text
    else:
        assert "Theorem" in text and "Limitations" not in text


# --- the paper is whole by construction -------------------------------------------------------


def test_a_fully_verified_theory_has_no_marker_and_its_limitations_say_no_machine_checked_it() -> None:
    """Issue 34: Limitations lists what is not machine-checked, once each: reviewed lemmas too."""
    paper, _ = write(
        answer(ALL_VERIFIED, discussion="Text \\unverified{} and [Unverified step] typed by the model."),
        inputs=writer_inputs(ALL_VERIFIED),
    )
    body = paper.tex.split("\\begin{document}")[1]
    assert "\\unverified" not in body and "[Unverified step]" not in body
    limitations = paper.tex.split("\\section{Limitations}")[1]
    assert "(L1; reviewed)" in limitations and "(L2; reviewed)" in limitations
    assert "the main result is not established" not in limitations
    assert "\\begin{theorem}\\label{thm:main}" in paper.tex
    assert "Text and typed by the model." in paper.tex and paper.meta.lemmas_stated == 2


def test_each_unverified_lemma_is_marked_once_right_after_its_statement() -> None:
    """Malformed model output: its own markers in an explanation, the discussion and the conclusion."""
    paper, _ = write(
        answer(
            lemma_L2="\\unverified We bound it.",
            discussion="[Unverified step] L3 fails.",
            conclusion="See \\unverified.",
        )
    )
    body = paper.tex.split("\\begin{document}")[1]
    assert body.count("\\unverified{}") == 2
    for lemma_id in ("L2", "L3"):
        assert re.search(rf"\\label\{{lem:{lemma_id}\}}\n[^\n]*\n\\end\{{lemma\}}\n\\unverified\{{\}}\\par", body)
    assert re.search(r"\\label\{lem:L1\}\n[^\n]*\n\\end\{lemma\}\n\\noindent\\textit\{Idea.\}", body)


@needs_tex
def test_a_writer_answer_ended_as_an_echo_keeps_its_whole_parts_and_asks_for_the_rest(tmp_path: Path) -> None:
    """The README's main command on the embedded model (2026-11-27): the first answer wrote an
    introduction, then pasted the request's block (1,068 of 1,133 tokens). The embedded backend
    ends such an answer and leaves the paste out (finish reason "echo"): the parts before it are
    whole and kept, the model is told why, and the next turn asks for the rest."""
    echoed = ChatResponse(
        "%%% ABSTRACT\nWe prove it.\n%%% INTRODUCTION\nParity is the first invariant of integers.", finish_reason="echo"
    )
    paper, calls = written_with_trials(echoed, answer(abstract="A second abstract, not asked for."))
    assert len(calls) == 2 and paper.meta.writer_turns == 2
    assert paper.meta.turn_reasons[0].startswith(
        "ended where it began to repeat the request (finish reason echo); asked for %%% PRELIMINARIES"
    )
    followup = calls[1].messages[-1].content
    assert "began to repeat the request word for word" in followup and "%%% INTRODUCTION\n" not in followup
    text = pdf_text(paper, tmp_path)
    assert_whole(text, SOME_UNVERIFIED)
    assert "Parity is the first invariant of integers." in text and "not asked for" not in text


@needs_tex
def test_a_writer_answer_cut_off_before_any_lemma_is_continued_in_a_second_turn(tmp_path: Path) -> None:
    """Malformed model output, as the embedded model wrote it: stopped at its token cap mid-sentence."""
    cut = ChatResponse(
        "%%% ABSTRACT\nWe prove it.\n%%% INTRODUCTION\nParity is the first invariant of intege", finish_reason="length"
    )
    rest = answer(abstract="A second abstract, not asked for.")
    paper, calls = written_with_trials(cut, rest)
    assert len(calls) == 2 and paper.meta.writer_turns == 2
    assert paper.meta.turn_reasons[0].startswith("cut off (finish reason length); asked for %%% PRELIMINARIES")
    assert paper.meta.turn_reasons[0].endswith("%%% LEMMA L3, %%% INTRODUCTION")  # tried once: after the untried
    followup = calls[1].messages[-1].content
    assert "cut off in the part %%% INTRODUCTION" in followup and "%%% ABSTRACT" not in followup
    assert calls[1].messages[0] == calls[0].messages[0] and calls[1].system == calls[0].system  # the cached prefix
    assert calls[1].messages[1].content == "%%% ABSTRACT\nWe prove it.\n%%% END"  # what was kept, as its answer
    text = pdf_text(paper, tmp_path)
    assert_whole(text, SOME_UNVERIFIED)
    assert "We prove it." in text and "not asked for" not in text and "Parity matters." in text
    assert paper.meta.missing_parts == [] and paper.meta.compile_errors == []


MISSING = [
    pytest.param([answer(**{f"lemma_L{i}": None for i in (1, 2, 3)})], id="no-explanations"),
    pytest.param([""], id="empty-answer"),
    pytest.param(["Sure! I will write the paper now."], id="chat-only"),
    pytest.param(
        [(DATA / "embedded-run-1.writer-answer.txt").read_text(encoding="utf-8")], id="a-whole-paper-in-the-old-format"
    ),
    pytest.param(
        [
            ChatResponse(
                "%%% ABSTRACT\nOnly this.\n%%% INTRODUCTION\nThen the cap hit mid-w", finish_reason="repetition"
            )
        ],
        id="only-an-abstract-then-a-loop-ended",
    ),
]


@needs_tex
@pytest.mark.parametrize("answers", MISSING)
def test_a_model_that_leaves_out_parts_still_yields_a_whole_paper(answers: list, tmp_path: Path) -> None:
    paper, calls = written_with_trials(*answers, WRITER_MAX_TURNS=1)
    assert len(calls) == 1 and paper.meta.writer_turns == 1
    assert paper.meta.missing_parts and paper.meta.compile_errors == []
    text = pdf_text(paper, tmp_path)
    assert_whole(text, SOME_UNVERIFIED)
    assert "This lemma builds on" in text or "does not rely on an earlier lemma" in text  # lemmata's own explanation


@needs_tex
def test_ten_lemmas_some_failed_some_unverified_all_in_the_pdf_with_markers_on_the_unverified(tmp_path: Path) -> None:
    statuses = {3: "failed", 5: "failed", 2: "low_confidence", 7: "low_confidence", 9: "low_confidence"}
    lemmas = [
        lemma(
            f"L{i}", statuses.get(i, "proved"), proof="" if i == 3 else None, depends_on=(f"L{i - 1}",) if i > 1 else ()
        )
        for i in range(1, 11)
    ]
    proved = theory(*lemmas, assembled="By [L1] through [L10].")
    paper, _ = written_with_trials(answer(proved), inputs=writer_inputs(proved))
    assert paper.meta.lemmas_stated == 10
    text = pdf_text(paper, tmp_path)
    assert_whole(text, proved)
    sections = lemma_sections(text)
    assert "No proof of this lemma was found." in sections["L3"] and "Attempted proof (rejected)" in sections["L5"]
    assert "Status: unverified. No formal statement was made; model checks: verifier: invalid" in sections["L5"]
    assert "Status: reviewed." in sections["L1"] and "Proof (not verified)" in sections["L7"]
    limitations = text.split("Limitations", 1)[1]
    assert all(f"(L{i};" in limitations for i in range(1, 11))  # no machine checked any of them


def test_parts_that_only_copy_the_request_are_asked_for_again_in_the_model_s_own_words() -> None:
    """Malformed model output, the embedded 1.5B model (2026-11-25): under each lemma marker, that
    lemma's entry of the request, and the format's description of a part as the conclusion."""
    copied = answer(
        lemma_L1="verified. Statement: Claim 1 holds: $n + 1 > n$.\nThe prover's proof begins: By the order "
        "of the integers, and then the model goes on in words of its own.",
        conclusion="One short paragraph.",
    )
    paper, calls = write(copied, answer())
    followup = calls[1].messages[-1].content
    assert (
        "These parts only repeated lines of the request, which are dropped: %%% CONCLUSION, %%% LEMMA L1." in followup
    )
    assert "verified. Statement" not in calls[1].messages[1].content  # the copied lines are not shown again
    assert paper.meta.turn_reasons == [
        "parts missing; only lines of the request in %%% CONCLUSION, %%% LEMMA L1; "
        "asked for %%% CONCLUSION, %%% LEMMA L1"
    ]
    assert paper.meta.missing_parts == [] and "Idea of L1" in paper.tex and "One short paragraph" not in paper.tex


PRELIMINARIES_LOOP = DATA / "embedded_outputs" / "writer-preliminaries-loop"


def test_a_part_two_answers_wrote_without_one_kept_is_not_asked_again_and_untried_parts_come_first() -> None:
    """Malformed model output, the README's main command on the embedded model (2026-11-27, cold
    prompt states): each further turn asked for the preliminaries first, and each answer began
    there: the macro list retold (dropped), then a loop ended by the guard, then a list of
    "integers modulo 2^k" to the 2,048-token cap (123 s), then the macro list again: 309 s of
    writer for one kept introduction. Now the explanations nobody wrote yet are asked first, and a
    part two answers wrote without one kept is lemmata's to write."""
    replies = [
        ChatResponse(path.read_text(encoding="utf-8"), finish_reason=path.stem.split("-")[1])
        for path in sorted(PRELIMINARIES_LOOP.glob("turn*.txt"))
    ]
    paper, calls = write(*replies)
    asked = [re.findall(r"^%%% [A-Z]+(?: L\d)?$", call.messages[-1].content, re.MULTILINE) for call in calls[1:]]
    assert asked[0][:3] == ["%%% LEMMA L1", "%%% LEMMA L2", "%%% LEMMA L3"]
    assert "%%% PRELIMINARIES" in asked[0]  # written once (the macro list, dropped): asked once more
    assert all("%%% PRELIMINARIES" not in later and "%%% INTRODUCTION" not in later for later in asked[1:])
    assert paper.meta.writer_turns == 4 and "Stated precisely" not in paper.tex  # the theory has no formal statement
    assert "integers modulo 128" not in paper.tex and "\\cA" not in paper.tex


# --- turns for compile errors -----------------------------------------------------------------


@needs_tex
def test_a_compile_error_goes_back_as_a_turn_and_the_fixed_paper_compiles(tmp_path: Path) -> None:
    """Malformed model output: a double superscript, which no clean-up can read the meaning of."""
    broken = answer(discussion="The power $x^{1}^{2}$ is ambiguous.")
    fixed = "%%% DISCUSSION\nThe power $x^{12}$ is clear.\n%%% END"
    paper, calls = written_with_trials(broken, fixed)
    assert len(calls) == 2 and paper.meta.turn_reasons == ["compile error in %%% DISCUSSION: Double superscript."]
    followup = calls[1].messages[-1].content
    assert "pdflatex cannot compile your part %%% DISCUSSION: Double superscript." in followup
    assert "The power $x^{1}^{2}$ is ambiguous." in followup and [m.role for m in calls[1].messages] == [
        "user",
        "assistant",
        "user",
    ]
    text = pdf_text(paper, tmp_path)
    assert "The power x12 is clear." in text and paper.meta.compile_errors == []


@needs_tex
def test_a_part_that_never_compiles_is_kept_and_reported_when_the_turns_run_out() -> None:
    broken = answer(discussion="The power $x^{1}^{2}$ is ambiguous.")
    paper, calls = written_with_trials(broken, broken, WRITER_MAX_TURNS=2)
    assert len(calls) == 2 and paper.meta.writer_turns == 2
    assert paper.meta.compile_errors == ["part:discussion: Double superscript."]
    assert "x^{1}^{2}" in paper.tex  # the .tex is delivered as it is; the compile step fails on it


@needs_tex
def test_a_broken_prover_proof_is_printed_as_plain_text_without_a_turn(tmp_path: Path) -> None:
    proved = theory(lemma("L1"), lemma("L2", "low_confidence", proof="We get $x^{1}^{2}$ here, by [L1]."))
    paper, calls = written_with_trials(answer(proved), inputs=writer_inputs(proved))
    assert len(calls) == 1 and paper.meta.plain_text_fragments == ["proof:L2"]
    text = pdf_text(paper, tmp_path)
    assert "Printed as plain text: its LaTeX did not compile: Double superscript." in text
    assert "We get $x^{1}^{2}$ here, by [L1]." in text  # the checked text, word for word
    assert_whole(text, proved)


@needs_tex
def test_only_the_broken_paragraph_of_a_proof_is_printed_as_plain_text(tmp_path: Path) -> None:
    """The embedded main command, 2026-11-26: one broken line had turned a whole proof into escaped
    LaTeX, every `**` and `\\(x\\)` printed literally."""
    proof = "**Step 1.** Write $a = 2m$ and $b = 2n$.\n\nThen $x^{1}^{2}$ here.\n\n**Step 3.** So $a + b = 2(m + n)$, by [L1]."
    proved = theory(lemma("L1"), lemma("L2", "low_confidence", proof=proof))
    paper, calls = written_with_trials(answer(proved), inputs=writer_inputs(proved))
    assert len(calls) == 1 and paper.meta.plain_text_fragments == ["proof:L2/2"]
    text = pdf_text(paper, tmp_path)
    assert "Then $x^{1}^{2}$ here." in text  # the broken paragraph, word for word
    assert "Step 1. Write a = 2m" in text and "**" not in text and "$a + b" not in text
    assert_whole(text, proved)


@needs_tex
def test_a_markdown_proof_heading_becomes_clean_latex(tmp_path: Path) -> None:
    """Malformed model output, the real case: `### Proof of Lemma [L2]: <statement>` opening a proof."""
    proof = (
        "### Proof of Lemma [L2]: The sum of two integers is even if each integer is even.\n\n"
        "**Step 1: Assume both integers are even.**\nBy the earlier lemma [L1], $a = 2k_1$ and $b = 2k_2$."
    )
    proved = theory(lemma("L1"), lemma("L2", proof=proof, statement="The sum of two integers is even if each is."))
    paper, _ = written_with_trials(answer(proved), inputs=writer_inputs(proved))
    assert "###" not in paper.tex and "Proof of Lemma" not in paper.tex
    text = pdf_text(paper, tmp_path)
    assert "Lemma 2 (L2). The sum of two integers is even if each is." in text
    assert "Proof. Step 1: Assume both integers are even. By the earlier Lemma 1, a = 2k1 and b = 2k2." in text
    assert "(L1). :" not in text and "**" not in text


# --- WRITER_MAX_TURNS -------------------------------------------------------------------------


@pytest.mark.parametrize("turns", [1, 4])
def test_writer_max_turns_is_honoured(turns: int) -> None:
    paper, calls = write(*["Sure, here is a paper."] * 5, WRITER_MAX_TURNS=turns)
    assert len(calls) == paper.meta.writer_turns == turns and len(paper.meta.turn_reasons) == turns - 1


def test_an_explicit_turn_limit_overrides_the_setting() -> None:
    client, backend = scripted_client({"writer": ["No parts."] * 3}, WRITER_MAX_TURNS=4)
    write_paper(client, writer_inputs(), version=1, enforce_style=True, max_turns=2, check=compiles)
    assert len(backend.calls("writer")) == 2


def test_without_the_style_rules_missing_explanations_cost_no_turn() -> None:
    client, backend = scripted_client({"writer": [answer(**{f"lemma_L{i}": None for i in (1, 2, 3)})]})
    paper = write_paper(client, writer_inputs(), version=1, enforce_style=False, check=compiles)
    assert len(backend.calls("writer")) == 1 and paper.meta.missing_parts == [
        "%%% LEMMA L1",
        "%%% LEMMA L2",
        "%%% LEMMA L3",
    ]


# --- the prompt -------------------------------------------------------------------------------

PAPERS = [
    PaperRecord(id="arXiv:2101.00001", title="Parity in rings", authors=["José Díaz", "Ann Lee"], year=2021),
    PaperRecord(id="arXiv:2101.00002", title="More parity", authors=["Diaz, J.", "B", "C", "D"], year=2021),
    PaperRecord(id="s2:77", title="Anonymous notes"),
]


def prompt_of(enforce_style: bool = True, papers: list[PaperRecord] | None = None, feedback: str = "") -> str:
    client, backend = scripted_client({"writer": [answer()]})
    write_paper(
        client, writer_inputs(papers=papers, feedback=feedback), version=1, enforce_style=enforce_style, check=compiles
    )
    return backend.calls("writer")[0].messages[-1].content


def test_the_five_proof_style_rules_are_sent_only_when_enforced() -> None:
    rules = PROOF_STYLE_RULES.splitlines()[1:]
    assert len(rules) == 5 and all(rule in prompt_of() for rule in rules)
    assert not any(rule in prompt_of(enforce_style=False) for rule in rules)


def test_the_system_prompt_lists_the_macros_and_the_request_each_key_with_its_paper_each_lemma_and_the_parts() -> None:
    """The macros are listed in the writer's system prompt, fixed text the embedded model reads
    once (llm/prompt_states.py), no longer in the request: there, 400 tokens of every first call,
    the embedded model retold them as its preliminaries in every answer, 600 tokens each time
    (the README's main command, 2026-11-27: one of four turns, 110 s)."""
    client, backend = scripted_client({"writer": [answer()]})
    write_paper(client, writer_inputs(), version=1, enforce_style=True, check=compiles)
    system = backend.calls("writer")[0].system
    assert all(line in system for line in MACRO_SUMMARY.splitlines())
    assert "Use the macros of the lemmata-math package in formulas instead of defining your own" in system
    prompt = prompt_of(papers=PAPERS)
    assert "\\cA" not in prompt  # the request: no macro list
    assert "diaz2021: José Díaz, Ann Lee (2021), Parity in rings" in prompt
    assert "diaz2021a: Diaz, J., B, C et al. (2021), More parity" in prompt
    assert "unknown: unknown authors, Anonymous notes" in prompt
    assert "[L2] UNVERIFIED (verifier: uncertain (a gap in step 2)). Statement: Claim 2 holds" in prompt
    assert "[L3] UNVERIFIED, PROOF FAILED" in prompt and "Main result (NOT established: " in prompt
    assert prompt.rstrip().endswith("%%% DISCUSSION\n%%% CONCLUSION\n%%% LEMMA L1\n%%% LEMMA L2\n%%% LEMMA L3\n%%% END")


def test_the_request_shows_the_beginning_of_a_long_main_proof_only() -> None:
    """The embedded model pasted the main result's proof, shown whole, into the paper's parts (the
    README's main command, 2026-11-27); lemmata prints it itself: the request shows its start."""
    long_proof = "By [L1] and [L2]. " + "Then the sum is even by the definition. " * 40
    proved = theory(lemma("L1"), lemma("L2"), assembled=long_proof)
    client, backend = scripted_client({"writer": [answer(proved)]})
    write_paper(client, writer_inputs(proved), version=1, enforce_style=True, check=compiles)
    request = backend.calls("writer")[0].messages[-1].content
    shown = request.split("its beginning (lemmata prints it whole):\n", 1)[1].split("\n", 1)[0]
    assert shown.startswith("By [L1] and [L2]. Then the sum") and shown.endswith(" ...") and len(shown) <= 604


def test_the_system_prompt_is_fixed_text_that_explains_the_format() -> None:
    first, second = scripted_client({"writer": [answer()]}), scripted_client({"writer": [answer()]})
    write_paper(first[0], writer_inputs(papers=PAPERS), version=1, enforce_style=True, check=compiles)
    write_paper(second[0], writer_inputs(ALL_VERIFIED), version=1, enforce_style=False, check=compiles)
    systems = {backend.calls("writer")[0].system for _, backend in (first, second)}
    assert len(systems) == 1 and "LEMMA <id>, one part per lemma" in systems.pop()


def test_unknown_citations_leave_the_text_and_known_ones_stay() -> None:
    paper, _ = write(
        answer(introduction="As in \\cite{diaz2021a, knuth1997} and \\citep{made2020up}."),
        inputs=writer_inputs(papers=PAPERS),
    )
    assert paper.meta.removed_citations == ["knuth1997", "made2020up"]
    assert paper.meta.cited_keys == ["diaz2021a"] and "\\cite{diaz2021a}" in paper.tex
    assert "\\bibliography{references}" in paper.tex and paper.meta.bib_entries == 3


def test_what_the_clean_up_removed_is_in_the_run_s_record_by_kind() -> None:
    """Issue 54: the repairs of the writer's prose are counted in paper_v<n>.json."""
    paper, _ = write(
        answer(
            introduction="Parity matters. Lee (2021) studied it. Silverman et al. did too. We use strong induction.",
            conclusion="Sums of evens are even. Hence, by",
        ),
        inputs=writer_inputs(papers=PAPERS),
    )
    assert paper.meta.prose_repairs == {"unfounded claims": 1, "unretrieved authors": 1, "unfinished sentences": 1}
    assert "Lee (2021) studied it." in paper.tex and "Silverman" not in paper.tex and "induction" not in paper.tex


@needs_tex
def test_a_refuted_claim_of_the_prose_is_removed_and_the_pdf_says_so_in_limitations(tmp_path: Path) -> None:
    """Issue 54 item 3: a general claim of the prose goes to the machines like a lemma; refuted,
    it leaves the prose, the record keeps it, and the real PDF's Limitations quotes it."""
    claim = "The square of every odd integer is even."
    refuted = RefutedClaim(
        claim,
        "n mod 2 = 1 ⇒ n^2 mod 2 = 0",
        "n \\bmod 2 = 1 \\Rightarrow n^{2} \\bmod 2 = 0",
        "counterexample n = 1, found by sampling",
    )
    sent: list[str] = []

    def refute(sentence: str) -> RefutedClaim | None:
        sent.append(sentence)
        return refuted if sentence == claim else None

    client, _ = scripted_client({"writer": [answer(discussion=f"Parity is old. {claim} Sums are easy.")]})
    paper = write_paper(client, writer_inputs(), version=1, enforce_style=True, check=compiles, refute_claim=refute)
    assert sent == [claim]
    assert paper.meta.refuted_prose_claims == [claim] and paper.meta.prose_claims_checked == 1
    assert paper.meta.prose_repairs == {"refuted claims": 1}
    text = pdf_text(paper, tmp_path)
    limitations = text[text.index("Limitations") :]
    assert "Parity is old. Sums are easy." in text and text.count(claim) == 1 and claim in limitations
    assert "counterexample n = 1" in limitations


def test_a_clean_answer_needs_no_repair() -> None:
    paper, _ = write(answer())
    assert paper.meta.prose_repairs == {}


def test_without_survey_papers_nothing_is_cited_and_there_is_no_bibliography() -> None:
    assert "(none: cite nothing)" in prompt_of()
    paper, _ = write(answer(introduction="As in \\cite{diaz2021a}."))
    assert paper.bibtex == "" and "\\bibliography" not in paper.tex and "\\cite" not in paper.tex


def test_reviewer_feedback_reaches_the_prompt() -> None:
    assert "Reviewer feedback to follow: Shorten the introduction." in prompt_of(feedback="Shorten the introduction.")
    assert "Reviewer feedback" not in prompt_of()


# --- title and numerical warnings -------------------------------------------------------------


def test_a_prove_paper_is_titled_by_its_theorem() -> None:
    """Malformed model output met on the embedded model: a direction titled with the wrong theorem."""
    assert (
        paper_title(task("prove"), directions("The sum of two even integers is even."))
        == "The sum of two even integers is even"
    )


def test_other_papers_and_long_theorems_take_the_direction_title() -> None:
    assert paper_title(task("explore"), directions("Short goal.")) == "Prove the sum of two odd integers is even"
    assert paper_title(task("prove"), directions("x" * 121)) == "Prove the sum of two odd integers is even"


def check(lemma_id: str, violations: int, suspect: bool) -> LemmaCheck:
    return LemmaCheck(
        lemma_id=lemma_id,
        group="low_confidence",
        outcome="ran",
        trials=2000,
        violations=violations,
        violation_rate=violations / 2000,
        numerically_suspect=suspect,
    )


def test_a_numerical_warning_says_the_test_itself_may_be_wrong() -> None:
    """Real output, the README's main command on the embedded model (2026-11-25, after issue 24):
    the model's test of "if a and b are even, a + b is even" counted the trials where the sum was
    even as violations, 779 of 3000, and the paper called the true lemma "probably false". The
    test is code the model wrote and nothing checks it: the warning names both possibilities."""
    experiment = Experiment(skipped=False, checks=[check("L7", 779, True)])
    out = add_numerical_warnings("Body.", experiment)
    assert "the test itself is code the model wrote, not checked" in out
    assert "either the lemma is false as stated" in out and "or the test is wrong" in out
    assert "probably false" not in out


def test_numerically_suspect_lemmas_get_a_bold_warning_with_their_figures() -> None:
    experiment = Experiment(skipped=False, checks=[check("L2", 240, True), check("L3", 1, False)])
    out = add_numerical_warnings("Body.", experiment)
    assert out.count("\\textbf{Warning: numerical tests contradict Lemma") == 1
    assert "Lemma L2.} 240 of 2000 random trials violate it (rate 12.0\\%)" in out
    assert "L3" not in out
    paper, _ = write(answer(), inputs=writer_inputs(experiment=experiment))
    assert "\\section*{Numerical warnings}" in paper.tex.split("\\section{Limitations}")[0]


def test_no_suspect_lemma_no_warning_section() -> None:
    assert add_numerical_warnings("Body.", Experiment(skipped=True, skip_reason="EXPERIMENT_MODE=false")) == "Body."


@needs_tex
def test_a_conjecture_states_the_goal_and_says_what_the_sketch_claims_instead(tmp_path: Path) -> None:
    """Malformed model output, an embedded run of "a^2 + b^2 >= 2ab" (2026-11-25): the crystallizer
    stated what the unestablished sketch claims, another statement than the goal."""
    proved = SOME_UNVERIFIED.model_copy(update={"theorem_statement": "For reals $a_i$, $a_1^2 + a_2^2 \\geq 2ab$."})
    paper, _ = written_with_trials(answer(proved), inputs=writer_inputs(proved))
    text = pdf_text(paper, tmp_path)
    conjecture = text.split("Main result, not established", 1)[1]
    assert conjecture.lstrip(" ).").startswith("The sum of two even integers is even.")
    assert "The sketch below claims to prove another statement: For reals a" in conjecture


@needs_tex
def test_a_conjecture_whose_sketch_claims_the_goal_says_nothing_more(tmp_path: Path) -> None:
    proved = SOME_UNVERIFIED.model_copy(update={"theorem_statement": "The sum of two even integers is even"})
    paper, _ = written_with_trials(answer(proved), inputs=writer_inputs(proved))
    assert "claims to prove another statement" not in pdf_text(paper, tmp_path)


#: The theory of the README's main command on the embedded model (2026-11-26, issue 34): the goal
#: and L3 machine-checked by Z3 and Coq, L1 not formalized, L2 and L4 refuted and removed (the
#: proofs without the formal statements the prover restated, as the prover's parser now leaves them).
MACHINE_CHECKED = read_artifact(DATA / "theories" / "even-sum-machine-checked.json", Theory)


def squeezed(text: str) -> str:
    """Text without white space: the PDF's text extraction drops or adds spaces in long lines."""
    return re.sub(r"\s+", "", text)


@needs_tex
def test_the_main_commands_paper_says_what_the_machines_checked_and_nothing_more(tmp_path: Path) -> None:
    paper, _ = written_with_trials(answer(MACHINE_CHECKED), inputs=writer_inputs(MACHINE_CHECKED))
    text = pdf_text(paper, tmp_path)
    sections = {key: squeezed(value) for key, value in lemma_sections(text).items()}
    assert list(sections) == ["L1", "L3"]  # the refuted L2 and L4 are no steps
    assert squeezed("Formally: ∀a, b ∈ Z : a mod 2 = 0 ∧ b mod 2 = 0 ⇒ (a + b) mod 2 = 0") in sections["L3"]
    assert squeezed("Status: machine-checked. Machine-checked by the SMT solver Z3") in sections["L3"]
    assert squeezed("the Coq proof kernel (automation: mod and div as equations, lia)") in sections["L3"]
    assert squeezed("Proof (the model’s prose, not checked: the machine checked the statement)") in sections["L3"]
    assert "Printed as plain text" not in text
    assert squeezed("[Unverified step]") in sections["L1"] and squeezed("Status: unverified.") in sections["L1"]
    assert "lemmata_goal" not in paper.tex
    # The checking model's calibration is explained once, not on every lemma nor again in Limitations.
    assert text.count("they do not tell wrong proofs from right ones") == 1
    # The model's prose around the statements is said to be unchecked: its claims are the model's.
    assert squeezed(
        "Only statements and proofs are checked: the claims of the prose around them (the introduction, the "
        "preliminaries, the lemmas' ideas, the discussion, the conclusion) are not."
    ).replace("'", "’") in squeezed(text)
    refuted = [squeezed(part) for part in text.split("Refuted statement.")[1:]]
    assert len(refuted) == 2 and squeezed("counterexample a = 0, b = 1, found by sampling") in refuted[0]
    assert squeezed("It was removed from the plan.") in refuted[0] and "incomplete" not in refuted[0]
    whole = squeezed(text)
    assert squeezed("Theorem 1 (machine-checked in Coq and by the SMT solver Z3; the prose proof below is") in whole
    assert squeezed("The main result is machine-checked in Coq and by the SMT solver Z3; its prose proof") in whole
    # The kernel's witness: an input at which the hypotheses hold, so the machine's proof proves something.
    assert squeezed("Its hypotheses hold at a = 0, b = 0, so the machine’s proof is not vacuous.") in whole
    assert squeezed("its hypotheses hold at a = 0, b = 0, so the proof is not vacuous") in sections["L3"]
    limitations = text.split("Limitations", 1)[1]
    assert "Lemma 1 (L1; unverified)" in limitations and "L3" not in limitations and "L2" not in limitations
    assert "not established" not in text


@needs_tex
def test_a_lemma_the_machine_proved_alone_has_the_machines_proof_and_no_word_of_a_models(tmp_path: Path) -> None:
    """Issue 38: a lemma a machine proved before any prover was asked (stages/theory/prove.py)
    is printed with the machine's proof, the kernel's script as it was accepted."""
    from lemmata.stages.theory.prove import machine_proved_lemma

    checked = MACHINE_CHECKED.lemmas[1]
    assert checked.formal is not None and checked.checked_by is not None
    alone = machine_proved_lemma(checked, checked.formal, checked.checked_by)
    proved = MACHINE_CHECKED.model_copy(update={"lemmas": [MACHINE_CHECKED.lemmas[0], alone]})
    paper, calls = written_with_trials(answer(proved), inputs=writer_inputs(proved))
    section = squeezed(lemma_sections(pdf_text(paper, tmp_path))["L3"])
    assert squeezed("Proof (by machine). The SMT solver Z3 found no input that satisfies the hypotheses") in section
    assert (
        squeezed("The Coq proof kernel accepted the proof script (automation: mod and div as equations, lia):")
        in section
    )
    assert squeezed("Z.div_mod_to_equations; lia.") in section
    assert "model" not in section.split("Status:")[1]  # no "the proof above is the model's prose"
    assert (
        "L3] machine-checked. Statement: The sum of two integers is even if both of them are even.\nIts machine proof: "
        in (calls[0].messages[0].content)
    )


@needs_tex
def test_a_refused_formalization_quoting_a_modulo_is_printed_whole(tmp_path: Path) -> None:
    """Malformed model output, the embedded main command 2026-11-26: the formalizer wrote
    `or(a % 2 == 1, b % 2 == 0)`; the `%` of the refusal that quoted it commented out the rest
    of the line, and the Formally and Status lines stopped at "'or(a"."""
    first = MACHINE_CHECKED.lemmas[0]
    assert first.formal is not None
    refusal = "the formal statement was refused: a hypothesis: 'or(a % 2 == 1, b % 2 == 0)' is not an expression"
    refused = first.model_copy(update={"formal": first.formal.model_copy(update={"not_formalized": refusal})})
    proved = MACHINE_CHECKED.model_copy(update={"lemmas": [refused, *MACHINE_CHECKED.lemmas[1:]]})
    paper, _ = written_with_trials(answer(proved), inputs=writer_inputs(proved))
    section = squeezed(lemma_sections(pdf_text(paper, tmp_path))["L1"])
    # Once beside "Formally:", once in the status line (the PDF prints ' as a typographic quote).
    assert section.count(squeezed("or(a % 2 == 1, b % 2 == 0)’ is not an expression")) == 2
    assert "Printed as plain text" not in paper.tex


def test_a_chain_of_one_lemma_is_said_in_the_singular() -> None:
    """The README's main command on the embedded model (2026-11-27), its plan down to L1: "The
    proof rests on 1 lemma, stated in the order they were proved; 0 of them are verified. Each is
    followed by ... the proof the model wrote", of a paper whose proofs may be the machine's."""
    from lemmata.stages.paper.render import lemmas_section

    one = MACHINE_CHECKED.model_copy(update={"lemmas": MACHINE_CHECKED.lemmas[:1]})
    assert lemmas_section(one, {})[1] == (
        "The proof rests on 1 lemma; it is not verified. It is followed by its formal statement, its proof "
        "(the model's, or the machine's) and one status line."
    )
    two = lemmas_section(MACHINE_CHECKED, {})[1]
    assert two.startswith("The proof rests on 2 lemmas, stated in the order they were proved; 1 of them is verified")
