# Human gates: each output is a decision sentinel. A gate rule runs only while its sentinel is
# missing; it fails on purpose with "GATE CLOSED", the driver asks the researcher, writes the
# sentinel and runs the workflow again. A conditional gate (survey papers, direction) writes
# its own sentinel, decided "automatic", when its condition does not hold.
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
