"""Reading the writer model's answer into its parts: every malformed answer a named case."""

from __future__ import annotations

import pytest

from lemmata.stages.paper.parts import marker, parse_answer, part_keys

IDS = ["L1", "L2", "L3"]
COMPLETE = (
    "%%% ABSTRACT\nWe prove it.\n%%% INTRODUCTION\nParity matters.\n%%% PRELIMINARIES\nEven: $n = 2k$.\n"
    "%%% LEMMA L1\nUnfold.\n%%% LEMMA L2\nApply L1.\n%%% LEMMA L3\nDistribute.\n%%% DISCUSSION\nFine.\n"
    "%%% CONCLUSION\nDone.\n%%% END\n"
)
ALL_KEYS = part_keys(IDS)

# (answer, cut off by the token limit, the parts read, the part cut off)
ANSWERS = [
    pytest.param(COMPLETE, False, ALL_KEYS, "", id="well-formed"),
    pytest.param(
        "Sure! Here are the parts.\n```latex\n" + COMPLETE + "```\nHope this helps!",
        False,
        ALL_KEYS,
        "",
        id="fenced-with-chat-around",
    ),
    pytest.param(COMPLETE.lower(), False, ALL_KEYS, "", id="markers-in-lower-case"),
    pytest.param(COMPLETE.replace("%%% ", "%% "), False, ALL_KEYS, "", id="two-percent-signs"),
    pytest.param(COMPLETE.replace("%%% ABSTRACT", "%%% ABSTRACT:"), False, ALL_KEYS, "", id="marker-with-colon"),
    pytest.param(
        "# Abstract\nA.\n## Introduction\nB.\n### Lemma [L1]\nC.\n**Conclusion**\nD.\n",
        False,
        ["abstract", "introduction", "lemma:L1", "conclusion"],
        "",
        id="markdown-and-bold-headings",
    ),
    pytest.param(
        "\\section{Introduction}\nB.\n\\section*{Conclusions}\nD.\n",
        False,
        ["introduction", "conclusion"],
        "",
        id="section-commands-as-headings",
    ),
    pytest.param(
        "%%% LEMMA 2\nSecond.\n%%% LEMMA l3\nThird.\n%%% LEMMA 9\nNo such lemma.\n%%% END",
        False,
        ["lemma:L2", "lemma:L3"],
        "",
        id="lemmas-by-position-and-case",
    ),
    pytest.param(
        "%%% ABSTRACT\nA.\n%%% THEOREM\nThe model's own theorem.\n%%% CONCLUSION\nD.\n%%% END",
        False,
        ["abstract", "conclusion"],
        "",
        id="unknown-marker-drops-its-text",
    ),
    pytest.param(
        "%%% ABSTRACT\nA.\n%%% INTRODUCTION\nParity is the first invari",
        True,
        ["abstract"],
        "introduction",
        id="cut-off-mid-sentence-by-the-token-limit",
    ),
    pytest.param(
        "%%% ABSTRACT\nA.\n%%% INTRODUCTION\nA complete sentence.",
        True,
        ["abstract"],
        "introduction",
        id="cut-off-at-a-sentence-end-still-cut",
    ),
    pytest.param(
        "%%% ABSTRACT\nA.\n%%% INTRODUCTION\nParity is the first invari",
        False,
        ["abstract"],
        "introduction",
        id="no-end-marker-ending-mid-sentence",
    ),
    pytest.param(
        "%%% ABSTRACT\nA.\n%%% CONCLUSION\nDone.",
        False,
        ["abstract", "conclusion"],
        "",
        id="no-end-marker-ending-a-sentence",
    ),
    pytest.param(
        "%%% ABSTRACT\nA.\n%%% END\n%%% INTRODUCTION\nAfter the end.",
        False,
        ["abstract"],
        "",
        id="text-after-the-end-marker",
    ),
    pytest.param("%%% ABSTRACT\n\n%%% INTRODUCTION\nB.\n%%% END", False, ["introduction"], "", id="empty-part"),
    pytest.param("Here is the paper.\nParity is the first invariant.", False, [], "", id="no-markers-at-all"),
    pytest.param("", True, [], "", id="empty-answer"),
    pytest.param(
        "\\section{Introduction}\nB.\n\\section{Lemmas}\n[L1] (verified) The lemma list again.\n"
        "\\section{Conclusion}\nD.",
        False,
        ["introduction", "conclusion"],
        "",
        id="a-whole-paper-its-other-sections-dropped",
    ),
    pytest.param(
        "# Introduction\nB.\n## Setting\nStill the introduction.\n# Conclusion\nD.",
        False,
        ["introduction", "conclusion"],
        "",
        id="a-subheading-stays-in-its-part",
    ),
]


@pytest.mark.parametrize("answer, cut_off, keys, cut_part", ANSWERS)
def test_an_answer_is_read_into_its_parts(answer: str, cut_off: bool, keys: list[str], cut_part: str) -> None:
    parsed = parse_answer(answer, IDS, cut_off=cut_off)
    assert sorted(parsed.parts) == sorted(keys) and parsed.cut_part == cut_part


def test_a_part_repeated_in_one_answer_is_joined_as_paragraphs() -> None:
    """Malformed model output: the marker, then the section heading again (read as a second start)."""
    parsed = parse_answer(
        "%%% INTRODUCTION\n\\section{Introduction}\nFirst.\n%%% INTRODUCTION\nSecond.\n%%% END", IDS, cut_off=False
    )
    assert parsed.parts == {"introduction": "First.\n\nSecond."} and parsed.ended


def test_a_line_that_only_looks_like_a_heading_stays_prose() -> None:
    parsed = parse_answer("%%% DISCUSSION\nTherefore:\nEnd\nthe sum is even.\n%%% END", IDS, cut_off=False)
    assert parsed.parts == {"discussion": "Therefore:\nEnd\nthe sum is even."}


def test_a_subheading_is_the_part_s_text_and_another_section_is_dropped() -> None:
    parsed = parse_answer(
        "# Introduction\nB.\n## Setting\nStill.\n# Related work\nDropped.\n# Conclusion\nD.", IDS, cut_off=False
    )
    assert parsed.parts == {"introduction": "B.\n## Setting\nStill.", "conclusion": "D."}
    assert parsed.unknown == ["# Related work"]


def test_markers_name_each_part() -> None:
    assert [marker(key) for key in ["abstract", "lemma:L2", "END"]] == ["%%% ABSTRACT", "%%% LEMMA L2", "%%% END"]
