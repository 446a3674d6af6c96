"""LaTeX output: preamble, body cleanup, citations and BibTeX, and a sandboxed compile."""
