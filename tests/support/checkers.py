"""Checkers for tests: one whose checks may verify (as a measured, trusted model's) and the
kinds that may not. Tests of the plumbing use the first; tests of honesty use the others."""

from __future__ import annotations

from lemmata.artifacts import Checker

TRUSTED = Checker(
    backend="scripted",
    model="scripted-active",
    trust="calibrated",
    false_accept_rate=0.05,
    correct_accept_rate=0.6,
    measured_on="a test's labelled proofs, 2026-11-25",
)
NOT_DISCRIMINATING = Checker(
    backend="scripted",
    model="scripted-active",
    trust="not_discriminating",
    false_accept_rate=0.9,
    correct_accept_rate=0.95,
    measured_on="a test's labelled proofs, 2026-11-25",
)
UNCALIBRATED = Checker(backend="scripted", model="scripted-active", trust="uncalibrated")
