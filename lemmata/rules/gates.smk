# A human gate: its output is the decision sentinel. The rule runs only while the sentinel
# is missing, and then fails on purpose with "GATE CLOSED"; the driver asks the researcher,
# writes the sentinel and runs the workflow again.
rule theory_review_gate:
    input:
        theory="theory.json",
    output:
        "gates/theory_review.json",
    log:
        "logs/theory_review_gate.log",
    script:
        "../scripts/gate_closed.py"
