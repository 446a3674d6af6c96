rule writer:
    input:
        task="input.json",
        survey="survey.json",
        directions="directions.json",
        theory="theory.json",
        review="gates/theory_review.json",
        experiment="experiment.json",
        experiment_review="gates/experiment_review.json",
    output:
        tex="paper_v1.tex",
        bib="references.bib",
        meta="paper_v1.json",
    log:
        "logs/writer.log",
    script:
        "../scripts/writer.py"
