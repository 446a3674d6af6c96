rule experiment:
    input:
        theory=layout.THEORY,
        review=layout.gate("theory_review"),
    output:
        experiment=layout.EXPERIMENT,
        figures=directory(layout.FIGURES),
    log:
        layout.rule_log("experiment"),
    run:
        run_script("experiment", rule, input, output, params, wildcards, log)
