"""A scripted research session for "the sum of two even integers is even".

Realistic answers, one set per agent role, for the fake model server: they drive the real
workflow through every stage — a survey that searches once (FakeSearchServers' default papers
answer it), a formal statement (the goal's, in lemmata's formal language, which Z3 and Coq prove),
a four-lemma plan the architect annotates, each lemma formalized where it can be (L3 is proved by
the machines; L1, L2 and L4 state existence and closure, which the formalizer says it cannot
write), one lemma left at low confidence in every turn (so the verifier, the refiner after
stagnation and the numerical experiment run), citations checked, and the writer's prose parts with the
markdown, environment and marker slips models make (lemmata typesets the rest). Used by the
end-to-end tests, the benchmark and the recorded demo run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

TASK = "the sum of two even integers is even"

SURVEY = {
    "summary": "Parity is the residue of an integer modulo 2. Even integers are the multiples of 2 and form the "
    "ideal 2Z of the ring Z, which is closed under addition. The statement is the base case of parity arithmetic.",
    "open_problems": [
        "Characterise parity of sums of k integers by the number of odd summands",
        "Extend closure under addition to ideals nZ for every n",
    ],
    "key_objects": ["the integers Z", "even integers 2Z", "parity (residue modulo 2)"],
}
SURVEY_QUERY = "sum of even integers"


#: The sketch of the argument the theory review shows above the lemma chain.
SKETCH = (
    "Write $a = 2m$ and $b = 2n$ by [L2]; then $a + b = 2m + 2n = 2(m + n)$ by [L3], and [L1] says that "
    "this is even, which is [L4]."
)


def survey_answer(request: Any) -> str:
    """Search once for the task, then keep the records the search returned (at most two), and
    name from memory a paper no tool returned (which lemmata must drop)."""
    text = _last_user_text(request.body)
    if "Earlier turns:\n(none)" in text and "preprint_search(query)" in text and "this is the last one" not in text:
        return json.dumps({"tool_calls": [{"tool": "preprint_search", "argument": SURVEY_QUERY}], **SURVEY})
    retrieved = list(dict.fromkeys(re.findall(r"^\[(arXiv:[^\]]+)\]", text, re.MULTILINE)))
    return json.dumps({"tool_calls": [], "papers": [*retrieved[:2], INVENTED_PAPER], **SURVEY})


INVENTED_PAPER = "A Complete Theory of Parity (Hallucinated et al., 2020)"


EXTRACTED = {
    "results": ["If $a$ and $b$ are even integers, then $a + b$ is even."],
    "techniques": ["unfolding the definition of evenness"],
}
IDEATION = {
    "directions": [
        {
            "title": "Closure of the even integers under addition",
            "summary": "Prove that the sum of two even integers is even, directly from the definition.",
            "rationale": "Elementary and fully checkable; the natural first result on parity.",
        },
        {
            "title": "Parity of finite sums",
            "summary": "Parity of a finite sum equals the parity of its odd count.",
            "rationale": "Generalises the task; needs induction.",
        },
    ]
}
PLANNER = {
    "chosen": 0,
    "goal": "For all integers $a$ and $b$, if $a$ and $b$ are even then $a + b$ is even.",
    "research_brief": "Unfold the definition of evenness, add the witnesses, and close under addition.",
}
FORMAL = {
    "formal_statement": "$\\forall a, b \\in \\mathbb{Z}:\\ (2 \\mid a \\wedge 2 \\mid b) \\Rightarrow 2 \\mid (a + b)$",
    "variables": [{"name": "a", "type": "integer"}, {"name": "b", "type": "integer"}],
    "hypotheses": ["a % 2 == 0", "b % 2 == 0"],
    "conclusion": "(a + b) % 2 == 0",
    "not_formalizable_because": "",
}
#: The formalizer's answer for each lemma, by its id (see formalizer_answer).
FORMAL_LEMMAS = {
    "L3": {
        "formal_statement": "For all integers m and n, 2m + 2n = 2(m + n).",
        "variables": [{"name": "m", "type": "integer"}, {"name": "n", "type": "integer"}],
        "hypotheses": [],
        "conclusion": "2*m + 2*n == 2*(m + n)",
        "not_formalizable_because": "",
    },
}
NOT_FORMALIZABLE = {
    "formal_statement": "",
    "variables": [],
    "hypotheses": [],
    "conclusion": "",
    "not_formalizable_because": "an existence claim the formal language cannot state",
}
LEMMAS = [
    {
        "id": "L1",
        "statement": "An integer $n$ is even if and only if $n = 2k$ for some integer $k$.",
        "depends_on": [],
        "source": "definition of evenness",
    },
    {
        "id": "L2",
        "statement": "If $a$ and $b$ are even, there are integers $m, n$ with $a = 2m$ and $b = 2n$.",
        "depends_on": ["L1"],
        "source": None,
    },
    {"id": "L3", "statement": "For all integers $m, n$: $2m + 2n = 2(m + n)$.", "depends_on": [], "source": ""},
    {
        "id": "L4",
        "statement": "For all integers $m, n$, the sum $m + n$ is an integer, so $2(m+n)$ is even.",
        "depends_on": ["L1", "L3"],
        "source": "closure of Z under addition",
    },
]
PROOFS = {
    "L1": "This is the definition of evenness: $n$ is even when $2 \\mid n$, that is, when $n = 2k$ for an integer $k$. QED",
    "L2": "By [L1], $a$ even gives an integer $m$ with $a = 2m$, and $b$ even gives an integer $n$ with $b = 2n$. QED",
    "L3": "By distributivity of multiplication over addition in $\\mathbb{Z}$, $2m + 2n = 2(m+n)$. QED",
    "L4": "The integers are closed under addition, so $m + n \\in \\mathbb{Z}$; with [L3] and [L1], $2(m+n)$ is even. "
    "[GAP: closure of $\\mathbb{Z}$ under addition is taken from the axioms without proof]",
}
APPROACHES = {
    "L1": "Unfold the definition of divisibility by 2.",
    "L2": "Apply [L1] to $a$ and to $b$ separately.",
    "L3": "Distributivity of multiplication over addition in $\\mathbb{Z}$.",
    "L4": "Closure of $\\mathbb{Z}$ under addition, then [L3] and [L1].",
}
ARCHITECTURE = [{**lemma, "approach": APPROACHES[lemma["id"]]} for lemma in LEMMAS]
REFINED = (
    "The attempts take closure of $\\mathbb{Z}$ under addition from the axioms. Derive it instead from the "
    "ring axioms: $m + n$ is the sum of two ring elements, and a ring is closed under its addition."
)
COMPRESSED = "Earlier attempts proved L4 at confidence 0.70; the verifier found closure under addition assumed."
#: L1 is auto-accepted on its own rating (accepted, not verified); L2 and L3 pass the verifier and the
#: refuter (verified, when the checking model is trusted: see trust_the_fake_model); L4 stays flagged.
CONFIDENCE = {"L1": 0.98, "L2": 0.8, "L3": 0.8, "L4": 0.7}
VERIFIER = {"verdict": "uncertain", "issues": ["closure under addition is assumed, not proved"]}
VALID = {"verdict": "valid", "issues": []}
NO_ERROR = {"error_found": False, "first_error": ""}
ASSEMBLED = (
    "Let $a, b$ be even integers. By [L2] (which rests on [L1]) write $a = 2m$ and $b = 2n$. "
    "By [L3], $a + b = 2m + 2n = 2(m+n)$, and by [L4] this number is even."
)
CONSISTENCY = {"consistent": True, "issues": []}
THEOREM = "For all integers $a$ and $b$, if $a$ and $b$ are even, then $a + b$ is even."
EXPERIMENT_CODE = """import json, random
random.seed(7)
trials = violations = 0
for _ in range(2000):
    m, n = random.randint(-10**6, 10**6), random.randint(-10**6, 10**6)
    s = 2 * m + 2 * n
    trials += 1
    violations += s % 2 != 0
