"""Runs over HTTP: list and start, the status poll, gate decisions, pause and resume, and the
live event stream. Every process that drives a run is started by the RunSupervisor."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from lemmata import layout
from lemmata.errors import ArtifactError, UserError
from lemmata.llm import embedded_model as em
from lemmata.pictures.lemma_graph import lemma_costs, live_lemma_graph, proof_scope
from lemmata.run.cards import stage_card
from lemmata.run.create import MAX_PAPERS, PAPERS_TASK, create_new_run
from lemmata.run.events import JobBoard, TailReader, TokenTally
from lemmata.run.gate_answers import GateAnswer, gate_kind, save_answer, waiting_question
from lemmata.run.gates import GATE_INPUTS, waiting_gate
from lemmata.run.outcome import outcome_of
from lemmata.run.pausing import request_pause
from lemmata.run.pipeline import REWRITE_STEPS, STAGES, card_artifacts, stage_states
from lemmata.run.record import DataHome, RunRecord, live_status, load_record
from lemmata.run.rewrite import pending_rewrite, rewrite_unsettled
from lemmata.run.spending.budget import Budget, change_budget
from lemmata.run.versions import paper_versions
from lemmata.server.http import ApiError, json_body, run_dir_of, text_field
from lemmata.server.live_events import run_events
from lemmata.server.spending import budget_of, budget_status, stage_forecasts
from lemmata.server.supervisor import RunConflict, RunSupervisor
from lemmata.settings import Settings, lemmata_home, load_environment

log = logging.getLogger("lemmata.server")
MODES = ("prove", "explore", "from-papers")
GATE_MODES = ("human", "auto", "none")


def summary(data_home: DataHome, record: RunRecord) -> dict[str, object]:
    """A run in the list and at the top of its status poll. `status` is the run's state
    ("completed": the workflow finished); `outcome` says what a completed run established, and
    `main_result_established` is null until the run is completed (or when its theory is unreadable)."""
    outcome = outcome_of(data_home.run_dir(record.session_id), record)
    return {
        "id": record.session_id,
        "mode": record.mode,
        "task": record.task,
        "status": outcome.status,
        "outcome": outcome.text,
        "main_result_established": outcome.established,
        "main_result_issues": list(outcome.issues),
        "main_result_status": outcome.main_status or None,
        "main_result_evidence": outcome.evidence or None,
        "message": record.message,
        "created": record.created,
        "updated": record.updated,
    }


async def list_runs(request: Request) -> JSONResponse:
    """The runs, and, when there are any, under "damaged" those whose run.json does not read (id
    and what is wrong): a damaged run is never silently left out."""
    data_home: DataHome = request.app.state.data_home
    body: dict[str, object] = {"runs": [summary(data_home, r) for r in data_home.run_records()]}
    damaged = [{"id": run.session_id, "error": run.advice} for run in data_home.damaged_runs()]
    return JSONResponse({**body, "damaged": damaged} if damaged else body)


def _task_of(body: dict) -> tuple[str, str, dict[str, Any]]:
    """(mode, task, extra task fields) of a start request; 400 naming what is wrong."""
    mode = body.get("mode", "prove")
    if mode not in MODES:
        raise ApiError(400, f'"mode" must be one of {", ".join(MODES)}')
    if mode == "from-papers":
        papers = body.get("papers")
        if (
            not isinstance(papers, list)
            or not 1 <= len(papers) <= MAX_PAPERS
            or not all(isinstance(p, str) and p.strip() for p in papers)
        ):
            raise ApiError(400, f'"papers" must list 1 to {MAX_PAPERS} paper ids or titles (text) for from-papers')
        papers = [p.strip() for p in papers]
        return mode, PAPERS_TASK + ", ".join(papers), {"paper_ids": papers, **_domain_of(body)}
    task = text_field(body, "task", "what to prove" if mode == "prove" else "the domain to explore")
    if not task.strip():
        raise ApiError(400, f'"task" is empty: say {"what to prove" if mode == "prove" else "what to explore"}')
    return mode, task, ({"domain": task} if mode == "explore" else _domain_of(body))


def _domain_of(body: dict) -> dict[str, object]:
    """The optional research domain (plugin, skills, memories) of a prove or from-papers run."""
    domain = text_field(body, "domain", "the research domain, e.g. multi-armed bandits", required=False).strip()
    return {"domain": domain} if domain else {}


def _installed_embedded_model(environ: Mapping[str, str] | None):
    """The server never assembles the 1 GB model inside a request: it must be installed."""

    def model(settings: Settings) -> Path:
        home = lemmata_home(environ)
        if not settings.LEMMATA_EMBEDDED_MODEL.strip() and not em.is_installed(home, em.DEFAULT_MODEL):
            raise UserError(
                "the embedded model is not installed: run `lemmata model install` once, "
                "or set LLM_BACKEND and a provider key, then start the run again"
            )
        return em.ensure_model(settings, home)

    return model


async def start_run(request: Request) -> JSONResponse:
    """202 with the new run's id once its directory is written; a supervised process drives it
    (gates wait for decisions from the browser)."""
    body = await json_body(request)
    mode, task, fields = _task_of(body)
    gate = body.get("gate")  # absent: the GATE_MODE setting, as a run started in a terminal
    if gate is not None and gate not in GATE_MODES:
        raise ApiError(400, f'"gate" must be one of {", ".join(GATE_MODES)}, or absent for the GATE_MODE setting')
    budget = budget_of(body)
    data_home: DataHome = request.app.state.data_home
    environ = request.app.state.environ
    supervisor: RunSupervisor = request.app.state.supervisor
    await run_in_threadpool(supervisor.reserve)  # a place, before a run directory is made for nothing
    try:
        new = await run_in_threadpool(
            lambda: create_new_run(
                data_home,
                mode,
                task,
                None,
                gate,
                load_environment(environ),
                _installed_embedded_model(environ),
                budget=budget,
                **fields,
            )
        )
    except BaseException:
        supervisor.release()
        raise
    await run_in_threadpool(supervisor.drive, new.run_dir, lambda: None, True)
    session_id = new.run_dir.name
    log.info("run %s started (%s, backend %s)", session_id, mode, new.backend)
    return JSONResponse(
        {
            "id": session_id,
            "status": "running",
            "poll": f"/api/runs/{session_id}",
            "events": f"/api/runs/{session_id}/events",
        },
        status_code=202,
    )


@dataclass
class _Followed:
    calls: TailReader
    events: TailReader
    tally: TokenTally = field(default_factory=TokenTally)
    board: JobBoard = field(default_factory=JobBoard)
    lemma_calls: list[dict[str, Any]] = field(default_factory=list)  # the first run's proofs' calls


class LiveRuns:
    """What each run's logs say so far (tokens, running jobs), read incrementally: a poll reads
    only what was written since the last one."""

    def __init__(self) -> None:
        self._runs: dict[Path, _Followed] = {}

    def _follow(self, run_dir: Path) -> _Followed:
        followed = self._runs.setdefault(
            run_dir, _Followed(TailReader(run_dir / layout.LLM_CALLS), TailReader(run_dir / layout.EVENTS))
        )
        for record in followed.calls.read_new():
            followed.tally.apply(record)
            if str(record.get("scope", "")).startswith(proof_scope(1)):
                followed.lemma_calls.append({key: record.get(key) for key in ("scope", "role", "cost_usd")})
        for event in followed.events.read_new():
            if event.get("event") == "workflow_started":  # a new invocation: the last one's jobs are over
                followed.board = JobBoard()
            followed.board.apply(event)
        return followed

    def tokens(self, run_dir: Path) -> dict[str, int | float | str]:
        """Calls, tokens and what they cost (issue 26): `cost_usd` counts the calls of known cost,
        `cost_unknown_calls` the others, `cost` says both in words."""
        tally = self._follow(run_dir).tally
        return {
            "calls": tally.calls,
            "in": tally.tokens_in,
            "out": tally.tokens_out,
            "cost_usd": round(tally.cost.known_usd, 6),
            "cost_unknown_calls": tally.cost.unknown_calls,
            "cost": tally.cost.text,
        }

    def running_rules(self, run_dir: Path) -> set[str]:
        return self._follow(run_dir).board.running_rules()

    def running_lemmas(self, run_dir: Path) -> set[str]:
        """The lemmas whose prove_lemma job runs now."""
        return self._follow(run_dir).board.running_wildcards("prove_lemma", "lemma")

    def lemma_calls(self, run_dir: Path) -> list[dict[str, Any]]:
        """The calls of the first run's lemma proofs so far (scope, role, cost)."""
        return self._follow(run_dir).lemma_calls


