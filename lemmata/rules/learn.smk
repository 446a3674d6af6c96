# After the experiment: what the run learned becomes memories of its domain
# ($LEMMATA_HOME/memory/domains/<domain>/), which later runs' briefings read (stages/learning.py).
rule learn:
    input:
        task="input.json",
        theory="theory.json",
        review="gates/theory_review.json",
        experiment="experiment.json",
        rework=theory_rework,
    output:
        "learned.json",
    log:
        "logs/learn.log",
    script:
        "../scripts/learn.py"
