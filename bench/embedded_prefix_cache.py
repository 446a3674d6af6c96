"""Prompt processing per call on the embedded model, with and without shared-prefix ordering.

lemmata's prompts put the fixed system prompt first and, in the user part, stable material
(goal, earlier lemmas) before what changes from call to call (the lemma to prove now), so the
runtime's prefix cache skips everything the previous call already evaluated. This benchmark
sends the prover prompts of a four-lemma plan one after another in one process, as the
proving of dependent lemmas and the prover's retries do, twice:

- shared prefix: lemmata's real prover template;
- variable first: the same text, with the lemma to prove stated at the top of the system prompt
  (how a naive template reads: "You are proving lemma Lk. <instructions> ...").

Generation is capped at a few tokens so the table shows prompt processing. Prints a table of
prompt tokens, tokens actually evaluated, and prompt-processing milliseconds per call (from
llama.cpp's own counters). Usage: python bench/embedded_prefix_cache.py [--model PATH] [--threads N]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lemmata.agents.prompts import render_prompt
from lemmata.llm.embedded_backend import available_cores
from lemmata.llm.embedded_model import ensure_model
from lemmata.settings import Settings, lemmata_home

GOAL = "For all integers a and b, if a and b are even then a + b is even."
LEMMAS = [
    ("L1", "An integer n is even if and only if n = 2k for some integer k."),
    ("L2", "If a = 2k and b = 2m for integers k and m, then a + b = 2(k + m)."),
    ("L3", "For all integers k and m, the sum k + m is an integer."),
    ("L4", "If a + b = 2j for some integer j, then a + b is even."),
]


def prover_messages(index: int, shared_prefix: bool) -> list[dict[str, str]]:
    lemma_id, statement = LEMMAS[index]
    context = "\n".join(f"[{i}] {s}" for i, s in LEMMAS[:index]) or "(none)"
    prompt = render_prompt("prover", goal=GOAL, lemma_id=lemma_id, statement=statement, context=context)
    if shared_prefix:
        return [{"role": "system", "content": prompt.system}, {"role": "user", "content": prompt.user}]
    variable = f"You are proving lemma [{lemma_id}]: {statement}\n\n"
    user = prompt.user.replace(f"\n\nLemma to prove now [{lemma_id}]: {statement}", "")
    return [{"role": "system", "content": variable + prompt.system}, {"role": "user", "content": user}]


def measure(llama: object, messages: list[dict[str, str]]) -> tuple[int, int, float]:
    import llama_cpp

    llama_cpp.llama_perf_context_reset(llama.ctx)
    answer = llama.create_chat_completion(messages=messages, max_tokens=4, temperature=0.0, seed=1)
    perf = llama_cpp.llama_perf_context(llama.ctx)
    return answer["usage"]["prompt_tokens"], int(perf.n_p_eval), float(perf.t_p_eval_ms)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, help="GGUF file (default: the installed embedded model)")
    parser.add_argument("--threads", type=int, default=available_cores())
    args = parser.parse_args()
    model = args.model or ensure_model(Settings.from_environment(), lemmata_home())

    from llama_cpp import Llama

    rows = []
    totals = {}
    for shared in (True, False):
        # A fresh runtime per ordering: neither starts with the other's cache.
        llama = Llama(
            model_path=str(model), n_ctx=4096, n_threads=args.threads, n_threads_batch=args.threads, verbose=False
        )
        label = "shared prefix" if shared else "variable first"
        spent = 0.0
        for index in range(len(LEMMAS)):
            tokens, evaluated, ms = measure(llama, prover_messages(index, shared))
            rows.append((label, LEMMAS[index][0], tokens, evaluated, ms))
            spent += ms if index else 0.0
        totals[label] = spent
        del llama

    print(f"model {model.name}, {args.threads} threads; prover prompts of a 4-lemma plan, one process\n")
    print(f"{'ordering':<15} {'call':<5} {'prompt tok':>10} {'evaluated':>10} {'prompt ms':>10}")
    for label, lemma_id, tokens, evaluated, ms in rows:
        print(f"{label:<15} {lemma_id:<5} {tokens:>10} {evaluated:>10} {ms:>10.0f}")
    print("\nprompt processing of calls 2-4 (the first call of each has no cache to use):")
    for label, spent in totals.items():
        print(f"  {label:<15} {spent:8.0f} ms")
    saved = totals["variable first"] - totals["shared prefix"]
    print(f"  saved by shared-prefix ordering: {saved:.0f} ms ({saved / max(totals['variable first'], 1):.0%})")


if __name__ == "__main__":
    main()
