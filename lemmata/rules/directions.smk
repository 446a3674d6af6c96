# Divergent (ideation) then convergent (directions). An ideation that proposes nothing or
# fails closes the direction gate: the researcher types a direction, which the planner uses.
rule ideation:
    input:
        task="input.json",
        survey="survey.json",
        review="gates/survey_review.json",
    output:
        "directions/ideas.json",
    log:
        "logs/ideation.log",
    script:
        "../scripts/ideation.py"


rule directions:
    input:
        task="input.json",
        survey="survey.json",
        ideas="directions/ideas.json",
        direction="gates/direction.json",
    output:
        "directions.json",
    log:
        "logs/directions.log",
    script:
        "../scripts/directions.py"
