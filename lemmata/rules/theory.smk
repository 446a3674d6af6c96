rule formalize:
    input:
        directions=layout.DIRECTIONS,
        review=layout.gate("direction_review"),
    output:
        layout.FORMAL,
    log:
        layout.rule_log("formalize"),
    run:
        run_script("formalize", rule, input, output, params, wildcards, log)


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
    run:
        run_script("theory_plan", rule, input, output, params, wildcards, log)


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
    run:
        run_script("prove_lemma", rule, input, output, params, wildcards, log)


rule theory_assemble:
    input:
        plan=layout.PLAN,
        lemmas=proved_lemma_files,
    output:
        layout.THEORY,
    log:
        layout.rule_log("theory_assemble"),
    run:
        run_script("theory_assemble", rule, input, output, params, wildcards, log)
