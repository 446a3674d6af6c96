rule experiment:
    input:
        theory=layout.THEORY,
        review=layout.gate("theory_review"),
    output:
        experiment=layout.EXPERIMENT,
        figures=directory(layout.FIGURES),
    log:
        layout.rule_log("experiment"),
    script:
        "../scripts/experiment.py"
