"""The experiment stage: numerical tests of the lemmas not verified, run in the sandbox, and their plots."""
