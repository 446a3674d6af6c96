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
    script:
        "../scripts/ideation.py"


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
    script:
        "../scripts/directions.py"
