"""Forecasts of a stage's calls, tokens and cost (issue 26): learned from earlier runs per role,
scaled by the lemma count where the work grows with the lemmas, priced at this run's models; a
bundled prior on a machine with no earlier run, said so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lemmata import layout
from lemmata.artifacts import StageForecast
from lemmata.run.spending.forecast import (
    FORECAST_STAGES,
    actual_by_stage,
    bundled_prior,
    forecast_against_actual,
    forecast_stage,
    forecast_text,
    read_forecasts,
    recorded_run,
    run_history,
)

MODEL = "local/local-model"


def call(role: str, scope: str, tokens_in: int = 100, tokens_out: int = 10, model: str = "local-model") -> dict:
    return {
        "role": role,
        "scope": scope,
        "backend": "local",
        "model": model,
        "tokens_in": tokens_in,
        "tokens_out": tokens_out,
    }


def a_run(lemmas: int, prover_calls_per_lemma: int = 2, model: str = "local-model") -> list[dict]:
    """A run's calls: a survey call, a plan call, the prover per lemma, an experiment call per lemma."""
    calls = [call("survey", "survey", model=model), call("decomposer", "theory_plan", 500, 50, model=model)]
    for number in range(1, lemmas + 1):
        calls += [call("prover", f"prove_lemma:L{number}", 1000, 400, model)] * prover_calls_per_lemma
        calls.append(call("experiment", "experiment", 300, 30, model))
    return calls


def free(role: str, tokens_in: int, tokens_out: int) -> float:
    return 0.0


def test_a_run_is_split_into_what_grows_with_the_lemmas_and_what_does_not() -> None:
    run = recorded_run([*a_run(lemmas=2), call("writer", "rewrite_writer:v2"), call("qa", "qa")])
    assert run.lemmas == 2 and run.model == MODEL
    assert run.fixed["theory"]["decomposer"].calls == 1  # the plan: once, whatever the lemmas
    assert run.per_lemma["theory"]["prover"].calls == 4 and run.per_lemma["experiment"]["experiment"].calls == 2
    assert "rewrite" not in run.fixed and "rewrite" not in run.per_lemma  # a rewrite's calls, the questions'
    assert run.stages == {"survey", "theory", "experiment"}


def test_the_proofs_are_scaled_to_this_runs_lemma_count() -> None:
    history = [recorded_run(a_run(lemmas=2))]
    forecast = forecast_stage("theory", history, MODEL, free, lemmas=5)
    assert (forecast.calls, forecast.tokens_in, forecast.tokens_out) == (1 + 5 * 2, 500 + 10 * 1000, 50 + 10 * 400)
    assert forecast.lemmas == 5 and forecast.runs == 1
    assert forecast.basis == "1 earlier run on this machine; 5 lemmas"


def test_a_lemma_a_machine_proved_without_a_call_counts_among_the_runs_lemmas() -> None:
    """Issue 38: a lemma a machine proves needs no prover call; counted by its calls alone, a run of
    four lemmas (one proved by the machine) was taken for three, and its proofs for dearer ones."""
    calls = a_run(lemmas=3)
    assert recorded_run(calls).lemmas == 3
    run = recorded_run(calls, proved=4)
    assert run.lemmas == 4 and run.per_lemma["theory"]["prover"].calls == 6
    forecast = forecast_stage("theory", [run], MODEL, free, lemmas=4)
    assert forecast.calls == 1 + 6  # 4 lemmas at 1.5 prover calls each, as the earlier run had


def test_before_the_plan_the_lemma_count_is_the_middle_one_of_the_earlier_runs() -> None:
    history = [recorded_run(a_run(lemmas)) for lemmas in (2, 3, 7)]
    forecast = forecast_stage("experiment", history, MODEL, free)
    assert forecast.lemmas == 3 and forecast.calls == 3
    assert forecast.basis.endswith("; 3 lemmas, as no plan is made yet")


