#!/bin/sh
# Requeue every failed job (newest first per portal and type).
# Usage: scripts/retry_failed.sh [--portal ID] [--run ID] [--json]
set -eu
cd "$(dirname "$0")/.."
exec "${SMUVES:-.venv/bin/smuves}" admin retry-failed "$@"
