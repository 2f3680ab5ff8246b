#!/usr/bin/env bash
# Installs the system packages slacheck's tests and demo need, only when they are missing:
# a Java runtime for PySpark, poppler (pdftotext, pdffonts) and a CJK font for Chinese PDFs,
# Pango for weasyprint, and Chromium for the HTML screenshot test.
#
# Idempotent: with everything present it installs nothing and runs no apt-get. Each probe's
# output is captured before it is searched (`fc-list | grep -q` under pipefail killed fc-list
# with SIGPIPE when grep stopped reading early, and the font counted as missing).
# SYSDEPS_DRY_RUN=1 (or --dry-run): say what would be installed, install nothing.
# Without root or sudo it exits 1 naming the packages and the command that installs them.
set -euo pipefail
dry_run=${SYSDEPS_DRY_RUN:-0}
[ "${1:-}" = "--dry-run" ] && dry_run=1

need=()
command -v java >/dev/null 2>&1 || need+=(default-jre-headless)
command -v pdftotext >/dev/null 2>&1 || need+=(poppler-utils)
if command -v fc-list >/dev/null 2>&1; then
  families=$(fc-list :lang=zh family 2>/dev/null || true)
  case $families in
    *"Noto Sans CJK"* | *"Noto Serif CJK"* | *WenQuanYi*) ;;
    *) need+=(fonts-noto-cjk) ;;
  esac
else
  need+=(fontconfig fonts-noto-cjk)
fi
libs=$(ldconfig -p 2>/dev/null || true)
case $libs in
  *libpango-1.0.so*) ;;
  *) need+=(libpango-1.0-0 libpangoft2-1.0-0) ;;
esac
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 ||
  need+=(chromium)

if [ ${#need[@]} -eq 0 ]; then
  echo "sysdeps: nothing to install"
  exit 0
fi
command="apt-get install -y --no-install-recommends ${need[*]}"
if [ "$dry_run" = 1 ]; then
  echo "sysdeps: would install: ${need[*]}"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo"
  else
    echo "sysdeps: missing system packages: ${need[*]}" >&2
    echo "sysdeps: installing them needs root; run: sudo apt-get update && sudo $command" >&2
    exit 1
  fi
fi
echo "sysdeps: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO $command -qq >/dev/null
