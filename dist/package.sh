#!/usr/bin/env bash
# Packages a built repromin binary as a release asset (docs/ci.md, "Cutting a release").
#
#   dist/package.sh TARGET BINARY OUTDIR
#
# writes OUTDIR/repromin-v{version}-{TARGET}.tar.gz, holding one directory
# repromin-v{version}-{TARGET}/ with the binary (as `repromin`), README.md, every LICENSE*
# file and CHANGELOG.md when the repository has them. The version is Cargo.toml's
# (dist/version.sh); TARGET is the Rust target triple the binary was built for. Prints the
# archive's path on stdout. The names are a contract: the action's installer and
# cargo-binstall look the assets up by them.
#
# Runs on the release workflow's Linux and macOS runners, so it keeps to what both have
# (bash 3.2, GNU or BSD tar, gzip).
set -euo pipefail

if [ $# -ne 3 ]; then
  echo "usage: dist/package.sh TARGET BINARY OUTDIR" >&2
  exit 2
fi
target=$1
binary=$2
outdir=$3
root=$(cd "$(dirname "$0")/.." && pwd)

if ! [[ $target =~ ^[a-z0-9_]+(-[a-z0-9_.]+)+$ ]]; then
  echo "dist/package.sh: '$target' is not a target triple" >&2
  exit 2
fi
if [ ! -f "$binary" ] || [ ! -x "$binary" ]; then
  echo "dist/package.sh: $binary is not an executable file" >&2
  exit 1
fi
version=$("$root/dist/version.sh" "$root/Cargo.toml")
name="repromin-v$version-$target"

mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
stage=$(mktemp -d "${TMPDIR:-/tmp}/repromin-package.XXXXXX")
trap 'rm -rf "$stage"' EXIT

mkdir "$stage/$name"
cp "$binary" "$stage/$name/repromin"
chmod 0755 "$stage/$name/repromin"
files=(README.md)
for file in "$root"/LICENSE* "$root/CHANGELOG.md"; do
  if [ -f "$file" ]; then files+=("${file##*/}"); fi
done
for file in "${files[@]}"; do
  cp "$root/$file" "$stage/$name/$file"
  chmod 0644 "$stage/$name/$file"
done

# Owner and order fixed where the tar allows it (GNU tar); no AppleDouble files on macOS;
# no name or time stamp in the gzip header.
tar_options=()
if tar --version 2>/dev/null | grep -q 'GNU tar'; then
  tar_options=(--owner=0 --group=0 --numeric-owner --sort=name)
fi
archive="$outdir/$name.tar.gz"
# (bash 3.2 under `set -u` refuses "${a[@]}" of an empty array, hence the `+` form.)
COPYFILE_DISABLE=1 tar -cf - ${tar_options[@]+"${tar_options[@]}"} -C "$stage" "$name" | gzip -n > "$archive.partial"
mv -f "$archive.partial" "$archive"
printf '%s\n' "$archive"
