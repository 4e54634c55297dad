"""`python -m smuves_sync.fake_hubspot`: the same as scripts/fake_hubspot.py."""

from smuves_sync.fake_hubspot.cli import main

main()
