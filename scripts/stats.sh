#!/bin/sh
# Queue depth by kind and status, the oldest due job's wait, running jobs past their lease.
# Usage: scripts/stats.sh [--json]
set -eu
cd "$(dirname "$0")/.."
exec "${SMUVES:-.venv/bin/smuves}" stats "$@"
