"""When the embedded backend swaps a role's state into the context, and what it keeps (the copying
itself is llama.cpp's: tests/e2e/test_shared_model.py runs it on the real model)."""

from __future__ import annotations

from typing import Any

import pytest

from lemmata.llm import role_states
from lemmata.llm.role_states import RoleStates, _State


class Context:
    """A stand-in with what `_native` looks for; `holds` names whose state it holds."""

    ctx = object()
    n_tokens = 0

    def __init__(self) -> None:
        self.holds = ""


@pytest.fixture
def copies(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every capture and restore, in order, as 'capture R' / 'restore R'."""
    seen: list[str] = []

    def capture(llama: Any) -> _State | None:
        seen.append(f"capture {llama.holds}")
        return _State(tokens=[1, 2, 3], data=llama.holds, size=100) if llama.holds != "empty" else None

    def restore(llama: Any, state: _State) -> None:
        seen.append(f"restore {state.data}")
        llama.holds = state.data

    monkeypatch.setattr(role_states, "_capture", capture)
    monkeypatch.setattr(role_states, "_restore", restore)
    return seen


def run_call(states: RoleStates, context: Context, role: str) -> None:
    states.before_call(context, role)
    context.holds = role  # the call leaves its own tokens in the context
    states.after_call(context, role)


def test_a_role_gets_its_state_back_only_after_another_role_used_the_context(copies: list[str]) -> None:
    states, context = RoleStates(), Context()
    for role in ("prover", "prover", "verifier", "prover", "assembler"):
        run_call(states, context, role)
    assert copies == [
        "capture prover",
        "capture prover",  # the same role again: the context already holds its tokens
        "capture verifier",  # a role seen for the first time: nothing to restore
        "restore prover",
        "capture prover",
        "capture assembler",
    ]


def test_the_least_recently_used_states_go_first_beyond_the_capacity(copies: list[str]) -> None:
    states, context = RoleStates(capacity_bytes=250), Context()
    for role in ("survey", "prover", "verifier", "prover", "writer"):
        run_call(states, context, role)
    assert states.roles() == ["prover", "writer"]  # 100 bytes each; survey then verifier dropped


def test_a_call_whose_state_cannot_be_copied_forgets_the_roles_older_state(copies: list[str]) -> None:
    states, context = RoleStates(), Context()
    run_call(states, context, "prover")
    states.before_call(context, "prover")
    context.holds = "empty"
    states.after_call(context, "prover")
    assert states.roles() == []


def test_a_stand_in_model_is_left_alone() -> None:
    states = RoleStates()
    stand_in = object()
    states.before_call(stand_in, "prover")
    states.after_call(stand_in, "prover")
    assert states.roles() == []
