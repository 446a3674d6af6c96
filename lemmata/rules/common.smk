# Input functions for the lemma fan-out: the plan is a checkpoint, one job per lemma.
import hashlib
import json


localrules: all, intake, theory_review_gate, survey_papers_gate, direction_gate, research_output


def lemma_plan():
    with open(checkpoints.theory_plan.get().output[0], encoding="utf-8") as handle:
        return json.load(handle)


def proved_lemma_files(wildcards):
    return expand("theory/lemmas/{lemma}.json", lemma=[lemma["id"] for lemma in lemma_plan()["lemmas"]])


def lemma_dependency_files(wildcards):
    # A lemma's job waits for the lemmas it builds on, and only for those: independent lemmas
    # run in parallel, and a re-proved lemma re-runs what depends on it (its input is newer).
    lemma = next(l for l in lemma_plan()["lemmas"] if l["id"] == wildcards.lemma)
    return expand("theory/lemmas/{lemma}.json", lemma=lemma["depends_on"])


def lemma_fingerprint(wildcards):
    # The plan is an ancient() input; this param reruns a lemma's job only when that lemma changed.
    plan = lemma_plan()
    lemma = next(l for l in plan["lemmas"] if l["id"] == wildcards.lemma)
    return hashlib.sha256(json.dumps([plan["goal"], lemma], sort_keys=True).encode()).hexdigest()
