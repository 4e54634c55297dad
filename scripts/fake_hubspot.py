#!/usr/bin/env python3
"""Serve a fake HubSpot CMS API on 127.0.0.1; prints its base URL, runs until SIGTERM.

    scripts/fake_hubspot.py --portal 1001:demo-token:20000,0,10000,5,2000 --latency-ms 50 \
        --ten-second-limit 100

See --help for every flag (portals, limits, latency, faults).
"""

from smuves_sync.testing.fake_hubspot.cli import main

if __name__ == "__main__":
    main()
