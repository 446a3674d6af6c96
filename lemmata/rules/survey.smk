# The survey agent searches; when it keeps no paper, the survey-papers gate asks the researcher
# for identifiers or titles (rules/gates.smk), and survey_final runs the survey once more with
# them, or keeps the first survey when the answer is empty.
rule survey:
    input:
        task="input.json",
        briefing=briefing_file,
    output:
        "survey/first.json",
    log:
        "logs/survey.log",
    script:
        "../scripts/survey.py"


rule survey_final:
    input:
        task="input.json",
        first="survey/first.json",
        papers="gates/survey_papers.json",
    output:
        "survey.json",
    log:
        "logs/survey_final.log",
    script:
        "../scripts/survey_final.py"
