"""Pictures lemmata draws itself: the theory's lemmas as an SVG graph."""
