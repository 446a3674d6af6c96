"""The machine checks as stages use them: statements formalized and checked, the Coq development of a version, `lemmata check`."""
