#!/usr/bin/env bash
# Builds jq 1.7.1, the jq of the operator's image (Debian 13), from the
# source Debian ships, and prints the path of the binary. The machines that
# build and test the project may run an older Debian whose jq 1.6 spends
# about 15 ms of CPU on every start (1.7 about 2 ms); `make bench` runs hooks
# with this one so that its figures are those of the image.
#
# The source comes from Debian's mirror: the suite's InRelease is checked
# against Debian's archive keyring, Sources.xz against InRelease, the
# upstream tarball against Sources.xz. The build is cached in
# ~/.cache/addon-operator/jq/<version>; a second call only prints the path.
set -euo pipefail

suite=trixie
version=1.7.1
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/addon-operator/jq/$version
bin=$cache/bin/jq

if [[ -x $bin ]]; then
	echo "$bin"
	exit 0
fi
"$(dirname "$0")/../packages/ensure.sh" jq-build

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fetch() { curl -sSfL --retry 3 -m 300 -o "$2" "$1"; }

# The suite's index, signed by Debian's archive keys.
fetch "$mirror/dists/$suite/InRelease" InRelease
keyrings=()
for k in /usr/share/keyrings/debian-archive-"$suite"-{automatic,stable}.gpg /usr/share/keyrings/debian-archive-keyring.gpg; do
	[[ -f $k ]] && keyrings+=(--keyring "$k")
done
gpgv --quiet "${keyrings[@]}" InRelease 2>/dev/null || {
	echo "hack/jq/build.sh: $mirror/dists/$suite/InRelease: signature not valid for Debian's archive keys" >&2
	exit 1
}
want=$(awk '/^SHA256:/{s=1; next} /^[^ ]/{s=0} s && $3 == "main/source/Sources.xz" {print $1}' InRelease)
fetch "$mirror/dists/$suite/main/source/Sources.xz" Sources.xz
echo "$want  Sources.xz" | sha256sum -c --quiet

# The upstream tarball of jq in that suite.
read -r dir sum file < <(xz -dc Sources.xz | awk -v v="$version" '
	/^Package: /{pkg=$2; dir=""; sums=0; next}
	pkg != "jq" {next}
	/^Directory: /{dir=$2}
	/^Checksums-Sha256:/{sums=1; next}
	/^[^ ]/{sums=0}
	sums && $3 == "jq_" v ".orig.tar.gz" {sum=$1; file=$3}
	/^$/ && sum != "" {print dir, sum, file; exit}
	END {if (sum != "" && dir != "") print dir, sum, file}' | head -n 1) || true
if [[ -z ${file:-} ]]; then
	echo "hack/jq/build.sh: no jq_$version.orig.tar.gz in Debian $suite's sources" >&2
	exit 1
fi
fetch "$mirror/$dir/$file" "$file"
echo "$sum  $file" | sha256sum -c --quiet
tar xzf "$file"
cd jq-jq-"$version"

# The tarball has no git history for scripts/version to read.
printf '#!/bin/sh\necho %s\n' "$version" >scripts/version
autoreconf -fi >/dev/null 2>&1
./configure --quiet --disable-docs --disable-maintainer-mode --with-oniguruma=yes --prefix="$cache" >/dev/null
# builtin.inc is generated; make it first, parallel builds race on it.
make -s src/builtin.inc >/dev/null
make -s -j"$(nproc)" jq >/dev/null 2>&1
mkdir -p "$cache/bin"
install -m 0755 jq "$bin.tmp"
mv "$bin.tmp" "$bin"
"$bin" --version >&2
echo "$bin"
