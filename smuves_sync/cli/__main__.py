"""`python -m smuves_sync.cli …`: the same as the `smuves` command."""

from smuves_sync.cli import main

main()