def _cards(run_dir: Path) -> list[dict[str, str]]:
    """The first run's stage cards, then each rewrite's (theory and experiment of version n)."""
    named = [(stage.name, stage.artifact) for stage in STAGES]
    rewrites = sorted(int(path.name[1:]) for path in run_dir.glob(layout.version_dir("*")) if path.name[1:].isdigit())
    named += [(f"rewrite v{n}: {Path(artifact).stem}", artifact) for n in rewrites for artifact in card_artifacts(n)]
    cards = []
    for stage, artifact in named:
        if (run_dir / artifact).exists():
            try:
                card = stage_card(run_dir / artifact)
            except ArtifactError as error:  # a poll must answer whatever one file holds
                card = f"{stage}: {error}"
            if card:
                cards.append({"stage": stage, "text": card})
    return cards


def _rewrite_progress(run_dir: Path, working: bool) -> dict[str, object] | None:
    """The unfinished rewrite's version and steps (done, running, pending), or None."""
    request = pending_rewrite(run_dir)
    if request is None:
        return None
    steps, running_marked = [], False
    for rewrite_step in REWRITE_STEPS:
        done = (run_dir / rewrite_step.done_file(request.version)).exists()
        state = "done" if done else "running" if working and not running_marked else "pending"
        running_marked = running_marked or state == "running"
        steps.append({"step": rewrite_step.name, "state": state})
    return {"version": request.version, "instructions": request.instructions, "steps": steps}