print(json.dumps({"trials": trials, "violations": violations}))
"""
WRITER = r"""Here are the parts of the paper.
```latex
%%% ABSTRACT
We prove that the sum of two even integers is even, through a chain of four lemmas, one of which is left at low confidence.
%%% INTRODUCTION
# Introduction
Parity is the first invariant of integer arithmetic. We show that $2\ZZ$ is closed under addition, a fact recorded in \cite{example2021, knuth1997}.
%%% PRELIMINARIES
\begin{defin}
An integer $n$ is \emph{even} if $n = 2k$ for some $k \in \ZZ$.
\end{defin}
%%% DISCUSSION
## Discussion
The random trials found no pair of even integers with an odd sum \cite{knuth1997}.
\begin{rem}
Lemma L4 takes closure of $\ZZ$ under addition from the axioms; its verification was uncertain.
\end{rem}
%%% CONCLUSION
The even integers are closed under addition.
%%% LEMMA L1
We **unfold** the definition of evenness.
%%% LEMMA L2
We apply [L1] to $a$ and to $b$ separately.
%%% LEMMA L3
This is distributivity in the ring $\ZZ$.
%%% LEMMA L4
\unverified The closure of $\ZZ$ under addition does the work; it is taken from the axioms.
%%% END
```"""


def _fenced(value: Any) -> str:
    return "```json\n" + json.dumps(value, indent=2) + "\n```"


def formalizer_answer(request: Any) -> str:
    """The goal's formal statement, L3's, and for the other lemmas that it cannot be written."""
    statement = re.search(r"Statement: (.*)", _last_user_text(request.body)).group(1).strip()
    for lemma in LEMMAS:
        if lemma["statement"] == statement:
            return json.dumps(FORMAL_LEMMAS.get(lemma["id"], NOT_FORMALIZABLE))
    return json.dumps(FORMAL)


def prover_answer(request: Any) -> str:
    """The proof of whichever lemma the request asks for (prover jobs run in parallel)."""
    lemma_id = re.search(r"Lemma to prove now \[(\w+)\]", _last_user_text(request.body)).group(1)
    assessment = {
        "confidence": CONFIDENCE[lemma_id],
        "completeness": "partial" if lemma_id == "L4" else "complete",
        "gaps": [],
        "weakest_step": "none",
        "techniques_used": ["definition unfolding"],
    }
    return PROOFS[lemma_id] + "\n\n" + _fenced(assessment)


def verifier_answer(request: Any) -> str:
    """Valid for every lemma but L4, whose closure step it doubts."""
    lemma_id = re.search(r"Lemma \[(\w+)\]", _last_user_text(request.body)).group(1)
    return json.dumps(VERIFIER if lemma_id == "L4" else VALID)


#: The fake model's checks, as if measured on labelled proofs: trusted, so that the scripted session
#: shows verified lemmas end to end. Only test homes get it (conftest.cli_environment).
FAKE_MODEL = "local-model"


def trust_the_fake_model(home: Path) -> None:
    """Give the data directory `home` a calibration that trusts the fake model's checks."""
    from lemmata.verification.calibration import STACK_VERSION, Calibration, save_calibration

    save_calibration(
        home,
        Calibration(
            backend="local",
            model=FAKE_MODEL,
            stack_version=STACK_VERSION,
            dataset="the test suite's assumption (no measurement)",
            measured_at="2026-11-25",
            incorrect=40,
            correct=40,
            false_accepts=2,
            correct_accepted=30,
        ),
    )


