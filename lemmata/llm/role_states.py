"""What the embedded model has read, kept per agent role, so a role's next call re-reads only what
is new to it.

llama.cpp skips the part of a prompt that begins like the tokens it holds. Consecutive calls of a
run are mostly of different roles (prover, verifier, prover of the next lemma, ...), whose prompts
share only the chat template's first few tokens, so the runtime's own reuse finds almost nothing.
Here, after each call, the context's tokens and their key/value state (sequence 0, about 28 kB a
token for the default model: a 2,000-token call keeps ~57 MB) are copied out under the call's
role; before a call of another role, that role's last state is copied back. Then a prover call
re-reads nothing of the prover's system prompt and goal that the last prover call already read.
The state restored is the one the same tokens produced, so the answer does not change (the e2e
test compares it with a fresh context's).
"""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

#: Kept states, least recently used dropped first; the default model's roles fit many times over.
CAPACITY_BYTES = 1 << 30


@dataclass
class _State:
    tokens: Any  # numpy array of the token ids the state holds
    data: Any  # the ctypes buffer llama.cpp wrote the sequence's state into
    size: int


class RoleStates:
    def __init__(self, capacity_bytes: int = CAPACITY_BYTES) -> None:
        self.capacity_bytes = capacity_bytes
        self._states: OrderedDict[str, _State] = OrderedDict()
        self._holding: str | None = None  # the role whose tokens the context holds now

    def before_call(self, llama: Any, role: str) -> None:
        """Give the context `role`'s last state, unless it holds it already."""
        state = self._states.get(role)
        if role == self._holding or state is None or not _native(llama):
            return
        self._states.move_to_end(role)
        _restore(llama, state)
        self._holding = role

    def after_call(self, llama: Any, role: str) -> None:
        """Keep what the context holds now as `role`'s state."""
        self._holding = role
        if not _native(llama):
            return
        state = _capture(llama)
        if state is None:
            self._states.pop(role, None)
            return
        self._states[role] = state
        self._states.move_to_end(role)
        while sum(s.size for s in self._states.values()) > self.capacity_bytes and len(self._states) > 1:
            self._states.popitem(last=False)

    def roles(self) -> list[str]:
        return list(self._states)


def _native(llama: Any) -> bool:
    """A real llama-cpp model (a stand-in in tests has no context)."""
    return getattr(llama, "ctx", None) is not None and getattr(llama, "n_tokens", 0) is not None


def _capture(llama: Any) -> _State | None:
    import llama_cpp

    count = int(llama.n_tokens)
    if count == 0:
        return None
    size = int(llama_cpp.llama_state_seq_get_size(llama.ctx, 0))
    buffer = (ctypes.c_uint8 * size)()
    written = int(llama_cpp.llama_state_seq_get_data(llama.ctx, buffer, size, 0))
    if written == 0:
        return None
    return _State(tokens=llama.input_ids[:count].copy(), data=buffer, size=written)


def _restore(llama: Any, state: _State) -> None:
    """Replace the context's sequence with `state`; on failure, an empty context (a full re-read)."""
    import llama_cpp

    llama._ctx.kv_cache_seq_rm(0, 0, -1)
    if int(llama_cpp.llama_state_seq_set_data(llama.ctx, state.data, state.size, 0)) == 0:
        llama.reset()
        return
    count = len(state.tokens)
    llama.input_ids[:count] = state.tokens
    llama.n_tokens = count
    llama._requires_eval = True  # the logits of the last token are not restored: it is read again
