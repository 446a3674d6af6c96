"""The OpenAPI 3.1 description the server serves at /api/openapi.json. Written by hand, close
to the handlers' docstrings; a test checks it names exactly the app's routes."""

from __future__ import annotations

from typing import Any, get_args

from lemmata import __version__
from lemmata.artifacts import Mode
from lemmata.run.create import MAX_TASK_CHARS
from lemmata.run.gates import GATE_INPUTS
from lemmata.run.record import RunStatus
from lemmata.run.spending.budget import MAX_BUDGET_TOKENS, MAX_BUDGET_USD
from lemmata.server.paper_api import PAPER_FILES
from lemmata.settings import Settings

MODES = list(get_args(Mode))
GATE_MODES = list(get_args(Settings.model_fields["GATE_MODE"].annotation))
#: A run's recorded status, and "interrupted": one recorded running that no process drives any more.
STATUSES = [*get_args(RunStatus), "interrupted"]

ERROR = {"description": "error", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
SSE = {"text/event-stream": {"schema": {"type": "string"}}}


def _op(
    summary: str,
    ok: str,
    *errors: int,
    body: dict[str, Any] | None = None,
    ok_code: int = 200,
    content: dict[str, Any] | None = None,
    body_required: bool = True,
) -> dict[str, Any]:
    responses: dict[str, Any] = {str(ok_code): {"description": ok, **({"content": content} if content else {})}}
    # Every operation: 401 without the token, 403 for a foreign Host or another site's page;
    # one with a JSON body also 415 for another Content-Type (lemmata.server.guard, .http).
    for code in (401, 403, *errors, *((415,) if body is not None else ())):
        responses[str(code)] = ERROR
    operation: dict[str, Any] = {"summary": summary, "responses": responses}
    if body is not None:
        operation["requestBody"] = {"required": body_required, "content": {"application/json": {"schema": body}}}
    return operation


def _with_response(operation: dict[str, Any], code: str, description: str) -> dict[str, Any]:
    """An operation that answers a second way too (a chat message that orders a rewrite)."""
    operation["responses"][code] = {"description": description}
    return operation


def _object(**properties: Any) -> dict[str, Any]:
    required = [name.rstrip("_") for name in properties if not name.endswith("_")]
    return {
        "type": "object",
        "properties": {name.rstrip("_"): schema for name, schema in properties.items()},
        "required": required,
    }


TEXT = {"type": "string"}
ID: dict[str, Any] = {
    "name": "id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"},
}
VERSION: dict[str, Any] = {
    "name": "version",
    "in": "path",
    "required": True,
    "schema": {"type": "integer", "minimum": 1},
}
#: A run in the list and at the top of its status poll (runs_api.summary).
RUN_SUMMARY = _object(
    id=TEXT,
    mode={"enum": MODES},
    task=TEXT,
    status={
        "enum": STATUSES,
        "description": "the run's state; completed: the workflow finished, whatever it established",
    },
    outcome={
        "type": "string",
        "description": "the status as shown: for a completed run `completed`, or "
        "`completed (main result not established)`, or `completed (main result unknown)` when its theory "
        "cannot be read",
    },
    main_result_established={
        "type": ["boolean", "null"],
        "description": "whether the theory of the latest paper "
        "version establishes the main result; null unless completed with a readable theory",
    },
    main_result_issues={"type": "array", "items": TEXT, "description": "why the main result is not established"},
    main_result_status={
        "type": ["string", "null"],
        "enum": ["machine_checked", "refuted", "tested", "reviewed", "unverified", None],
        "description": "the main result's status (docs/verification.md); null unless completed with a readable theory",
    },
    main_result_evidence={
        "type": ["string", "null"],
        "description": "what the status rests on, e.g. 'machine-checked: the Coq proof kernel (automation: lia)'",
    },
    message=TEXT,
    created={"type": "number"},
    updated={"type": "number"},
)
RUN_SUMMARY_REF = {"$ref": "#/components/schemas/RunSummary"}

GATE: dict[str, Any] = {
    "name": "gate",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "enum": list(GATE_INPUTS)},
}

#: A run's limits (issue 26): it pauses before a stage whose forecast would pass one.
BUDGET: dict[str, Any] = {
    "budget_usd_": {
        "type": "number",
        "exclusiveMinimum": 0,
        "maximum": MAX_BUDGET_USD,
        "description": "dollars; absent: LEMMATA_BUDGET_USD at a start, the run's own at a resume",
    },
    "budget_tokens_": {
        "type": "integer",
        "minimum": 1,
        "maximum": MAX_BUDGET_TOKENS,
        "description": "absent: LEMMATA_BUDGET_TOKENS at a start, the run's own at a resume",
    },
}

