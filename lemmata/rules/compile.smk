rule compile:
    input:
        tex=layout.paper_tex(1),
        theory=layout.THEORY,  # the record the PDF is audited against
        bib=layout.REFERENCES,
        figures=layout.FIGURES,  # the experiment's plots, copied into the build directory
    output:
        pdf=layout.paper_pdf(1),
        report=layout.compile_report(1),
    log:
        layout.rule_log("compile"),
    run:
        run_script("compile", rule, input, output, params, wildcards, log)


rule research_output:
    input:
        survey=layout.SURVEY,
        theory=layout.THEORY,
        meta=layout.paper_meta(1),
        report=layout.compile_report(1),
    output:
        layout.RESEARCH_OUTPUT,
    log:
        layout.rule_log("research_output"),
    run:
        run_script("research_output", rule, input, output, params, wildcards, log)
