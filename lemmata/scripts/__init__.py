"""The workflow's job bodies: each module's `run(job)` is what its rule does, a thin adapter from
the rule's files to a stage function. Snakemake calls them in its own process (rules/common.smk,
`run_script`), so a job costs no interpreter start and no imports once the first has paid them."""
