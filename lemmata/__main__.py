"""`python -m lemmata` is the `lemmata` command."""

from lemmata.cli.entry import main

main()
