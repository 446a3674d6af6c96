rule intake:
    output:
        layout.INPUT,
    log:
        layout.rule_log("intake"),
    run:
        run_script("intake", rule, input, output, params, wildcards, log)


# Skills, the domain plugin's guidance and memories of earlier runs in the domain, chosen once
# for the whole run (stages/survey/briefing.py); every model call of the run reads it.
rule briefing:
    input:
        task=layout.INPUT,
    output:
        layout.BRIEFING,
    log:
        layout.rule_log("briefing"),
    run:
        run_script("briefing", rule, input, output, params, wildcards, log)
