"""bench/embedded_run.py's per-role table: what counts as copied from the prompt, and the totals."""

from __future__ import annotations

from unit.bench import load_bench

bench = load_bench("embedded_run")


def test_tokens_count_as_copied_only_in_stretches_the_prompt_holds_verbatim() -> None:
    prompt = list(range(100))
    assert bench.copied_tokens(prompt, list(range(10, 30)), run=8) == 20  # one stretch of 20
    assert bench.copied_tokens(prompt, [500, *range(10, 17), 501], run=8) == 0  # 7 tokens: a phrase, not a copy
    pieces = [*range(40, 50), 900, 901, *range(60, 70)]
    assert bench.copied_tokens(prompt, pieces, run=8) == 20  # two stretches, the tokens between are the model's
    assert bench.copied_tokens(prompt, [*range(10, 20), *range(10, 20)], run=8) == 20  # a copy copied twice
    assert bench.copied_tokens([], list(range(10)), run=8) == 0 and bench.copied_tokens(prompt, [1, 2], run=8) == 0


def test_the_role_table_adds_up_each_roles_calls() -> None:
    request = "Prove that the sum of two even integers is even, citing each lemma by its identifier."
    records = [
        {
            "role": "writer",
            "messages": [{"role": "user", "content": request}],
            "response": f"We restate it: {request}",
            "tokens_in": 30,
            "tokens_out": 24,
            "cache_read_tokens": 10,
            "timings": {"prompt_tokens_evaluated": 20},
            "latency_s": 2.5,
        },
        {
            "role": "writer",
            "messages": [{"role": "user", "content": request}],
            "response": "Our own words only.",
            "tokens_in": 32,
            "tokens_out": 5,
            "cache_read_tokens": None,
            "timings": None,
            "latency_s": 0.5,
        },
        {"role": "prover", "messages": [], "response": None, "tokens_in": None, "tokens_out": None, "latency_s": None},
    ]
    roles = bench.per_role(records, bench.word_tokens)
    assert dict(roles["writer"]) == {
        "calls": 2,
        "in": 62,
        "evaluated": 52,  # 20 measured, and all 32 of the call that reported nothing
        "reused": 10,
        "out": 29,
        "copied": len(bench.word_tokens(request)),
        "model s": 3.0,
    }
    assert roles["prover"]["calls"] == 1 and roles["prover"]["out"] == 0 and roles["prover"]["copied"] == 0
