rule compile:
    input:
        tex="paper_v1.tex",
        bib="references.bib",
        figures="figures",  # the experiment's plots, copied into the build directory
    output:
        pdf="paper_v1.pdf",
        report="paper_v1.compile.json",
    log:
        "logs/compile.log",
    script:
        "../scripts/compile.py"


rule research_output:
    input:
        survey="survey.json",
        theory="theory.json",
        meta="paper_v1.json",
        report="paper_v1.compile.json",
    output:
        "research_output.json",
    log:
        "logs/research_output.log",
    script:
        "../scripts/research_output.py"
