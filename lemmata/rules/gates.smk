# Human gates: each output is a decision sentinel. A gate rule runs only while its sentinel is
# missing; it fails on purpose with "GATE CLOSED", the driver asks the researcher, writes the
# sentinel and runs the workflow again. A conditional gate (survey papers, direction, and the
# stage reviews outside GATE_MODE human) writes its own sentinel, decided "automatic", when its
# condition does not hold.
rule theory_review_gate:
    input:
        theory="theory.json",
    output:
        "gates/theory_review.json",
    log:
        "logs/theory_review_gate.log",
    script:
        "../scripts/gate_closed.py"


rule survey_papers_gate:
    input:
        survey="survey/first.json",
    output:
        "gates/survey_papers.json",
    log:
        "logs/survey_papers_gate.log",
    script:
        "../scripts/survey_papers_gate.py"


rule direction_gate:
    input:
        ideas="directions/ideas.json",
    output:
        "gates/direction.json",
    log:
        "logs/direction_gate.log",
    script:
        "../scripts/direction_gate.py"


rule survey_review_gate:
    input:
        survey="survey.json",
    output:
        "gates/survey_review.json",
    log:
        "logs/survey_review_gate.log",
    script:
        "../scripts/review_gate.py"


rule direction_review_gate:
    input:
        directions="directions.json",
    output:
        "gates/direction_review.json",
    log:
        "logs/direction_review_gate.log",
    script:
        "../scripts/review_gate.py"


rule experiment_review_gate:
    input:
        experiment="experiment.json",
        theory="theory.json",
    output:
        "gates/experiment_review.json",
    log:
        "logs/experiment_review_gate.log",
    script:
        "../scripts/review_gate.py"
