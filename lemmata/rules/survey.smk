# The survey agent searches; when it keeps no paper, the survey-papers gate asks the researcher
# for identifiers or titles (rules/gates.smk), and survey_final runs the survey once more with
# them, or keeps the first survey when the answer is empty.
rule survey:
    input:
        task=layout.INPUT,
        briefing=briefing_file,
    output:
        layout.SURVEY_FIRST,
    log:
        layout.rule_log("survey"),
    run:
        run_script("survey", rule, input, output, params, wildcards, log)


rule survey_final:
    input:
        task=layout.INPUT,
        first=layout.SURVEY_FIRST,
        papers=layout.gate("survey_papers"),
    output:
        layout.SURVEY,
    log:
        layout.rule_log("survey_final"),
    run:
        run_script("survey", rule, input, output, params, wildcards, log)
