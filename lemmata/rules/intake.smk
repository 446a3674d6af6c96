rule intake:
    output:
        "input.json",
    log:
        "logs/intake.log",
    script:
        "../scripts/intake.py"


# Skills, the domain plugin's guidance and memories of earlier runs in the domain, chosen once
# for the whole run (stages/briefing.py); every model call of the run reads it.
rule briefing:
    input:
        task="input.json",
    output:
        "briefing.json",
    log:
        "logs/briefing.log",
    script:
        "../scripts/briefing.py"
