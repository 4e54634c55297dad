#!/bin/sh
# Put one failed or stopped job back to pending, attempts reset; exit 2 if refused.
# Usage: scripts/requeue.sh JOB_ID [--from-start]
set -eu
cd "$(dirname "$0")/.."
exec "${SMUVES:-.venv/bin/smuves}" admin requeue "$@"