PATHS: dict[str, dict[str, Any]] = {
    "/api/runs": {
        "get": _op(
            "All runs, oldest first; `damaged`, when there are any: the runs whose run.json does not read",
            "`{runs: [RunSummary], damaged?: [{id, error}]}`",
            content={
                "application/json": {
                    "schema": _object(
                        runs={"type": "array", "items": RUN_SUMMARY_REF},
                        damaged_={"type": "array", "items": _object(id=TEXT, error=TEXT)},
                    )
                }
            },
        ),
        "post": _op(
            "Start a run; a supervised process drives it, its gates wait for decisions",
            "`{id, status, poll, events}`",
            400,
            413,
            429,
            ok_code=202,
            body=_object(
                mode_={"enum": MODES, "default": "prove"},
                task_={"type": "string", "maxLength": MAX_TASK_CHARS},
                papers_={"type": "array", "items": TEXT, "description": "from-papers: 1 to 20 ids or titles"},
                gate_={"enum": GATE_MODES, "description": "absent: the GATE_MODE setting"},
                domain_={"type": "string", "maxLength": 100, "description": "the research domain (prove, from-papers)"},
                **BUDGET,
            ),
        ),
    },
    "/api/runs/{id}": {
        "get": _op(
            "Status poll: the outcome, stages, versions, the waiting gate, cards, tokens, the lemma graph's URL, "
            "the budget and each stage's forecast",
            "RunSummary (with `outcome, main_result_established, main_result_issues`) plus "
            "`stages, versions, working, rewrite_in_progress, rewrite, gate, cards, tokens, lemma_graph, budget, "
            "forecasts`",
            400,
            404,
            content={"application/json": {"schema": RUN_SUMMARY_REF}},
        )
    },
    "/api/runs/{id}/gates/{gate}": {
        "post": _op(
            "Decide the gate the run waits at; the run goes on",
            "`{id, status}`",
            400,
            404,
            409,
            413,
            429,
            ok_code=202,
            body=_object(
                approved_={"type": "boolean"}, feedback_=TEXT, step_=TEXT, issue_=TEXT, papers_=TEXT, direction_=TEXT
            ),
        )
    },
    "/api/runs/{id}/pause": {
        "post": _op("Pause at the next rule boundary (running jobs finish)", "`{id, status}`", 404, 409, ok_code=202)
    },
    "/api/runs/{id}/resume": {
        "post": _op(
            "Continue a paused, stopped or interrupted run; a body may give it a new budget",
            "`{id, status}`",
            400,
            404,
            409,
            413,
            429,
            ok_code=202,
            body=_object(**BUDGET),
            body_required=False,
        )
    },
    "/api/runs/{id}/events": {
        "get": _op(
            "Live events: `workflow` (event-log lines), `status` (on change), then `end` when no process works on the run",
            "server-sent events",
            404,
            content=SSE,
        )
    },
    "/api/runs/{id}/lemma-graph.svg": {
        "get": _op(
            "The theory's lemmas as a picture, as they stand: status colours, dependency arrows, "
            "turns, calls and cost in each lemma's title",
            "an SVG document (no script, no reference)",
            400,
            404,
            content={"image/svg+xml": {"schema": TEXT}},
        )
    },
    "/api/runs/{id}/history": {"get": _op("The Q&A chat with its event markers", "`{records: [ChatRecord]}`", 404)},
    "/api/runs/{id}/versions": {
        "get": _op("The paper versions", "`{versions: [{version, tex, pdf, rewrite_context, tex_url, pdf_url}]}`", 404)
    },
    "/api/runs/{id}/versions/{version}/{name}": {
        "get": _op(
            "A version's paper.tex or paper.pdf (inline)",
            "the file",
            404,
            content={
                "text/plain": {"schema": TEXT},
                "application/pdf": {"schema": {"type": "string", "format": "binary"}},
            },
        )
    },
    "/api/runs/{id}/ask": {
        "post": _with_response(
            _op(
                "A chat message. A question about the current paper: `piece`, `restart`, then `answer` or "
                "`error` events. Revision instructions (`Shorten the introduction`, `rewrite: ...`): the "
                "rewrite of POST /rewrite, 202 at once",
                "server-sent events",
                400,
                404,
                409,
                413,
                429,
                content=SSE,
                body=_object(question=TEXT),
            ),
            "202",
            "revision instructions: the rewrite started, `{id, version, status, instructions, from_chat, poll}`",
        )
    },
    "/api/runs/{id}/rewrite": {
        "post": _op(
            "Rewrite the paper into the next version: 202 at once",
            "`{id, version, status, instructions, from_chat, poll}`",
            400,
            404,
            409,
            413,
            429,
            ok_code=202,
            body=_object(instructions=TEXT),
        )
    },
    "/api/settings": {
        "get": _op("The 12 token limits: field, name, value, default, used_for, source", "`{settings: [...]}`"),
        "put": _op(
            "Save token limits for the next run (field -> positive integer)",
            "`{settings: [...]}`",
            400,
            413,
            body={"type": "object", "additionalProperties": {"type": "integer", "minimum": 1}},
        ),
    },
    "/api/calibrations": {
        "get": _op(
            "Each backend's checking model: backend, model, available, trust, in_words, command, forecast, "
            "measured, proofs, running, output",
            "`{models: [...], running}`",
        ),
        "post": _op(
            "Measure a backend's checking model on the shipped human-labelled proofs (`lemmata calibrate --yes`)",
            "`{models: [...], running}`",
            400,
            409,
            413,
            ok_code=202,
            body=_object(backend=TEXT),
        ),
    },
    "/api/openapi.json": {"get": _op("This description", "OpenAPI 3.1")},
}

for path, operations in PATHS.items():
    for operation in operations.values():
        names = [p["name"] for p in (ID, GATE, VERSION) if "{" + p["name"] + "}" in path]
        operation["parameters"] = [p for p in (ID, GATE, VERSION) if p["name"] in names]
        if "{name}" in path:
            operation["parameters"].append(
                {"name": "name", "in": "path", "required": True, "schema": {"enum": list(PAPER_FILES)}}
            )


def openapi_document() -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "lemmata",
            "version": __version__,
            "description": "Runs, gates, the paper, its Q&A and rewrites. Every call needs `Authorization: "
            "Bearer <token>` (the token `lemmata serve` printed, or LEMMATA_API_TOKEN), unless "
            "the server runs with --no-token; a request for another Host name or from a page "
            "of another site (Origin, Sec-Fetch-Site) is 403; a JSON body needs "
            "`Content-Type: application/json` (415).",
        },
        "components": {
            "schemas": {"Error": _object(error=TEXT), "RunSummary": RUN_SUMMARY},
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}, {}],
        "paths": PATHS,
    }
