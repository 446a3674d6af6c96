rule intake:
    output:
        "input.json",
    log:
        "logs/intake.log",
    script:
        "../scripts/intake.py"
