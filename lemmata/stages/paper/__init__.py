"""The paper we write: the writer's parts and turns, the skeleton lemmata renders, the compile check, the research output."""
