# Human gates: each output is a decision sentinel. A gate rule runs only while its sentinel is
# missing; it fails on purpose with "GATE CLOSED", the driver asks the researcher, writes the
# sentinel and runs the workflow again. A conditional gate (survey papers, direction, and the
# stage reviews outside GATE_MODE human) writes its own sentinel, decided "automatic", when its
# condition does not hold.
rule theory_review_gate:
    input:
        theory=layout.THEORY,
    output:
        layout.gate("theory_review"),
    log:
        layout.rule_log("theory_review_gate"),
    run:
        run_script("theory_review_gate", rule, input, output, params, wildcards, log)


rule survey_papers_gate:
    input:
        survey=layout.SURVEY_FIRST,
    output:
        layout.gate("survey_papers"),
    log:
        layout.rule_log("survey_papers_gate"),
    run:
        run_script("survey_papers_gate", rule, input, output, params, wildcards, log)


rule direction_gate:
    input:
        ideas=layout.IDEAS,
    output:
        layout.gate("direction"),
    log:
        layout.rule_log("direction_gate"),
    run:
        run_script("direction_gate", rule, input, output, params, wildcards, log)


rule survey_review_gate:
    input:
        survey=layout.SURVEY,
    output:
        layout.gate("survey_review"),
    log:
        layout.rule_log("survey_review_gate"),
    run:
        run_script("review_gate", rule, input, output, params, wildcards, log)


rule direction_review_gate:
    input:
        directions=layout.DIRECTIONS,
    output:
        layout.gate("direction_review"),
    log:
        layout.rule_log("direction_review_gate"),
    run:
        run_script("review_gate", rule, input, output, params, wildcards, log)


rule experiment_review_gate:
    input:
        experiment=layout.EXPERIMENT,
        theory=layout.THEORY,
    output:
        layout.gate("experiment_review"),
    log:
        layout.rule_log("experiment_review_gate"),
    run:
        run_script("review_gate", rule, input, output, params, wildcards, log)
