"""Every path of a run folder, in one place: the workflow's rules, the stages, the driver, the
rewrite, the server and `lemmata status` all take their file names from here.

Paths are relative to the run directory (Snakemake's working directory). A function of a paper
version also takes a wildcard: `theory_of("{n}")` is the rule pattern, `theory_of(3)` a file.

    run.json  config.yaml  input.json  briefing.json          the task, its settings, the briefing
    survey/first.json  survey.json  references.bib            literature
    directions/ideas.json  directions.json                     research direction
    theory/formal.json  theory/plan.json  theory/lemmas/<id>.json  theory.json
    theory/lemma_graph.svg                                     the lemmas as a picture (pictures/lemma_graph.py)
    experiment.json  figures/  learned.json                    numerical checks, memories
    paper_v<n>.tex .json .pdf .compile.json  research_output.json
    gates/<gate>.json                                          the researcher's decisions
    revisions/v<n>.json  versions/v<n>/  rewrite_context_v<n>.json   rewrites (n >= 2)
    llm_calls.jsonl  paper_qa_history.jsonl  logs/             records
    forecasts.jsonl                                            each stage's forecast (run/spending/forecast.py)
"""

from __future__ import annotations

import re

Version = int | str  # a paper version, or the wildcard "{n}" in a rule

# The task: the run's record, its frozen settings, and what the researcher asked.
RUN_RECORD = "run.json"
CONFIG = "config.yaml"
INPUT = "input.json"
BRIEFING = "briefing.json"
LOCK = ".lemmata.lock"

# Survey and direction.
SURVEY_FIRST = "survey/first.json"
SURVEY = "survey.json"
REFERENCES = "references.bib"
IDEAS = "directions/ideas.json"
DIRECTIONS = "directions.json"

# Theory: the formal statement, the lemma plan (a checkpoint), one file per lemma, the assembly.
FORMAL = "theory/formal.json"
FORMALIZER_CACHE = "theory/.formalizer"  # the formalizer's answers, by goal
PLAN = "theory/plan.json"
THEORY = "theory.json"
LEMMA_GRAPH = "theory/lemma_graph.svg"  # the assembled theory's lemmas as a picture
FORMAL_DEVELOPMENT = "theory/formal.v"  # every statement Coq's kernel proved, with its proof

# Experiment, memories, the research output.
EXPERIMENT = "experiment.json"
FIGURES = "figures"
LEARNED = "learned.json"
RESEARCH_OUTPUT = "research_output.json"

# Records kept beside the artifacts.
LLM_CALLS = "llm_calls.jsonl"
FORECASTS = "forecasts.jsonl"  # what each stage was expected to use, written before its first job
QA_HISTORY = "paper_qa_history.jsonl"
LOGS = "logs"
EVENTS = f"{LOGS}/events.jsonl"
LAST_FAILURE = f"{LOGS}/last_failure.txt"
SNAKEMAKE_LOG = f"{LOGS}/snakemake.log"
INTERRUPTED_CALLS = f"{LOGS}/interrupted_calls.jsonl"  # answers a killed workflow got (llm/interrupted_calls.py)
INVOCATION_CALLS_START = f"{LOGS}/invocation_calls_start"  # where the running invocation's calls begin in LLM_CALLS
MODEL_SERVER_LOG = f"{LOGS}/model_server.log"  # the run's shared embedded model (run/model_service.py)
SERVER_DRIVES_LOG = f"{LOGS}/server_drives.log"
GATES = "gates"
REVISIONS = "revisions"
VERSIONS = "versions"


def lemma(lemma_id: str) -> str:
    """A proved lemma's file; `lemma("{lemma}")` is the pattern of its rule."""
    return f"theory/lemmas/{lemma_id}.json"


def gate(name: str) -> str:
    """The sentinel of a gate (and of the theory review's rework request)."""
    return f"{GATES}/{name}.json"


def rule_log(rule: str) -> str:
    return f"{LOGS}/{rule}.log"


def paper_tex(version: Version) -> str:
    return f"paper_v{version}.tex"


def paper_pdf(version: Version) -> str:
    return f"paper_v{version}.pdf"


def paper_meta(version: Version) -> str:
    """What the writer says of its paper (sections, marks); beside the .tex."""
    return f"paper_v{version}.json"


def compile_report(version: Version) -> str:
    return f"paper_v{version}.compile.json"


def rewrite_context(version: Version) -> str:
    return f"rewrite_context_v{version}.json"


def revision(version: Version) -> str:
    """The researcher's request for paper version `version` (2, 3, ...)."""
    return f"{REVISIONS}/v{version}.json"


def version_dir(version: Version) -> str:
    return f"{VERSIONS}/v{version}"


_PAPER_TEX = re.compile(r"paper_v([1-9][0-9]*)\.tex")
_REVISION = re.compile(r"v([1-9][0-9]*)\.json")


def version_of_paper(name: str) -> int | None:
    """n for a file named `paper_v<n>.tex`, else None."""
    match = _PAPER_TEX.fullmatch(name)
    return int(match.group(1)) if match else None


def version_of_revision(name: str) -> int | None:
    """n for a request named `v<n>.json` in revisions/, else None (a set-aside `v<n>.failed-...`)."""
    match = _REVISION.fullmatch(name)
    return int(match.group(1)) if match else None


def theory_of(version: Version) -> str:
    """The theory paper version `version` stands on: the first run's, or its rewrite's."""
    return THEORY if version == 1 else f"{version_dir(version)}/{THEORY}"


def lemma_graph_of(version: Version) -> str:
    """The picture of the lemmas of the theory paper version `version` stands on."""
    return LEMMA_GRAPH if version == 1 else f"{version_dir(version)}/lemma_graph.svg"


def formal_development_of(version: Version) -> str:
    """The Coq file of the statements proved in the kernel, of the theory version `version` stands on."""
    return FORMAL_DEVELOPMENT if version == 1 else f"{version_dir(version)}/formal.v"


def experiment_of(version: Version) -> str:
    return EXPERIMENT if version == 1 else f"{version_dir(version)}/{EXPERIMENT}"


def figures_of(version: Version) -> str:
    """Where a version's plots are (its paper names them figures/<file>)."""
    return FIGURES if version == 1 else f"{version_dir(version)}/{FIGURES}"


def previous_theory_of(version: int) -> str:
    """The theory the rewrite of `version` starts from: that of the version before."""
    return theory_of(version - 1)
