"""The survey stage: the run's briefing, the literature search and the key results of the papers it kept."""
