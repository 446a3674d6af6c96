rule directions:
    input:
        task="input.json",
        survey="survey.json",
    output:
        "directions.json",
    log:
        "logs/directions.log",
    script:
        "../scripts/directions.py"
