"""Writer post-processing and compile time for a ten-page paper.

The writer's answer is generated: sixteen lemmas with proofs, display math, lists and the
defects models write (markdown headings and proofs, Unicode math, aliased environments,
unescaped %, unknown citations), against a survey of twenty papers. `write_paper` runs with
a scripted model, so its time is ours alone: extraction, repairs, citation clean-up, markers,
the bibliography. Then the real sandboxed compile (pdflatex, bibtex, pdflatex, pdflatex).
Prints a table of medians. Usage: python bench/writer_compile.py [--repeat 3] [--lemmas 16]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from pypdf import PdfReader

from lemmata.artifacts import (
    ConsistencyCheck, Direction, Directions, Experiment, PaperRecord, ProvedLemma, Survey, TaskInput, Theory,
)
from lemmata.latex.compile import compile_paper
from lemmata.stages.writer import BIB_STEM, WriterInputs, write_paper
from lemmata.testing.scripted_backend import scripted_client

PAPERS = [PaperRecord(id=f"arXiv:2301.{n:05d}", title=f"On sums of even integers, part {n}",
                      authors=[f"Author{n} Surname{n % 7}", "Second Writer"], year=2000 + n % 20,
                      url=f"https://arxiv.org/abs/2301.{n:05d}", source="preprint_search") for n in range(20)]


def lemma_block(n: int) -> str:
    """One lemma with a proof of about two thirds of a page, defects included."""
    cite = f"\\cite{{surname{n % 7}{2000 + n % 20}, invented{n}}}"
    return f"""
## Step {n}

\\begin{{Lem}}[L{n}] For all integers $m, n$ and every $k \\geq {n}$, the sum $2m + 2n + 2k$ is even.\\end{{Lem}}
**Proof:** We argue as in {cite}. Write the sum as
\\begin{{align}}
2m + 2n + 2k &= 2(m + n + k) \\label{{eq:sum{n}}} \\\\
&\\equiv 0 \\pmod 2 .
\\end{{align}}
For all x ∈ ℤ we have x² ≥ 0, and about 50% of the cases need no further work; the rest follow
from \\eqref{{eq:sum{n}}} and Lemma L{max(n - 1, 1)}. In more detail:
- the first case uses the parity of $m$;
- the second uses the parity of $n$ & $k$;
- the third combines them.
Each case ends in an even number, which proves the claim. Moreover the estimate
$$\\sum_{{i=1}}^{{{n + 2}}} 2i = ({n + 2})({n + 3})$$
shows the sums grow quadratically; the constant is sharp, since equality holds for $k = {n}$. ∎

\\begin{{rem}}The same argument works in any ring where $2$ is not a unit, with the ideal $(2)$ in place of the even integers.\\end{{rem}}
"""


def writer_answer(lemmas: int) -> str:
    body = "\n".join(lemma_block(n) for n in range(1, lemmas + 1))
    introduction = "# Introduction\n" + "Parity is the oldest invariant. " * 12
    return ("Here is the paper:\n```latex\n\\begin{abstract}We prove that sums of even integers are even.\\end{abstract}\n"
            + introduction + "\n# Results\n" + body
            + "\n# Limitations\nLemma L2 rests on a step the verifier did not accept.\n# Conclusion\nDone.\n```")


def writer_inputs(lemmas: int) -> WriterInputs:
    proved = [ProvedLemma(id=f"L{n}", statement=f"Statement {n}.", proof_text="Proof.", confidence=0.95 if n != 2 else 0.6,
                          verified=n != 2, status="proved" if n != 2 else "low_confidence",
                          verification_method="auto_accepted" if n != 2 else "failed",
                          verification="auto-accepted" if n != 2 else "verifier: a gap") for n in range(1, lemmas + 1)]
    return WriterInputs(
        task=TaskInput(session_id="bench", mode="prove", task="sums of even integers are even"),
        survey=Survey(papers=PAPERS),
        directions=Directions(candidates=[Direction(title="Parity")], chosen=0, goal="Sums of even integers are even."),
        theory=Theory(goal="g", theorem_statement="t", assembled_proof="By the lemmas.", proof_status="partial",
                      consistency=ConsistencyCheck(passed=True), lemmas=proved),
        experiment=Experiment(skipped=True, skip_reason="EXPERIMENT_MODE=false"),
    )


def run_once(lemmas: int, directory: Path) -> dict[str, float]:
    client, _ = scripted_client({"writer": [writer_answer(lemmas)]})
    started = time.monotonic()
    paper = write_paper(client, writer_inputs(lemmas), version=1, enforce_style=True)
    post_processing = time.monotonic() - started
    (directory / f"{BIB_STEM}.bib").write_text(paper.bibtex, encoding="utf-8")
    tex = directory / "paper_v1.tex"
    tex.write_text(paper.tex, encoding="utf-8")
    result = compile_paper(tex, bibliography=True)
    row = {"post-processing": post_processing, "compile total": result.seconds,
           "pages": len(PdfReader(result.pdf_path).pages), "tex KiB": len(paper.tex.encode()) / 1024}
    for index, (name, seconds) in enumerate(zip(result.passes, result.pass_seconds), start=1):
        row[f"{index}. {name}"] = seconds
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--lemmas", type=int, default=16, help="16 lemmas make ten pages")
    args = parser.parse_args()
    rows = []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="lemmata-bench-writer-") as tmp:
            rows.append(run_once(args.lemmas, Path(tmp)))
    print(f"writer post-processing + compile, {args.lemmas} lemmas, median of {args.repeat}")
    print(f"{'measure':<18} {'value':>8}")
    for name in rows[0]:
        value = statistics.median(row[name] for row in rows)
        unit = "" if name in ("pages", "tex KiB") else " s"
        print(f"{name:<18} {value:>8.3f}{unit}" if unit else f"{name:<18} {value:>8.1f}")


if __name__ == "__main__":
    main()
