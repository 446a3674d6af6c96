# Rewrites: version n (2, 3, ...) of the paper, asked for by revisions/v{n}.json. Theory, then
# experiment, then writer and compile, each with the revision instructions as feedback. What
# earlier versions and the first run made is read as ancient(): a rewrite never reruns it, and no
# code or parameter change regenerates an earlier version (they are never targets again).
wildcard_constraints:
    n="[2-9]|[1-9][0-9]+",


rule rewrite_theory:
    input:
        revision="revisions/v{n}.json",
        theory=previous_theory,
        survey=ancient("survey.json"),
        formal=ancient("theory/formal.json"),
    output:
        "versions/v{n}/theory.json",
    log:
        "logs/rewrite_theory_v{n}.log",
    script:
        "../scripts/rewrite_theory.py"


rule rewrite_experiment:
    input:
        revision="revisions/v{n}.json",
        theory="versions/v{n}/theory.json",
    output:
        experiment="versions/v{n}/experiment.json",
        figures=directory("versions/v{n}/figures"),
    log:
        "logs/rewrite_experiment_v{n}.log",
    script:
        "../scripts/rewrite_experiment.py"


rule rewrite_writer:
    input:
        revision="revisions/v{n}.json",
        task=ancient("input.json"),
        survey=ancient("survey.json"),
        directions=ancient("directions.json"),
        theory="versions/v{n}/theory.json",
        experiment="versions/v{n}/experiment.json",
    output:
        tex="paper_v{n}.tex",
        meta="paper_v{n}.json",
    log:
        "logs/rewrite_writer_v{n}.log",
    script:
        "../scripts/rewrite_writer.py"


rule rewrite_compile:
    input:
        tex="paper_v{n}.tex",
        bib=ancient("references.bib"),  # the survey is not redone: the same bibliography
        figures="versions/v{n}/figures",
    output:
        pdf="paper_v{n}.pdf",
        report="paper_v{n}.compile.json",
    log:
        "logs/rewrite_compile_v{n}.log",
    script:
        "../scripts/compile.py"


rule rewrite_context:
    input:
        revision="revisions/v{n}.json",
        pdf="paper_v{n}.pdf",
    output:
        "rewrite_context_v{n}.json",
    log:
        "logs/rewrite_context_v{n}.log",
    script:
        "../scripts/rewrite_context.py"
