import hashlib
import json
from pathlib import Path


# Every rule's job body is `run(job)` of a module in lemmata/scripts/, called from the rule's
# `run:` block. The driver runs Snakemake with --force-use-threads, so those blocks run on
# Snakemake's worker threads: a job costs no Python start and no imports once the first job has
# paid them (a `script:` job cost 0.15-0.6 s before its first line). Without that option (a
# hand-run `snakemake`), Snakemake runs each block in a Snakemake process of its own: slower, the same.
def run_script(name, rule, input, output, params, wildcards, log):
    from lemmata.run.job import RuleJob, run_script as run_job_script

    run_job_script(name, RuleJob(rule, input, output, params, wildcards, log, config))


# Input functions for the lemma fan-out: the plan is a checkpoint, one job per lemma.
def lemma_plan():
    with open(checkpoints.theory_plan.get().output[0], encoding="utf-8") as handle:
        return json.load(handle)


def proved_lemma_files(wildcards):
    return expand(layout.lemma("{lemma}"), lemma=[lemma["id"] for lemma in lemma_plan()["lemmas"]])


def lemma_dependency_files(wildcards):
    # A lemma's job waits for the lemmas it builds on, and only for those: independent lemmas
    # run in parallel, and a re-proved lemma re-runs what depends on it (its input is newer).
    lemma = next(l for l in lemma_plan()["lemmas"] if l["id"] == wildcards.lemma)
    return expand(layout.lemma("{lemma}"), lemma=lemma["depends_on"])


def lemma_fingerprint(wildcards):
    # The plan is an ancient() input; this param reruns a lemma's job only when that lemma changed,
    # or when the reviewer's objection (theory review `n`) is about it.
    plan = lemma_plan()
    lemma = next(l for l in plan["lemmas"] if l["id"] == wildcards.lemma)
    rework = plan.get("rework")
    objection = rework if rework and rework["step"] in (lemma["id"], *missing_ids(plan, rework["step"])) else None
    # The lemma's formal statement counts, not what sampling found (its instance count varies with
    # the machine's load): a plan job that ran again changes no lemma whose statements stayed.
    stated = {key: value for key, value in lemma.items() if key != "formal"}
    spec = (lemma.get("formal") or {}).get("spec")
    return hashlib.sha256(json.dumps([plan["goal"], stated, objection, *([spec] if spec else [])], sort_keys=True).encode()).hexdigest()


def missing_ids(plan, step):
    # An objection naming no lemma of the plan is about all of them.
    return [step] if step not in {l["id"] for l in plan["lemmas"]} else []


def theory_rework(wildcards):
    # Present only after the reviewer said `n`: its appearance reruns the plan with the objection.
    return [layout.gate("theory_rework")] if Path(layout.gate("theory_rework")).exists() else []


def previous_theory(wildcards):
    # Version n starts from version n-1's theory, which is never made again (ancient).
    return ancient(layout.previous_theory_of(int(wildcards.n)))


def briefing_file(wildcards):
    # The first model call waits for the briefing. A run made before briefings existed (its
    # survey done without one) keeps its stages: a new input would rerun them all.
    if Path(layout.SURVEY_FIRST).exists() and not Path(layout.BRIEFING).exists():
        return []
    return [layout.BRIEFING]
