#!/usr/bin/env bash
# Prints repromin's version, as Cargo.toml's [package] section gives it.
#
#   dist/version.sh [CARGO_TOML]
#
# CARGO_TOML defaults to the Cargo.toml beside this directory. Used by dist/package.sh, the
# release workflow (which checks the tag against it) and the action's installer (which
# installs its own version's binary by default). Portable to the bash and awk of macOS.
set -euo pipefail

manifest=${1:-"$(cd "$(dirname "$0")/.." && pwd)/Cargo.toml"}
version=$(awk -F'"' '
  /^\[/ { in_package = ($0 == "[package]") }
  in_package && /^version *= *"/ { print $2; exit }
' "$manifest")
# Semantic versions only: the version names files and URLs.
if ! [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "dist/version.sh: no valid [package] version in $manifest (found '$version')" >&2
  exit 1
fi
printf '%s\n' "$version"
