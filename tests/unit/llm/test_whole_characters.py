"""Half an emoji (issue 53, item 5): a streaming provider that splits a surrogate pair across two
chunks, or a model that writes `\\ud83d` alone in JSON, hands Python a lone surrogate, which no
file can hold. It used to make the call log's write fail: the job failed, the paid call was in no
log and the budget never saw it. Now the answer is made whole where it enters, the pair joined
again, a lone half replaced by U+FFFD, and the call is logged like any other."""

from __future__ import annotations

from pathlib import Path

import pytest

from lemmata import layout
from lemmata.llm.calllog import read_call_records
from lemmata.llm.whole_text import WholeCharacters, whole_text
from support.fake_llm_server import Answer, FakeLLMServer

#: "grin 😀 end" with the emoji as the two halves UTF-16 writes it in, as JSON can carry them.
SPLIT_PAIR = "grin \ud83d\ude00 end"
#: Only the first half: an answer cut in the middle of a character.
LONE_HALF = "cut \ud83d"


@pytest.mark.parametrize(
    "text, whole",
    [
        pytest.param(SPLIT_PAIR, "grin 😀 end", id="pair-joined"),
        pytest.param(LONE_HALF, "cut \ufffd", id="lone-high-half"),
        pytest.param("\ude00 start", "\ufffd start", id="lone-low-half"),
        pytest.param("plain ∀ℤ 😀", "plain ∀ℤ 😀", id="already-whole"),
    ],
)
def test_an_answer_is_made_whole(text: str, whole: str) -> None:
    assert whole_text(text) == whole
    whole_text(text).encode("utf-8")


def test_pieces_split_inside_a_pair_are_passed_on_whole() -> None:
    seen: list[str] = []
    relay = WholeCharacters(seen.append)
    for piece in ["grin \ud83d", "\ude00 end", " last \ud83d"]:
        relay(piece)
    relay.finish()
    assert seen == ["grin ", "😀 end", " last ", "\ufffd"]
    for piece in seen:
        piece.encode("utf-8")


@pytest.mark.parametrize("backend", ["local", "vendora"])
def test_a_streamed_answer_with_a_split_pair_is_logged_and_shown_whole(
    fake_llm: FakeLLMServer, llm_client, tmp_path: Path, backend: str
) -> None:
    fake_llm.enqueue("qa", Answer(SPLIT_PAIR))
    seen: list[str] = []
    answer = llm_client(backend, run_dir=tmp_path).complete("qa", "system", "q", on_text=seen.append)
    assert answer == "grin 😀 end" and "".join(seen) == "grin 😀 end"
    (record,) = read_call_records(tmp_path / layout.LLM_CALLS)
    assert record["response"] == "grin 😀 end" and record["error"] is None


def test_a_lone_half_in_a_plain_answer_is_logged(fake_llm: FakeLLMServer, llm_client, tmp_path: Path) -> None:
    fake_llm.enqueue("qa", LONE_HALF)
    assert llm_client("local", run_dir=tmp_path).complete("qa", "system", "q") == "cut \ufffd"
    (record,) = read_call_records(tmp_path / layout.LLM_CALLS)
    assert record["response"] == "cut \ufffd" and record["tokens_out"] > 0
