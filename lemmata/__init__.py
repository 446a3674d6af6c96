"""lemmata: research automation from a task to a LaTeX paper with checked proofs."""

__version__ = "0.2.0"  # the release of the interface it implements (interface-spec: v0.2.0, 2026-04-20)
