rule writer:
    input:
        task=layout.INPUT,
        survey=layout.SURVEY,
        directions=layout.DIRECTIONS,
        theory=layout.THEORY,
        review=layout.gate("theory_review"),
        experiment=layout.EXPERIMENT,
        experiment_review=layout.gate("experiment_review"),
    output:
        tex=layout.paper_tex(1),
        bib=layout.REFERENCES,
        meta=layout.paper_meta(1),
    log:
        layout.rule_log("writer"),
    run:
        run_script("writer", rule, input, output, params, wildcards, log)
