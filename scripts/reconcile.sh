#!/bin/sh
# Settle runs whose jobs have all finished (workers also do this on start and every minute).
# Usage: scripts/reconcile.sh [--json]
set -eu
cd "$(dirname "$0")/.."
exec "${SMUVES:-.venv/bin/smuves}" admin reconcile "$@"
