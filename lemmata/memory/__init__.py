"""What lemmata keeps across runs, under `$LEMMATA_HOME/memory/` (tier 3: the knowledge graph)."""
