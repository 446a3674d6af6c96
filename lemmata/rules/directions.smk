# Divergent (ideation) then convergent (directions). An ideation that proposes nothing or
# fails closes the direction gate: the researcher types a direction, which the planner uses.
rule ideation:
    input:
        task=layout.INPUT,
        survey=layout.SURVEY,
        review=layout.gate("survey_review"),
    output:
        layout.IDEAS,
    log:
        layout.rule_log("ideation"),
    run:
        run_script("ideation", rule, input, output, params, wildcards, log)


rule directions:
    input:
        task=layout.INPUT,
        survey=layout.SURVEY,
        ideas=layout.IDEAS,
        direction=layout.gate("direction"),
    output:
        layout.DIRECTIONS,
    log:
        layout.rule_log("directions"),
    run:
        run_script("directions", rule, input, output, params, wildcards, log)
