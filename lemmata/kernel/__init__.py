"""The kernel: the smallest code that decides whether a formal statement is machine-checked.

It holds the formal tree and its semantics (tree.py, semantics.py, definedness.py, evaluate.py,
surd.py, expansion.py, statement.py), the translations to the SMT solver and to Coq (smt.py,
coq_terms.py), the Coq file lemmata writes around a proof and the judgement of Coq's answer
(coq_file.py), the rendering a researcher reads and its readback (render.py, readback.py,
admission.py), and the rule that turns checks into a status (certificate.py, verdict.py).

It imports nothing else of lemmata (tests/unit/kernel/test_kernel_boundary.py holds it), and
only it issues the certificates a proof counts by: everything else — prompting, reading a
model's text, running coqc and the solver's process, sampling strategy, caches — is outside, and
can only save work or be refused, never supply a verdict the kernel did not derive.
docs/verification.md names each file, its size and what it promises.
"""
