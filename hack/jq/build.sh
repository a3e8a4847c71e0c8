#!/usr/bin/env bash
# Builds the jq of the operator's image (Debian 13's jq 1.7.1) from the
# source Debian ships it from, and prints the path of the binary. The
# machines that build and test the project may run an older Debian whose
# jq 1.6 spends about 15 ms of CPU on every start (1.7 about 1.5 ms);
# `make bench` runs hooks with this one so that its figures are those of
# the image.
#
# The same source as the image's package: the upstream tarball with the
# patches of Debian's newest revision in trixie or trixie-security (the
# security fixes among them), built as Debian builds it, jq linked to its
# own shared libjq and to the system's oniguruma.
#
# Every file is checked: each suite's InRelease against Debian's archive
# keys, its Sources.xz against InRelease, the tarballs against Sources.xz.
# The build is cached in ~/.cache/addon-operator/jq/<version>-debian with
# the Debian revision in DEBIAN_VERSION; a second call only prints the
# path. Remove the directory to build a newer revision.
set -euo pipefail

suite=trixie
version=1.7.1
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
security_mirror=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/addon-operator/jq/$version-debian
bin=$cache/bin/jq

if [[ -x $bin ]]; then
	echo "$bin"
	exit 0
fi
"$(dirname "$0")/../packages/ensure.sh" jq-build

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() {
	echo "hack/jq/build.sh: $*" >&2
	exit 1
}
fetch() { curl -sSfL --retry 3 -m 300 -o "$2" "$1" || fail "download $1 failed"; }

keyrings=()
for k in /usr/share/keyrings/debian-archive-"$suite"-{automatic,security-automatic,stable}.gpg /usr/share/keyrings/debian-archive-keyring.gpg; do
	[[ -f $k ]] && keyrings+=(--keyring "$k")
done

# sources BASE DIST: DIST's source index, checked, as DIST.Sources.
sources() {
	local base=$1 dist=$2 want
	fetch "$base/dists/$dist/InRelease" "$dist.InRelease"
	gpgv --quiet "${keyrings[@]}" "$dist.InRelease" 2>/dev/null ||
		fail "$base/dists/$dist/InRelease: signature not valid for Debian's archive keys"
	want=$(awk '/^SHA256:/{s=1; next} /^[^ ]/{s=0} s && $3 == "main/source/Sources.xz" {print $1}' "$dist.InRelease")
	[[ -n $want ]] || fail "$base/dists/$dist/InRelease lists no main/source/Sources.xz"
	fetch "$base/dists/$dist/main/source/Sources.xz" "$dist.Sources.xz"
	echo "$want  $dist.Sources.xz" | sha256sum -c --quiet
	xz -dc "$dist.Sources.xz" >"$dist.Sources"
}

# stanza DIST: "revision directory orig-sum orig-file debian-sum debian-file"
# of jq $version in DIST's index, or nothing.
stanza() {
	awk -v v="$version" '
		function out() { if (pkg == "jq" && rev != "" && osum != "" && dsum != "") print rev, dir, osum, ofile, dsum, dfile }
		/^Package: / { out(); pkg=$2; rev=""; dir=""; osum=""; dsum=""; sums=0; next }
		pkg != "jq" { next }
		/^Version: / && index($2, v "-") == 1 { rev=$2 }
		/^Directory: / { dir=$2 }
		/^Checksums-Sha256:/ { sums=1; next }
		/^[^ ]/ { sums=0 }
		sums && $3 == "jq_" v ".orig.tar.gz" { osum=$1; ofile=$3 }
		sums && $3 ~ /\.debian\.tar\.xz$/ { dsum=$1; dfile=$3 }
		END { out() }' "$1.Sources"
}

sources "$mirror" "$suite"
sources "$security_mirror" "$suite-security"
# The newest revision; on a tie the security archive's copy, which is
# where a security revision is published first.
best=
best_base=
for pair in "$suite $mirror" "$suite-security $security_mirror"; do
	read -r dist base <<<"$pair"
	while read -r line; do
		[[ -n $line ]] || continue
		rev=${line%% *}
		if [[ -z $best ]] || dpkg --compare-versions "$rev" ge "${best%% *}"; then
			best=$line
			best_base=$base
		fi
	done < <(stanza "$dist")
done
[[ -n $best ]] || fail "no jq $version with a .debian.tar.xz in Debian $suite's or $suite-security's sources"
read -r rev dir osum ofile dsum dfile <<<"$best"

fetch "$best_base/$dir/$ofile" "$ofile"
echo "$osum  $ofile" | sha256sum -c --quiet
fetch "$best_base/$dir/$dfile" "$dfile"
echo "$dsum  $dfile" | sha256sum -c --quiet
tar xzf "$ofile"
cd jq-jq-"$version"
tar xJf "../$dfile"
# Debian's patches in the order of their series (format 3.0 (quilt)).
while read -r patch _; do
	[[ -z $patch || $patch == \#* ]] && continue
	patch -p1 -s --no-backup-if-mismatch <"debian/patches/$patch" || fail "Debian's $rev patch $patch does not apply"
done <debian/patches/series

autoreconf -fi >/dev/null 2>&1
# As Debian's rules configure it: shared libjq only, the system's oniguruma.
./configure --quiet --disable-static --disable-docs --disable-maintainer-mode --with-oniguruma=yes --prefix="$cache" >/dev/null
# builtin.inc is generated; make it first, parallel builds race on it.
make -s src/builtin.inc >/dev/null
make -s -j"$(nproc)" >/dev/null 2>&1
# Installed elsewhere and moved into place, so that a cancelled build
# leaves no half cache behind; the binary's run path is $cache/lib.
make -s install DESTDIR="$work/dest" >/dev/null 2>&1
echo "$rev" >"$work/dest$cache/DEBIAN_VERSION"
mkdir -p "$(dirname "$cache")"
rm -rf "$cache"
mv "$work/dest$cache" "$cache"
echo "jq $rev from Debian's source: $("$bin" --version)" >&2
echo "$bin"
