"""`python -m smuves_sync.testing.fake_hubspot`: the same as scripts/fake_hubspot.py."""

from smuves_sync.testing.fake_hubspot.cli import main

main()
