#!/usr/bin/env bash
# The dashboard's browser tests drive Debian's chromium through Playwright (Playwright's own
# browser download is not used). Idempotent: nothing happens when chromium is installed;
# run as root, it is installed with apt; otherwise it says what to run and fails.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
    echo "chromium found: $(command -v chromium)"
    exit 0
fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing chromium with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq chromium >/dev/null
    echo "chromium installed: $(command -v chromium)"
    exit 0
fi
echo "chromium is not installed and this is not root: run 'sudo apt-get install chromium'," \
     "or point SMUVES_CHROMIUM at a Chromium binary" >&2
exit 1
