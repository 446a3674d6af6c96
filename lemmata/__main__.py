"""`python -m lemmata` is the `lemmata` command."""

from lemmata.cli.main import main

main()
