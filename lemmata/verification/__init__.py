"""Proof verification: the checks an attempt passes (checks.py) and how far a model's checks are
trusted, as measured on human-labelled proofs (calibration.py). A proof is `verified` only when
the checks accept it and the model that ran them is measured to tell wrong proofs from right."""
