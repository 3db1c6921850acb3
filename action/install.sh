#!/usr/bin/env bash
# The action's install step (action.yml): install repromin's release binary, checked
# against the SHA-256 pinned in this action's own files, or leave it to the source build.
#
# Environment: INPUT_VERSION and INPUT_INSTALL (the action's inputs), RUNNER_OS,
# RUNNER_ARCH, RUNNER_TEMP, GITHUB_ACTION_PATH, GITHUB_OUTPUT; REPROMIN_RELEASE_URL
# replaces the download base https://github.com/repromin/repromin/releases/download (a
# mirror, or a local server in the tests). The checksum never comes from there: it is
# dist/checksums/v{version}.sha256 in the action's own directory, the release's SHA256SUMS
# committed after the release, so an asset replaced on the server is refused.
#
# Outputs: `method` (`binary` or `source`); for a binary `bin`, `version` and `target`;
# for source, `reason`. Everything it says goes to stderr, one line that names what it did
# and, for source, why. It takes seconds: one download of a few megabytes.
#
# Needs bash, sha256sum (or shasum), curl and tar.
set -euo pipefail

say() { printf 'repromin: %s\n' "$*" >&2; }
fail() {
  printf '::error title=repromin install::%s\n' "$*" >&2
  exit 1
}
# The composite's next steps build repromin from the action's source when this says so.
source_build() {
  say "building repromin from the action's own source: $1"
  {
    echo "method=source"
    echo "reason=$1"
  } >> "$GITHUB_OUTPUT"
  exit 0
}

pins="$GITHUB_ACTION_PATH/dist/checksums"
own_version=$("$GITHUB_ACTION_PATH/dist/version.sh" "$GITHUB_ACTION_PATH/Cargo.toml")

# Whether version $1 is newer than version $2 (both MAJOR.MINOR.PATCH).
newer() {
  local IFS=.
  # shellcheck disable=SC2206 # split on dots on purpose
  local a=($1) b=($2) i
  for i in 0 1 2; do
    if [ "${a[i]}" -gt "${b[i]}" ]; then return 0; fi
    if [ "${a[i]}" -lt "${b[i]}" ]; then return 1; fi
  done
  return 1
}

# Neither a binary nor the source build exists elsewhere: say so now rather than after
# minutes of compiling.
if [ "$RUNNER_OS" != Linux ]; then
  fail "repromin runs on Linux runners only (it uses Linux process control: a child subreaper, the parent-death signal, namespaces), not on $RUNNER_OS; use runs-on: ubuntu-latest"
fi

case "$INPUT_INSTALL" in
  binary) ;;
  source) source_build "the install input is source" ;;
  *) fail "the install input must be binary or source, not '$INPUT_INSTALL'" ;;
esac

if [ -n "$INPUT_VERSION" ]; then
  version=${INPUT_VERSION#v}
  if ! [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
    fail "the version input must be a version such as 0.1.0, not '$INPUT_VERSION'"
  fi
  if [ ! -f "$pins/v$version.sha256" ]; then
    source_build "this action pins no checksums for v$version (dist/checksums/v$version.sha256); its source is v$own_version"
  fi
else
  # The newest release pinned here, but only when it is the action's own version: the
  # action's scripts pass the arguments of that version, and an older binary may not take
  # them (a commit between a release and the commit pinning its checksums, or after the
  # version was raised for the next release).
  version=""
  for file in "$pins"/v*.sha256; do
    [ -f "$file" ] || continue
    candidate=${file##*/v}
    candidate=${candidate%.sha256}
    [[ $candidate =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || continue
    if [ -z "$version" ] || newer "$candidate" "$version"; then version=$candidate; fi
  done
  if [ -z "$version" ]; then
    source_build "this action pins no release checksums yet (dist/checksums/)"
  fi
  if [ "$version" != "$own_version" ]; then
    source_build "the newest release pinned here, v$version, is not the action's own version v$own_version"
  fi
fi

case "$RUNNER_OS/$RUNNER_ARCH" in
  Linux/X64) target=x86_64-unknown-linux-musl ;;
  Linux/ARM64) target=aarch64-unknown-linux-musl ;;
  *) source_build "no release binary is built for $RUNNER_OS/$RUNNER_ARCH" ;;
esac

asset="repromin-v$version-$target.tar.gz"
# sha256sum's format: `HASH  NAME`, or `HASH *NAME` (binary mode).
expected=$(awk -v name="$asset" '$2 == name || $2 == "*" name { print $1; exit }' "$pins/v$version.sha256")
if [ -z "$expected" ]; then
  source_build "v$version has no pinned checksum for $target (dist/checksums/v$version.sha256)"
fi
if ! [[ $expected =~ ^[0-9a-f]{64}$ ]]; then
  fail "dist/checksums/v$version.sha256 has no valid SHA-256 for $asset"
fi

# A directory of its own under RUNNER_TEMP, made now: nothing that ran earlier in the job
# can have left a binary where this one goes. Removed whole unless the install succeeds.
work=$(mktemp -d "$RUNNER_TEMP/repromin-install.XXXXXX")
trap 'rm -rf "$work"' EXIT

url="${REPROMIN_RELEASE_URL:-https://github.com/repromin/repromin/releases/download}/v$version/$asset"
status=0
curl --fail --silent --show-error --location --proto-redir '=https' --retry 3 \
  --connect-timeout 10 --max-time 300 --output "$work/$asset" "$url" || status=$?
if [ "$status" -ne 0 ]; then
  fail "cannot download $url (curl exit $status); the input install: source builds repromin from the action's source instead"
fi

if command -v sha256sum >/dev/null 2>&1; then
  actual=$(sha256sum "$work/$asset" | cut -d' ' -f1)
else
  actual=$(shasum -a 256 "$work/$asset" | cut -d' ' -f1)
fi
if [ "$actual" != "$expected" ]; then
  fail "SHA-256 mismatch for $asset from $url: expected $expected (dist/checksums/v$version.sha256), got $actual. This is not the released file; it was not installed"
fi

member="repromin-v$version-$target/repromin"
mkdir "$work/unpacked" "$work/bin"
tar -xzf "$work/$asset" -C "$work/unpacked" "$member" ||
  fail "$asset has no $member"
if [ -L "$work/unpacked/$member" ] || [ ! -f "$work/unpacked/$member" ]; then
  fail "$member in $asset is not a regular file"
fi
mv "$work/unpacked/$member" "$work/bin/repromin"
chmod 0755 "$work/bin/repromin"
rm -rf "$work/unpacked" "${work:?}/$asset"

said=$("$work/bin/repromin" --version) || fail "the installed binary does not run: $work/bin/repromin --version"
if [ "$said" != "repromin $version" ]; then
  fail "the binary in $asset says '$said', not 'repromin $version'"
fi
trap - EXIT
say "installed the release binary v$version for $target ($asset, SHA-256 $actual as pinned in dist/checksums/v$version.sha256)"
{
  echo "method=binary"
  echo "bin=$work/bin/repromin"
  echo "version=$version"
  echo "target=$target"
} >> "$GITHUB_OUTPUT"
