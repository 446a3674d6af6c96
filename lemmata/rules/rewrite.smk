# Rewrites: version n (2, 3, ...) of the paper, asked for by revisions/v{n}.json. Theory, then
# experiment, then writer and compile, each with the revision instructions as feedback. What
# earlier versions and the first run made is read as ancient(): a rewrite never reruns it, and no
# code or parameter change regenerates an earlier version (they are never targets again).
wildcard_constraints:
    n="[2-9]|[1-9][0-9]+",


rule rewrite_theory:
    input:
        revision=layout.revision("{n}"),
        theory=previous_theory,
        survey=ancient(layout.SURVEY),
        formal=ancient(layout.FORMAL),
    output:
        layout.theory_of("{n}"),
    log:
        layout.rule_log("rewrite_theory_v{n}"),
    run:
        run_script("rewrite_theory", rule, input, output, params, wildcards, log)


rule rewrite_experiment:
    input:
        revision=layout.revision("{n}"),
        theory=layout.theory_of("{n}"),
    output:
        experiment=layout.experiment_of("{n}"),
        figures=directory(layout.figures_of("{n}")),
    log:
        layout.rule_log("rewrite_experiment_v{n}"),
    run:
        run_script("experiment", rule, input, output, params, wildcards, log)


rule rewrite_writer:
    input:
        revision=layout.revision("{n}"),
        task=ancient(layout.INPUT),
        survey=ancient(layout.SURVEY),
        directions=ancient(layout.DIRECTIONS),
        theory=layout.theory_of("{n}"),
        experiment=layout.experiment_of("{n}"),
    output:
        tex=layout.paper_tex("{n}"),
        meta=layout.paper_meta("{n}"),
    log:
        layout.rule_log("rewrite_writer_v{n}"),
    run:
        run_script("writer", rule, input, output, params, wildcards, log)


rule rewrite_compile:
    input:
        tex=layout.paper_tex("{n}"),
        theory=layout.theory_of("{n}"),  # the record the PDF is audited against
        bib=ancient(layout.REFERENCES),  # the survey is not redone: the same bibliography
        figures=layout.figures_of("{n}"),
    output:
        pdf=layout.paper_pdf("{n}"),
        report=layout.compile_report("{n}"),
    log:
        layout.rule_log("rewrite_compile_v{n}"),
    run:
        run_script("compile", rule, input, output, params, wildcards, log)


rule rewrite_context:
    input:
        revision=layout.revision("{n}"),
        pdf=layout.paper_pdf("{n}"),
    output:
        layout.rewrite_context("{n}"),
    log:
        layout.rule_log("rewrite_context_v{n}"),
    run:
        run_script("rewrite_context", rule, input, output, params, wildcards, log)