async def run_status(request: Request) -> JSONResponse:
    run_dir = run_dir_of(request)
    supervisor: RunSupervisor = request.app.state.supervisor
    record = load_record(run_dir)
    body = summary(request.app.state.data_home, record)
    working = supervisor.working(run_dir)
    live: LiveRuns = request.app.state.live_runs
    running = live.running_rules(run_dir) if working else set()  # a dead driver's jobs are not running
    waiting_at = waiting_gate(run_dir) if body["status"] == "waiting" else None  # that stage shows "waiting"
    body.update(
        stages=[
            {"stage": s.name, "state": state, "artifact": s.artifact}
            for s, state in stage_states(run_dir, running, waiting_at)
        ],
        versions=paper_versions(run_dir),
        working=working,
        rewrite_in_progress=working and rewrite_unsettled(run_dir),
        rewrite=_rewrite_progress(run_dir, working),
        gate=waiting_question(run_dir) if body["status"] == "waiting" else None,
        cards=_cards(run_dir),
        tokens=live.tokens(run_dir),
        budget=budget_status(record),
        forecasts=stage_forecasts(run_dir),
        lemma_graph=_lemma_graph_url(run_dir, live, working),
    )
    log.debug("status poll %s: %s", run_dir.name, body["status"])
    return JSONResponse(body)


#: The lemma graph is a picture, never a page: opened alone it may load nothing and run nothing.
SVG_POLICY = "default-src 'none'; frame-ancestors 'none'; sandbox"


def _lemma_graph_url(run_dir: Path, live: LiveRuns, working: bool) -> str | None:
    """Where the lemma graph is, with a query that changes whenever the picture does (the plan, a
    proof written, a job started or ended, a call made), so the page fetches it only then; None
    before the plan exists."""
    plan = _mtime(run_dir / layout.PLAN)
    if plan is None:
        return None
    state: list[object] = [plan, len(live.lemma_calls(run_dir))]
    state += sorted(live.running_lemmas(run_dir)) if working else []
    state += sorted((p.name, _mtime(p)) for p in run_dir.glob(layout.lemma("*")))
    key = hashlib.sha256(repr(state).encode()).hexdigest()[:16]
    return f"/api/runs/{run_dir.name}/lemma-graph.svg?v={key}"


def _mtime(path: Path) -> int | None:
    """When the file was last written; None if it is not there (a job's output Snakemake removed)."""
    try:
        return path.stat().st_mtime_ns
    except FileNotFoundError:
        return None


async def lemma_graph(request: Request) -> Response:
    """The first run's lemmas as an SVG picture as they stand (issue 26): statuses, the lemmas
    being proved, each lemma's calls and cost so far; 404 before the plan exists."""
    run_dir = run_dir_of(request)
    live: LiveRuns = request.app.state.live_runs
    running = live.running_lemmas(run_dir) if request.app.state.supervisor.working(run_dir) else set()
    costs = lemma_costs(live.lemma_calls(run_dir))
    svg = await run_in_threadpool(live_lemma_graph, run_dir, running, costs)
    if svg is None:
        raise ApiError(
            404,
            f"run {run_dir.name} has no lemma plan yet ({layout.PLAN}): the lemma graph is drawn once "
            "the theory stage has planned the lemmas",
        )
    return Response(
        svg,
        media_type="image/svg+xml",
        headers={
            "cache-control": "no-store",
            "content-security-policy": SVG_POLICY,
            "x-content-type-options": "nosniff",
        },
    )