def test_earlier_runs_on_the_same_model_are_preferred_and_others_are_said_to_differ() -> None:
    same, other = recorded_run(a_run(1)), recorded_run(a_run(1, prover_calls_per_lemma=9, model="big"))
    assert forecast_stage("theory", [same, other], MODEL, free, lemmas=1).calls == 1 + 2
    elsewhere = forecast_stage("theory", [other], MODEL, free, lemmas=1)
    assert elsewhere.calls == 1 + 9 and ", of other models, whose token counts may differ" in elsewhere.basis


def test_only_runs_that_finished_the_stage_are_learned_from() -> None:
    unfinished = recorded_run(a_run(lemmas=2), finished=["survey"])
    forecast = forecast_stage("theory", [unfinished], MODEL, free, lemmas=2)
    assert (
        forecast.runs == 0
        and forecast.basis == "lemmata's bundled prior, as no run on this machine came before; 2 lemmas"
    )


def test_the_bundled_prior_forecasts_every_stage_that_calls_the_model() -> None:
    prior = bundled_prior()
    forecasts = {stage: forecast_stage(stage, [], MODEL, free, prior=prior) for stage in FORECAST_STAGES}
    assert all(
        forecasts[stage].calls > 0 for stage in ("survey", "direction planning", "theory", "experiment", "writer")
    )
    assert forecasts["compile"].calls == 0  # the compile calls no model
    assert forecasts["theory"].lemmas == prior.lemmas == 3


def test_the_forecast_is_priced_by_each_roles_model_and_unknown_when_one_has_no_price() -> None:
    history = [recorded_run(a_run(lemmas=1))]

    def prices(role: str, tokens_in: int, tokens_out: int) -> float | None:
        return (tokens_in * 2 + tokens_out * 8) / 1e6 if role == "prover" else 0.5

    forecast = forecast_stage("theory", history, MODEL, prices, lemmas=1)
    assert forecast.cost_usd == pytest.approx(0.5 + (2000 * 2 + 800 * 8) / 1e6)
    assert "$0.5104" in forecast_text(forecast)
    unpriced = forecast_stage("theory", history, MODEL, lambda role, i, o: None if role == "prover" else 0.5, lemmas=1)
    assert unpriced.cost_usd is None and "cost unknown (a model without a price)" in forecast_text(unpriced)


def write_run(home: Path, name: str, calls: list[dict], finished: tuple[str, ...]) -> Path:
    run_dir = home / "runs" / name
    run_dir.mkdir(parents=True)
    (run_dir / layout.LLM_CALLS).write_text("".join(json.dumps(c) + "\n" for c in calls))
    for artifact in finished:
        (run_dir / artifact).write_text("{}")
    return run_dir


def test_the_history_is_the_data_directorys_other_runs_with_the_stages_they_finished(tmp_path: Path) -> None:
    write_run(tmp_path, "a", a_run(2), (layout.SURVEY, layout.THEORY))
    this = write_run(tmp_path, "b", a_run(3), (layout.SURVEY,))
    [earlier] = run_history(tmp_path, exclude=this)
    assert earlier.lemmas == 2 and earlier.stages == {"survey", "theory"}


def forecast(stage: str, calls: int) -> StageForecast:
    return StageForecast(stage=stage, made_at=0, calls=calls, tokens_in=10, tokens_out=5, cost_usd=0.25, basis="x")


def test_the_first_forecast_of_a_stage_counts_and_a_line_that_is_none_is_skipped(tmp_path: Path) -> None:
    lines = [forecast("theory", 7).model_dump_json(), '{"stage": "survey"}', forecast("theory", 9).model_dump_json()]
    (tmp_path / layout.FORECASTS).write_text("".join(line + "\n" for line in lines))
    assert {stage: f.calls for stage, f in read_forecasts(tmp_path).items()} == {"theory": 7}


def test_a_stages_forecast_is_shown_beside_what_it_used(tmp_path: Path) -> None:
    (tmp_path / layout.LLM_CALLS).write_text(
        "".join(json.dumps({**call("prover", "prove_lemma:L1"), "cost_usd": 0.125}) + "\n" for _ in range(2))
    )
    actual = actual_by_stage(tmp_path)
    assert forecast_against_actual(forecast("theory", 3), actual["theory"]) == (
        "forecast 3 calls, 15 tokens, $0.2500; used 2 calls, 220 tokens, $0.2500"
    )
    assert forecast_against_actual(forecast("writer", 4), actual.get("writer")).endswith("used 0 calls, 0 tokens, $0")


