#!/bin/sh
# Delete settled runs (with jobs, exports, notifications) and notifications older than AGE.
# Usage: scripts/prune.sh [AGE (default 30d)] [--dry-run] [--json]
set -eu
cd "$(dirname "$0")/.."
age=30d
case "${1:-}" in
    "" | -*) ;;
    *) age="$1"; shift ;;
esac
exec "${SMUVES:-.venv/bin/smuves}" admin prune --older-than "$age" "$@"
