"""lemmata: research automation from a task to a LaTeX paper with checked proofs."""

__version__ = "0.1.0"
