# After the experiment: what the run learned becomes memories of its domain
# ($LEMMATA_HOME/memory/domains/<domain>/), which later runs' briefings read (stages/learning.py).
rule learn:
    input:
        task=layout.INPUT,
        theory=layout.THEORY,
        review=layout.gate("theory_review"),
        experiment=layout.EXPERIMENT,
        rework=theory_rework,
    output:
        layout.LEARNED,
    log:
        layout.rule_log("learn"),
    run:
        run_script("learn", rule, input, output, params, wildcards, log)