def _answer(gate: str, body: dict) -> GateAnswer:
    kind = gate_kind(gate)
    if kind == "survey_papers":
        return GateAnswer(
            gate=gate,
            text=text_field(
                body, "papers", "paper ids or titles, comma-separated (empty: go on without papers)", required=False
            ),
        )
    if kind == "direction":
        direction = text_field(body, "direction", "the research direction to take")
        if not direction.strip():
            raise ApiError(400, '"direction" is empty: say which research direction to take')
        return GateAnswer(gate=gate, text=direction)
    approved = body.get("approved")
    if not isinstance(approved, bool):
        raise ApiError(400, '"approved" must be true (go on) or false (reject)')
    return GateAnswer(
        gate=gate,
        approved=approved,
        feedback=text_field(body, "feedback", "feedback for the next agent", required=False),
        step=text_field(body, "step", "the most problematic step", required=False),
        issue=text_field(body, "issue", "what is wrong with it", required=False),
    )


async def decide_gate(request: Request) -> JSONResponse:
    """The decision of the gate the run waits at: 202 and the run goes on; 409 when it does not
    wait there."""
    run_dir = run_dir_of(request)
    gate = request.path_params["gate"]
    if gate not in GATE_INPUTS:
        raise ApiError(404, f"no gate {gate!r}: the gates are {', '.join(GATE_INPUTS)}")
    answer = _answer(gate, await json_body(request))

    def record_answer() -> None:
        question = waiting_question(run_dir) if load_record(run_dir).status == "waiting" else None
        if question is None or question["gate"] != gate:
            waiting = f"it waits at the {question['gate']} gate" if question else "it waits at no gate"
            raise RunConflict(f"run {run_dir.name} is not waiting at the {gate} gate: {waiting}")
        if (
            gate_kind(gate) == "theory_review"
            and not answer.approved
            and not question["second_look"]
            and not (answer.step.strip() and answer.issue.strip())
        ):
            raise ApiError(
                400,
                'a first rejection of the theory needs "step" (the most problematic step: its '
                'number or lemma id) and "issue" (what is wrong): the theory runs once more with them',
            )
        save_answer(run_dir, answer)

    await _drive(request, run_dir, record_answer)
    log.info("gate %s of %s decided: %s", gate, run_dir.name, "approved" if answer.approved else "rejected")
    return JSONResponse({"id": run_dir.name, "status": "running"}, status_code=202)


async def _drive(request: Request, run_dir: Path, prepare) -> object:
    supervisor: RunSupervisor = request.app.state.supervisor
    try:
        return await run_in_threadpool(supervisor.drive, run_dir, prepare)
    except RunConflict as exc:
        raise ApiError(409, str(exc)) from None


async def pause(request: Request) -> JSONResponse:
    run_dir = run_dir_of(request)
    if not request.app.state.supervisor.working(run_dir):
        status = live_status(run_dir, load_record(run_dir))
        raise ApiError(409, f"run {run_dir.name} is not running (status {status}): nothing to pause")
    request_pause(run_dir, "browser")
    return JSONResponse({"id": run_dir.name, "status": "pause requested"}, status_code=202)


async def resume(request: Request) -> JSONResponse:
    """202 and the run goes on; a body may give a new "budget_usd" and "budget_tokens" (a run its
    budget paused goes on with a larger one). No body: the budget stays."""
    run_dir = run_dir_of(request)
    budget = budget_of(await json_body(request)) if request.headers.get("content-type") else Budget()

    def nothing_left_to_do() -> None:
        if load_record(run_dir).status == "completed" and pending_rewrite(run_dir) is None:
            raise RunConflict(f"run {run_dir.name} is completed: nothing to resume (a rewrite makes a new version)")
        if budget:
            change_budget(run_dir, request.app.state.data_home.home, budget)

    await _drive(request, run_dir, nothing_left_to_do)
    return JSONResponse({"id": run_dir.name, "status": "running"}, status_code=202)


async def events(request: Request) -> StreamingResponse:
    run_dir = run_dir_of(request)
    return StreamingResponse(
        run_events(run_dir, request.app.state.supervisor.working),
        media_type="text/event-stream",
        headers={"cache-control": "no-store"},
    )
