rule formalize:
    input:
        directions=layout.DIRECTIONS,
        review=layout.gate("direction_review"),
    output:
        layout.FORMAL,
    log:
        layout.rule_log("formalize"),
    script:
        "../scripts/formalize.py"


checkpoint theory_plan:
    input:
        directions=layout.DIRECTIONS,
        formal=layout.FORMAL,
        survey=layout.SURVEY,
        review=layout.gate("direction_review"),
        rework=theory_rework,
    output:
        layout.PLAN,
    log:
        layout.rule_log("theory_plan"),
    script:
        "../scripts/theory_plan.py"


rule prove_lemma:
    input:
        plan=ancient(layout.PLAN),
        dependencies=lemma_dependency_files,
    output:
        layout.lemma("{lemma}"),
    params:
        fingerprint=lemma_fingerprint,
    wildcard_constraints:
        lemma="[A-Za-z][A-Za-z0-9_-]*",
    log:
        layout.rule_log("prove_lemma/{lemma}"),
    script:
        "../scripts/prove_lemma.py"


rule theory_assemble:
    input:
        plan=layout.PLAN,
        lemmas=proved_lemma_files,
    output:
        layout.THEORY,
    log:
        layout.rule_log("theory_assemble"),
    script:
        "../scripts/theory_assemble.py"
