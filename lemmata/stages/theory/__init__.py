"""The theory stage: the lemma plan, each lemma falsified then proved, the assembly, the review's sketch."""
