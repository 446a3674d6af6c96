"""What lemmata keeps across runs, under `$LEMMATA_HOME/memory/`: tier 3, each run's knowledge
graph (knowledge_graph.py); tier 4, domain memories ranked by embedding similarity
(domain_memories.py, embeddings.py)."""
