# Input functions for the lemma fan-out: the plan is a checkpoint, one job per lemma.
import hashlib
import json


localrules: all, intake, theory_review_gate


def planned_lemma_ids():
    plan_path = checkpoints.theory_plan.get().output[0]
    with open(plan_path, encoding="utf-8") as handle:
        return [lemma["id"] for lemma in json.load(handle)["lemmas"]]


def proved_lemma_files(wildcards):
    return expand("theory/lemmas/{lemma}.json", lemma=planned_lemma_ids())


def lemma_fingerprint(wildcards):
    # The plan is an ancient() input; this param reruns a lemma's job only when that lemma changed.
    plan_path = checkpoints.theory_plan.get().output[0]
    with open(plan_path, encoding="utf-8") as handle:
        plan = json.load(handle)
    lemma = next(l for l in plan["lemmas"] if l["id"] == wildcards.lemma)
    return hashlib.sha256(json.dumps([plan["goal"], lemma], sort_keys=True).encode()).hexdigest()
