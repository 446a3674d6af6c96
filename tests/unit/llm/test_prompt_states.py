"""When the embedded backend reads a system prompt, and when it takes what it read from disk instead
(the key/value copying itself is llama.cpp's: tests/e2e/test_shared_model.py runs it on the real
model and compares the answers)."""

from __future__ import annotations

import ctypes
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lemmata.llm import prompt_states
from lemmata.llm.prompt_states import MIN_TOKENS, PromptStates, model_identity, system_prefix
from lemmata.llm.role_states import _State

#: A chat template of the usual shape: each message between its role's tag and an end tag.
TEMPLATE = (
    "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
SYSTEM = "You prove lemmas. " * 8  # 144 characters: one token each here
QUESTION = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Prove: 2a + 2b is even."}]


class Model:
    """A stand-in for llama_cpp.Llama with what the store uses: one token per character."""

    ctx = object()
    chat_format = "chat_template.default"

    def __init__(self, template: str = TEMPLATE) -> None:
        self.metadata = {"tokenizer.chat_template": template}
        self.input_ids = np.zeros(4096, dtype=np.intc)
        self.n_tokens = 0
        self.evaluated: list[int] = []  # tokens read by each eval
        self.restored = 0
        self._model = self
        self._ctx = self

    def tokenize(self, text: bytes, add_bos: bool, special: bool) -> list[int]:
        return [ord(character) for character in text.decode()]

    def token_eos(self) -> int:
        return 1

    def token_bos(self) -> int:
        return -1

    def token_get_text(self, token: int) -> str:
        return "<|end|>"

    def kv_cache_seq_rm(self, sequence: int, start: int, end: int) -> None:
        pass

    def eval(self, tokens: list[int]) -> None:
        self.input_ids[self.n_tokens : self.n_tokens + len(tokens)] = tokens
        self.n_tokens += len(tokens)
        self.evaluated.append(len(tokens))

    def holds(self) -> str:
        return "".join(chr(token) for token in self.input_ids[: self.n_tokens])


@pytest.fixture(autouse=True)
def copies(monkeypatch: pytest.MonkeyPatch) -> None:
    """The state of a stand-in is its tokens: captured and restored as such."""

    def capture(llama: Model) -> _State:
        data = bytes(llama.input_ids[: llama.n_tokens].astype(np.int32))
        return _State(tokens=llama.input_ids[: llama.n_tokens].copy(), data=data, size=len(data))

    def restore(llama: Model, state: _State) -> None:
        tokens = np.frombuffer(bytes(state.data), dtype=np.int32)
        llama.input_ids[: len(tokens)] = tokens
        llama.n_tokens = len(tokens)
        llama.restored += 1

    monkeypatch.setattr(prompt_states, "_capture", capture)
    monkeypatch.setattr(prompt_states, "_restore", restore)


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF model")
    return path


def the_prefix() -> str:
    return f"<|system|>{SYSTEM}<|end|>\n"


def test_a_system_prompt_read_once_is_taken_from_disk_by_the_next_process(tmp_path: Path, model_file: Path) -> None:
    first = Model()
    PromptStates(tmp_path / "states", model_file).prepare(first, QUESTION)
    assert first.evaluated == [len(the_prefix())] and first.holds() == the_prefix()
    later = Model()  # another run: a new model server, nothing in its context
    PromptStates(tmp_path / "states", model_file).prepare(later, QUESTION)
    assert later.evaluated == [] and later.restored == 1 and later.holds() == the_prefix()


def test_a_context_that_holds_the_system_prompt_is_left_as_it_is(tmp_path: Path, model_file: Path) -> None:
    """The role's own last state (role_states.py) holds its system prompt and more: kept."""
    store, model = PromptStates(tmp_path / "states", model_file), Model()
    model.eval(model.tokenize(f"{the_prefix()}<|user|>an earlier question".encode(), False, True))
    store.prepare(model, QUESTION)
    assert model.evaluated == [len(model.holds())] and model.restored == 0
    assert not (tmp_path / "states").exists()


def test_what_the_context_holds_of_the_system_prompt_is_not_read_again(tmp_path: Path, model_file: Path) -> None:
    model = Model()
    model.eval(model.tokenize(b"<|system|>You prove lemmas. And nothing else", False, True))
    PromptStates(tmp_path / "states", model_file).prepare(model, QUESTION)
    assert model.evaluated[1] == len(the_prefix()) - len("<|system|>You prove lemmas. ")
    assert model.holds() == the_prefix()


def test_a_file_of_other_tokens_is_not_used(tmp_path: Path, model_file: Path) -> None:
    store = PromptStates(tmp_path / "states", model_file)
    store.prepare(Model(), QUESTION)
    [path] = store.directory.glob("*.state")
    blob = bytearray(path.read_bytes())
    blob[-8] ^= 1  # what a damaged or colliding file would hold
    header = len(prompt_states._MAGIC) + 4
    blob[header] ^= 1  # its first token differs
    path.write_bytes(bytes(blob))
    model = Model()
    store.prepare(model, QUESTION)
    assert model.restored == 0 and model.evaluated == [len(the_prefix())] and model.holds() == the_prefix()


def test_a_short_system_prompt_is_read_as_part_of_the_prompt(tmp_path: Path, model_file: Path) -> None:
    model = Model()
    short = [{"role": "system", "content": "Be brief."}, QUESTION[1]]
    assert len("<|system|>Be brief.<|end|>\n") < MIN_TOKENS
    PromptStates(tmp_path / "states", model_file).prepare(model, short)
    assert model.evaluated == [] and not (tmp_path / "states").exists()


def test_a_template_whose_prompt_does_not_begin_with_the_system_message_gets_no_state(tmp_path: Path) -> None:
    """A template that puts the user's message first: the system part is no prefix to keep."""
    user_first = "{% for m in messages|reverse %}<|{{ m.role }}|>{{ m.content }}<|end|>\n{% endfor %}"
    assert system_prefix(Model(user_first), QUESTION) is None
    other_format = Model()
    other_format.chat_format = "llama-2"  # the runtime's own format, not the model's template
    assert system_prefix(other_format, QUESTION) is None
    assert system_prefix(Model(), QUESTION) == Model().tokenize(the_prefix().encode(), False, True)


def test_a_store_that_cannot_be_written_costs_only_the_reading(tmp_path: Path, model_file: Path) -> None:
    blocked = tmp_path / "states"
    blocked.write_text("a file where the directory would be")
    model = Model()
    PromptStates(blocked, model_file).prepare(model, QUESTION)
    assert model.holds() == the_prefix() and blocked.read_text() == "a file where the directory would be"


def test_the_least_recently_used_states_go_beyond_the_capacity(tmp_path: Path) -> None:
    for age, name in enumerate(["old", "used", "new"]):
        path = tmp_path / f"{name}.state"
        path.write_bytes(b"x" * 100)
        os.utime(path, (1000 + age, 1000 + age))
    prompt_states._drop_oldest(tmp_path, capacity=250)
    assert sorted(path.stem for path in tmp_path.glob("*.state")) == ["new", "used"]
    prompt_states._drop_oldest(tmp_path, capacity=10)
    assert [path.stem for path in tmp_path.glob("*.state")] == ["new"]  # the newest stays


def test_a_replaced_model_file_starts_an_empty_store(model_file: Path) -> None:
    before = model_identity(model_file)
    model_file.write_bytes(b"GGUF another model")
    assert model_identity(model_file) != before and before.startswith("model-")


def test_states_are_saved_whole_and_read_back_as_written(tmp_path: Path) -> None:
    tokens = list(range(70))
    data = bytes(range(256)) * 3
    path = tmp_path / "s.state"
    path.write_bytes(
        prompt_states._MAGIC + len(tokens).to_bytes(4, "little") + bytes(np.asarray(tokens, np.int32)) + data
    )
    state = prompt_states._load(path, tokens)
    assert state is not None and bytes(state.data) == data and state.size == len(data)
    assert isinstance(state.data, ctypes.Array) and list(state.tokens) == tokens
    assert prompt_states._load(path, tokens[:-1]) is None and prompt_states._load(tmp_path / "none", tokens) is None


def test_a_stand_in_without_a_context_is_left_alone(tmp_path: Path, model_file: Path) -> None:
    stand_in: Any = object()
    PromptStates(tmp_path / "states", model_file).prepare(stand_in, QUESTION)
    assert not (tmp_path / "states").exists()


def test_a_state_the_runtime_refuses_is_read_again_from_nothing(
    tmp_path: Path, model_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refused state leaves the context empty (role_states._restore): all of the system prompt
    is read then, not only what the context had held of it before."""
    store = PromptStates(tmp_path / "states", model_file)
    store.prepare(Model(), QUESTION)

    def refused(llama: Model, state: _State) -> None:
        llama.n_tokens = 0

    monkeypatch.setattr(prompt_states, "_restore", refused)
    model = Model()
    model.eval(model.tokenize(b"<|system|>You prove lemmas. And nothing else", False, True))
    store.prepare(model, QUESTION)
    assert model.evaluated[-1] == len(the_prefix()) and model.holds() == the_prefix()


def test_a_state_another_run_deleted_meanwhile_is_not_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("a", "b"):
        (tmp_path / f"{name}.state").write_bytes(b"x" * 100)
    real_stat = Path.stat

    def vanishing(path: Path, *args: Any, **kwargs: Any) -> Any:
        if path.name == "a.state":
            raise FileNotFoundError(path)
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(Path, "stat", vanishing)
    prompt_states._drop_oldest(tmp_path, capacity=10)  # no error: "a" is not counted
    monkeypatch.undo()
    assert sorted(path.name for path in tmp_path.glob("*.state")) == ["a.state", "b.state"]
