rule experiment:
    input:
        theory="theory.json",
        review="gates/theory_review.json",
    output:
        "experiment.json",
    log:
        "logs/experiment.log",
    script:
        "../scripts/experiment.py"
