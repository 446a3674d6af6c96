"""What the embedded model has read of each system prompt, kept on disk, so that no run reads a
system prompt another run has read already.

A role's system prompt is fixed text (agents/prompts.py) plus the run's briefing, the same from
run to run: on 2 cores the first call of each role spent 5-20 s reading it again, about 6,100
tokens and a minute of every run of the README's task (issue 38). Before a call whose context
does not hold its system prompt, the key/value state of the prompt's system part (about 28 kB a
token for the default model) is read from `$LEMMATA_HOME/models/prompt-states/<model>/`, or, the
first time, computed on its own and written there. The call then reads only the rest of its
prompt, as it would after a call of the same role (role_states.py): the state is the one those
tokens produce, so answers do not change (tests/e2e/test_shared_model.py).

Files are named after their tokens' hash and hold the tokens they were made from (checked before
use); the least recently used go first beyond CAPACITY_BYTES, so prompts that changed leave in
time. A store that cannot be written only costs the reading it would have saved.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

from lemmata.llm.role_states import _capture, _native, _restore, _State
from lemmata.private_files import private_directory

#: A system part shorter than this is read faster than its state is found and copied.
MIN_TOKENS = 64
#: All the states of one model; the default model's prompts need about 180 MB.
CAPACITY_BYTES = 1 << 30
_MAGIC = b"lemmata-prompt-state-1\n"


class PromptStates:
    def __init__(self, directory: Path, model_path: Path) -> None:
        self.directory = Path(directory) / model_identity(model_path)

    def prepare(self, llama: Any, messages: list[dict[str, str]]) -> None:
        """Make the context hold the state of `messages`' system part, unless it holds it already
        (or the model's chat format is not one whose system part is a prefix of the prompt)."""
        if not _native(llama):
            return
        prefix = system_prefix(llama, messages)
        if prefix is None or len(prefix) < MIN_TOKENS:
            return
        held = llama.input_ids[: llama.n_tokens]
        if len(held) >= len(prefix) and list(held[: len(prefix)]) == prefix:
            return
        path = self.directory / f"{_digest(prefix)}.state"
        state = _load(path, prefix)
        if state is not None:
            _restore(llama, state)
            if llama.n_tokens == len(prefix):
                with contextlib.suppress(OSError):  # another run's store dropped it meanwhile
                    os.utime(path)  # used: the last to be dropped
                return
            held = llama.input_ids[: llama.n_tokens]  # a state the runtime refused leaves the context empty
        _read(llama, prefix, held)
        self._save(llama, path)

    def _save(self, llama: Any, path: Path) -> None:
        state = _capture(llama)
        if state is None:
            return
        partial = None
        try:
            private_directory(self.directory)  # the states hold the prompts' tokens: the user's alone
            with tempfile.NamedTemporaryFile(dir=self.directory, suffix=".partial", delete=False) as handle:
                partial = Path(handle.name)
                handle.write(_MAGIC)
                handle.write(len(state.tokens).to_bytes(4, "little"))
                handle.write(bytes(_int32s(state.tokens)))
                handle.write(bytes(memoryview(state.data)[: state.size]))
            os.replace(partial, path)
            _drop_oldest(self.directory, CAPACITY_BYTES)
        except OSError:  # a store that cannot be written: the next run reads the prompt again
            if partial is not None:
                partial.unlink(missing_ok=True)


def model_identity(model_path: Path) -> str:
    """The model file and the runtime that computed a state: another file, or the same file
    replaced, or another llama-cpp-python, starts an empty store."""
    try:
        runtime = metadata.version("llama-cpp-python")
    except metadata.PackageNotFoundError:  # a stand-in in tests: no state is ever computed
        runtime = "none"
    stat = Path(model_path).stat()
    seen = f"{Path(model_path).resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{runtime}"
    return f"{Path(model_path).stem}-{hashlib.sha256(seen.encode()).hexdigest()[:16]}"


def system_prefix(llama: Any, messages: list[dict[str, str]]) -> list[int] | None:
    """The tokens of the prompt up to the end of its system message, as the runtime will tokenize
    the whole prompt; None when the chat format is not the model's own template, or the system
    message's rendering is not where the prompt begins."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    template = getattr(llama, "metadata", {}).get("tokenizer.chat_template")
    if (
        not template
        or getattr(llama, "chat_format", None) != "chat_template.default"
        or messages[0]["role"] != "system"
    ):
        return None
    eos, bos = _token_text(llama, llama.token_eos()), _token_text(llama, llama.token_bos())
    chat: Any = messages  # the runtime's message type is a TypedDict of the same keys
    system_only = Jinja2ChatFormatter(template, eos, bos, add_generation_prompt=False)(messages=chat[:1])
    whole = Jinja2ChatFormatter(template, eos, bos)(messages=chat)
    if not whole.prompt.startswith(system_only.prompt):
        return None
    prefix = llama.tokenize(system_only.prompt.encode("utf-8"), add_bos=False, special=True)
    tokens = llama.tokenize(whole.prompt.encode("utf-8"), add_bos=False, special=True)
    return prefix if tokens[: len(prefix)] == prefix else None


def _token_text(llama: Any, token: int) -> str:
    return llama._model.token_get_text(token) if token != -1 else ""


def _read(llama: Any, prefix: list[int], held: Any) -> None:
    """Evaluate `prefix` into the context, keeping what the context already holds of it."""
    common = 0
    for have, want in zip(held, prefix, strict=False):
        if have != want:
            break
        common += 1
    common = min(common, len(prefix) - 1)  # at least one token read: the runtime then has its logits
    llama._ctx.kv_cache_seq_rm(0, common, -1)
    llama.n_tokens = common
    llama.eval(prefix[common:])


def _load(path: Path, prefix: list[int]) -> _State | None:
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    if not blob.startswith(_MAGIC):
        return None
    start = len(_MAGIC)
    count = int.from_bytes(blob[start : start + 4], "little")
    tokens_end = start + 4 + 4 * count
    tokens = list(_from_int32s(blob[start + 4 : tokens_end]))
    if tokens != prefix:  # another prompt under the same hash, or a damaged file
        return None
    data = blob[tokens_end:]
    return _State(tokens=_int32s(tokens), data=(ctypes.c_uint8 * len(data)).from_buffer_copy(data), size=len(data))


def _drop_oldest(directory: Path, capacity: int) -> None:
    """The least recently used states beyond `capacity` deleted; another run's store may be doing
    the same: a file gone meanwhile is simply not counted."""
    sizes: dict[Path, tuple[float, int]] = {}
    for path in directory.glob("*.state"):
        with contextlib.suppress(OSError):
            status = path.stat()
            sizes[path] = (status.st_mtime, status.st_size)
    files = sorted(sizes, key=lambda path: sizes[path][0])
    total = sum(size for _, size in sizes.values())
    for path in files[:-1]:  # the newest stays, whatever its size
        if total <= capacity:
            break
        total -= sizes[path][1]
        path.unlink(missing_ok=True)


def _digest(tokens: list[int]) -> str:
    return hashlib.sha256(bytes(_int32s(tokens))).hexdigest()[:32]


def _int32s(tokens: Any) -> Any:
    import numpy as np

    return np.asarray(tokens, dtype=np.int32)


def _from_int32s(blob: bytes) -> Any:
    import numpy as np

    return np.frombuffer(blob, dtype=np.int32).tolist()