def _last_user_text(body: dict[str, Any]) -> str:
    messages = [m for m in body.get("messages", []) if m.get("role") == "user"]
    content = messages[-1]["content"] if messages else ""
    return content if isinstance(content, str) else " ".join(part.get("text", "") for part in content)


def answers() -> dict[str, Any]:
    """Role -> answer (text, or a responder taking the recorded request)."""
    return {
        "survey": survey_answer,
        "extractor": json.dumps(EXTRACTED),
        "ideation": json.dumps(IDEATION),
        "planner": "Here is my choice.\n" + _fenced(PLANNER),
        "formalizer": formalizer_answer,
        "decomposer": "The plan:\n" + _fenced({"lemmas": LEMMAS}),
        "architect": "I kept the plan and added routes.\n" + _fenced({"lemmas": ARCHITECTURE}),
        "prover": prover_answer,
        "verifier": verifier_answer,
        "refuter": json.dumps(NO_ERROR),
        "refiner": REFINED,
        "compress": COMPRESSED,
        "assembler": ASSEMBLED,
        "consistency": json.dumps(CONSISTENCY),
        "crystallizer": THEOREM,
        "sketch": SKETCH,
        "experiment": json.dumps({"code": EXPERIMENT_CODE, "rationale": "random even pairs; parity of the sum"}),
        "writer": WRITER,
    }


def install(server: Any) -> None:
    """Answer every role of this session on `server`, as often as asked."""
    for role, answer in answers().items():
        server.set_default(role, answer)
