"""`python -m core.cli`: the same as the `inkwell` command."""

from core.cli import main

main()
