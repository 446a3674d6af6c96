rule compile:
    input:
        tex="paper_v1.tex",
        bib="references.bib",
    output:
        pdf="paper_v1.pdf",
        report="paper_v1.compile.json",
    log:
        "logs/compile.log",
    script:
        "../scripts/compile.py"
