"""The theory review: fail on purpose, recognisably, for the driver to ask; with nobody to ask
(no terminal, no browser), write the default answer and go on."""

from lemmata.run.gates import ask_or_take_the_default
from lemmata.run.job import StageJob


def run(job: StageJob) -> None:
    with job.reporting():
        ask_or_take_the_default(job.output())