def test_a_newer_run_weighs_twice_the_one_before_it() -> None:
    newer, older = recorded_run(a_run(1, prover_calls_per_lemma=2)), recorded_run(a_run(1, prover_calls_per_lemma=8))
    forecast = forecast_stage("theory", [newer, older], MODEL, free, lemmas=3)  # newest first
    assert forecast.calls == 1 + 3 * 4  # per lemma (2 x 1 + 8 x 1/2) / 1.5 = 4


def test_a_run_whose_log_cannot_be_read_is_left_out_of_the_history(tmp_path: Path) -> None:
    write_run(tmp_path, "a", a_run(2), (layout.SURVEY,))
    unreadable = write_run(tmp_path, "b", a_run(3), (layout.SURVEY,)) / layout.LLM_CALLS
    unreadable.unlink()
    unreadable.mkdir()  # reading it fails (IsADirectoryError), as a file being replaced may
    assert [run.lemmas for run in run_history(tmp_path)] == [2]


def test_the_experiment_is_scaled_by_the_lemmas_an_earlier_run_tested_when_its_record_says() -> None:
    tested_two_of_four = recorded_run(a_run(lemmas=4), tested=2)  # four experiment calls for two lemmas tested
    assert forecast_stage("experiment", [tested_two_of_four], MODEL, free, lemmas=1).calls == 2
    assert forecast_stage("experiment", [recorded_run(a_run(lemmas=4))], MODEL, free, lemmas=1).calls == 1


def test_no_role_is_forecast_more_calls_than_this_run_allows_it_turns() -> None:
    """An earlier run allowed six proof turns a lemma; this one allows two."""
    history = [recorded_run(a_run(lemmas=1, prover_calls_per_lemma=6))]
    forecast = forecast_stage("theory", history, MODEL, free, lemmas=3, turns={"prover": 2, "writer": 1})
    assert forecast.calls == 1 + 3 * 2 and forecast.tokens_in == 500 + 3 * 2 * 1000  # tokens cut in proportion
    assert forecast.basis.endswith("; capped at the turns this run allows")
    assert "capped" not in forecast_stage("theory", history, MODEL, free, lemmas=3, turns={"prover": 6}).basis


def test_the_stage_tally_follows_a_log_appended_to_rewritten_truncated_or_replaced(tmp_path: Path) -> None:
    """actual_by_stage reads only what was appended since it last read (issue 53, item 8), and
    starts again when the log is not the one it read: rewritten in place, shorter, another file."""
    log = tmp_path / layout.LLM_CALLS
    survey = '{"role": "survey", "scope": "survey", "tokens_in": 10, "tokens_out": 1}\n'
    theory = '{"role": "prover", "scope": "prove_lemma:L1", "tokens_in": 20, "tokens_out": 2}\n'
    log.write_text(survey * 2)
    assert actual_by_stage(tmp_path)["survey"].calls == 2
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(survey + theory)
    counts = actual_by_stage(tmp_path)
    assert (counts["survey"].calls, counts["theory"].calls, counts["theory"].tokens) == (3, 1, 22)
    log.write_text(theory * 5)  # the same file, other bytes: read again
    assert {stage: used.calls for stage, used in actual_by_stage(tmp_path).items()} == {"theory": 5}
    log.write_text(theory)  # shorter
    assert actual_by_stage(tmp_path)["theory"].calls == 1
    replacement = tmp_path / "new.jsonl"
    replacement.write_text(survey)
    replacement.replace(log)  # another file under the name
    assert {stage: used.calls for stage, used in actual_by_stage(tmp_path).items()} == {"survey": 1}
    actual_by_stage(tmp_path)["survey"].calls = 99  # the caller's copy
    assert actual_by_stage(tmp_path)["survey"].calls == 1
    log.unlink()
    assert actual_by_stage(tmp_path) == {}
