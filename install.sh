#!/usr/bin/env bash
# Set up hallubench on a fresh Debian machine with Python 3.11: FFmpeg and Chromium (browser tests) from apt, the package with
# exact tested versions from constraints.txt (torch from the local wheel store), and the metrics in evaluate's module cache
# so that evaluate.load("<name>") works by bare name offline (any first use of hallubench does that too). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v ffmpeg >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq ffmpeg >/dev/null
fi

# Headless Chromium and its driver for the viewer's browser tests (tests/test_view_browser.py), like FFmpeg from apt.
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium chromium-driver >/dev/null
fi

# decord (the reader before PyAV) only where it has wheels: the test that compares the two needs it.
extras="test"
if [ "$(uname -m)" = x86_64 ]; then extras="test,decord"; fi
python3 -m pip install --quiet --progress-bar off -c constraints.txt -e ".[$extras]"
# pyenv puts console scripts on PATH through shims, made by a rehash.
if command -v pyenv >/dev/null 2>&1; then pyenv rehash; fi
python3 -m hallubench metrics install
