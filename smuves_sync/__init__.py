"""smuves-sync: a HubSpot CMS content sync whose job queue lives in Postgres."""

__version__ = "0.1.0"
