#!/usr/bin/env bash
# Writes DIR/SHA256SUMS over every release asset in DIR, then checks it.
#
#   dist/checksums.sh DIR
#
# The format is sha256sum's (`HASH  NAME`, one line per file, sorted by name), so
# `sha256sum -c SHA256SUMS` in DIR verifies a download. The release workflow runs this on
# the packaged archives before attesting and publishing them; after the release the same
# file is committed as dist/checksums/v{version}.sha256, where the action reads the
# checksum of the binary it installs.
set -euo pipefail
shopt -s nullglob
export LC_ALL=C

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
  echo "usage: dist/checksums.sh DIR" >&2
  exit 2
fi
cd "$1"
assets=()
for file in *; do
  [ "$file" = SHA256SUMS ] && continue
  if [ -L "$file" ] || [ ! -f "$file" ]; then
    echo "dist/checksums.sh: $1/$file is not a regular file" >&2
    exit 1
  fi
  assets+=("$file")
done
if [ ${#assets[@]} -eq 0 ]; then
  echo "dist/checksums.sh: no assets in $1" >&2
  exit 1
fi
sha256sum -- "${assets[@]}" > SHA256SUMS.partial
mv -f SHA256SUMS.partial SHA256SUMS
sha256sum --quiet -c SHA256SUMS
cat SHA256SUMS
