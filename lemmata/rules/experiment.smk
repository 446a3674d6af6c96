rule experiment:
    input:
        theory="theory.json",
        review="gates/theory_review.json",
    output:
        experiment="experiment.json",
        figures=directory("figures"),
    log:
        "logs/experiment.log",
    script:
        "../scripts/experiment.py"
