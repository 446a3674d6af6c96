"""bench/formal.py: the real `lemmata check` on statements and their false twins, against a fake
model whose formalizer answers are scripted per statement (127.0.0.1, no network, no model): the
table's counts, the cases to look at, the kept results, and the failing exit when a false twin
is machine-checked."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import cli_environment

from support import REPO
from support.fake_llm_server import FakeLLMServer, RecordedRequest, prompt_text


def formal(variables: list[tuple[str, str]], conclusion: str, hypotheses: tuple[str, ...] = ()) -> str:
    return json.dumps(
        {
            "formal_statement": conclusion,
            "variables": [{"name": name, "type": kind} for name, kind in variables],
            "hypotheses": list(hypotheses),
            "conclusion": conclusion,
            "not_formalizable_because": "",
        }
    )


NOT_FORMALIZABLE = json.dumps(
    {
        "formal_statement": "",
        "variables": [],
        "hypotheses": [],
        "conclusion": "",
        "not_formalizable_because": "a limit",
    }
)

#: name, statement, its false twin as the bench writes it, the formalizer's answer for each.
ROWS = [
    (
        "sum",
        "What is $2+3$? Show that it is 5.",
        "What is $2+3$? Show that it is 6.",
        formal([], "2 + 3 == 5"),
        formal([], "2 + 3 == 6"),
    ),
    (
        "square",
        "Show that for any real number $a$, $a^2 \\geq 0$.",
        "Show that for any real number $a$, $a^2 < 0$.",
        formal([("a", "real")], "a**2 >= 0"),
        formal([("a", "real")], "a**2 < 0"),
    ),
    (
        "limit",
        "Show that $\\lim_{n \\to \\infty} 1/n = 0$.",
        "Show that $\\lim_{n \\to \\infty} 1/n \\neq 0$.",
        NOT_FORMALIZABLE,
        NOT_FORMALIZABLE,
    ),
    (  # a true statement formalized wrongly (faithful to its numbers): refuted, to be looked at
        "product",
        "What is $2 \\cdot 4$? Show that it is 8.",
        "What is $2 \\cdot 4$? Show that it is 9.",
        formal([], "2 + 4 == 8"),
        formal([], "2 * 4 == 9"),
    ),
]
#: A formalizer that states the twin so that it holds (every number of the prose is there, so the
#: faithfulness check lets it through): a false twin machine-checked, which fails the bench.
CHEAT = (
    "difference",
    "What is $7-2$? Show that it is 5.",
    "What is $7-2$? Show that it is 6.",
    formal([], "7 - 2 == 5"),
    formal([], "7 - 2 + 1 == 6"),
)


def scripted(rows: list[tuple[str, str, str, str, str]], asked: list[str]):
    answers = {statement: answer for row in rows for statement, answer in ((row[1], row[3]), (row[2], row[4]))}

    def answer(request: RecordedRequest) -> str:
        statement = prompt_text(request.body).rsplit("Statement: ", 1)[-1].strip()
        asked.append(statement)
        return answers.get(statement, NOT_FORMALIZABLE)

    return answer


def run_bench(tmp_path: Path, rows: list, fake: FakeLLMServer) -> subprocess.CompletedProcess[str]:
    data = tmp_path / "statements.jsonl"
    data.write_text("".join(json.dumps({"name": row[0], "statement": row[1], "proof": ""}) + "\n" for row in rows))
    env = cli_environment(tmp_path / "home", LLM_BACKEND="local", LOCAL_LLM_BASE_URL=fake.openai_base_url)
    return subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "formal.py"),
            "--backend",
            "local",
            "--all",
            "--data",
            str(data),
            "--out",
            str(tmp_path / "out"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )


def test_the_bench_counts_true_statements_and_false_twins_and_fails_on_a_twin_machine_checked(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    asked: list[str] = []
    fake_llm.set_default("formalizer", scripted([*ROWS, CHEAT], asked))
    done = run_bench(tmp_path, ROWS, fake_llm)
    assert done.returncode == 0, done.stderr[-3000:]
    table = done.stdout
    assert "4 statements of statements.jsonl (seed 34) and their false twins" in table
    assert "| checked | 4 | 4 | |" in table
    assert "| machine-checked | 2/4 (50%) | 0/4 (0%) |" in table
    assert "| refuted | 1/4 (25%) | 3/4 (75%) |" in table
    assert "| not formalized (none written, or refused) | 1/4 (25%) | 1/4 (25%) |" in table
    assert "| failed to run | 0/4 (0%) | 0/4 (0%) |" in table
    assert "| model calls | 4 | 4 | |" in table
    assert "| prompt tokens evaluated, median a check | - | - | |" in table  # a provider does not say
    assert "False twin machine-checked" not in table
    assert "- True statement refuted: product" in table
    assert "formal: 2 + 4 = 8" in table
    assert "counterexample: (it computes to false)" in table
    assert sorted(asked) == sorted(statement for row in ROWS for statement in row[1:3])
    assert (tmp_path / "out" / "items" / "square" / "twin" / "statement.txt").read_text() == ROWS[1][2]
    assert (tmp_path / "out" / "table.md").read_text() == table

    # The twin formalized so that it holds: lemmata "proves" a false statement, and the bench says
    # so and fails. The four earlier statements are not checked again: their results are kept.
    asked.clear()
    done = run_bench(tmp_path, [*ROWS, CHEAT], fake_llm)
    assert done.returncode == 1, done.stderr[-3000:]
    assert sorted(asked) == sorted(CHEAT[1:3])
    assert "| machine-checked | 3/5 (60%) | 1/5 (20%) |" in done.stdout
    assert "- False twin machine-checked (lemmata proved a false statement): difference (twin rule: answer +1)" in (
        done.stdout
    )
    assert "formal: 7 − 2 + 1 = 6" in done.stdout
