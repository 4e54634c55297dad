"""HTTP API for the frontend."""
