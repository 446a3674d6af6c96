rule formalize:
    input:
        directions="directions.json",
        review="gates/direction_review.json",
    output:
        "theory/formal.json",
    log:
        "logs/formalize.log",
    script:
        "../scripts/formalize.py"


checkpoint theory_plan:
    input:
        directions="directions.json",
        formal="theory/formal.json",
        survey="survey.json",
        review="gates/direction_review.json",
        rework=theory_rework,
    output:
        "theory/plan.json",
    log:
        "logs/theory_plan.log",
    script:
        "../scripts/theory_plan.py"


rule prove_lemma:
    input:
        plan=ancient("theory/plan.json"),
        dependencies=lemma_dependency_files,
    output:
        "theory/lemmas/{lemma}.json",
    params:
        fingerprint=lemma_fingerprint,
    wildcard_constraints:
        lemma="[A-Za-z][A-Za-z0-9_-]*",
    log:
        "logs/prove_lemma/{lemma}.log",
    script:
        "../scripts/prove_lemma.py"


rule theory_assemble:
    input:
        plan="theory/plan.json",
        lemmas=proved_lemma_files,
    output:
        "theory.json",
    log:
        "logs/theory_assemble.log",
    script:
        "../scripts/theory_assemble.py"
