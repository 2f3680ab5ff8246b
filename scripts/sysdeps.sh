#!/usr/bin/env bash
# Installs the system packages slacheck's tests and demo need, only when they are missing:
# a Java runtime for PySpark, poppler (pdftotext, pdffonts) and a CJK font for Chinese PDFs,
# Pango for weasyprint, and Chromium for the HTML screenshot test.
set -euo pipefail
need=()
command -v java >/dev/null 2>&1 || need+=(default-jre-headless)
command -v pdftotext >/dev/null 2>&1 || need+=(poppler-utils)
command -v fc-list >/dev/null 2>&1 || need+=(fontconfig)
if ! fc-list 2>/dev/null | grep -qi "Noto Sans CJK\|Noto Serif CJK\|WenQuanYi"; then
  need+=(fonts-noto-cjk)
fi
ldconfig -p 2>/dev/null | grep -q libpango-1.0 || need+=(libpango-1.0-0 libpangoft2-1.0-0)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
echo "sysdeps: installing ${need[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "sysdeps: need root to install: ${need[*]}" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
