rule survey:
    input:
        task="input.json",
    output:
        "survey.json",
    log:
        "logs/survey.log",
    script:
        "../scripts/survey.py"
