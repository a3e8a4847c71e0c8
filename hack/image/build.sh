#!/usr/bin/env bash
# Builds the operator image without a container engine: a Debian trixie
# root file system from Debian's packages (mmdebstrap), the operator binary
# built here, the shipped modules and global hooks, and the configuration
# of the Dockerfile (user 65532, tini as PID 1, start as the command), as an
# OCI image layout (umoci). Used by `make image` when no Docker daemon
# answers. Needs root (mmdebstrap's root mode and file ownership).
#
# Usage: hack/image/build.sh OUT_DIR VERSION COMMIT
# Result: OUT_DIR/oci, an OCI layout holding the tag addon-operator:VERSION;
# push it with `skopeo copy oci:OUT_DIR/oci:addon-operator:VERSION docker://REGISTRY/...`.
set -euo pipefail

out=$(realpath -m "${1:?usage: build.sh OUT_DIR VERSION COMMIT}")
version=${2:?version}
commit=${3:-unknown}
root=$(cd "$(dirname "$0")/../.." && pwd)
tag="addon-operator:${version}"

mkdir -p "$out"
base="$out/base-trixie.tar"
if [[ ! -s $base ]]; then
	# The Dockerfile's runtime: bash, jq, tini and CA certificates on
	# Debian trixie (its jq is 1.7.1); documentation, manuals and locales left out.
	mmdebstrap --variant=minbase --mode=root --format=tar --include=bash,jq,tini,ca-certificates \
		--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
		trixie "$base.tmp"
	mv "$base.tmp" "$base"
fi

bin="$out/addon-operator"
(cd "$root" && CGO_ENABLED=0 go build -trimpath \
	-ldflags "-s -w -X main.version=${version} -X main.commit=${commit}" -o "$bin" ./cmd/addon-operator)

layout="$out/oci"
bundle="$out/bundle"
rm -rf "$layout" "$bundle"
umoci init --layout "$layout"
umoci new --image "$layout:$tag"
umoci unpack --image "$layout:$tag" "$bundle"
rootfs="$bundle/rootfs"
tar -C "$rootfs" -xf "$base"
install -D -m 0755 "$bin" "$rootfs/usr/local/bin/addon-operator"
# The modules' Go hooks, as the Dockerfile's build stage makes them.
(cd "$root" && CGO_ENABLED=0 go run ./hack/buildhooks)
cp -a "$root/modules" "$rootfs/modules"
cp -a "$root/global-hooks" "$rootfs/global-hooks"
chown -R 0:0 "$rootfs/modules" "$rootfs/global-hooks"
# The debug socket's default directory must be the operator's to write.
# /var/run is a symlink to /run in Debian; resolve it inside the image, not
# on this machine.
run_dir="$rootfs/var/run"
if [[ -L $run_dir ]]; then
	link=$(readlink "$run_dir")
	[[ $link == /* ]] && run_dir="$rootfs$link" || run_dir="$rootfs/var/$link"
fi
install -d -o 65532 -g 65532 "$run_dir/addon-operator"
umoci repack --image "$layout:$tag" "$bundle"
rm -rf "$bundle"

umoci config --image "$layout:$tag" \
	--config.user 65532:65532 \
	--config.workingdir / \
	--config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	--config.env ADDON_OPERATOR_MODULES_DIR=/modules \
	--config.env ADDON_OPERATOR_GLOBAL_HOOKS_DIR=/global-hooks \
	--config.entrypoint /usr/bin/tini --config.entrypoint -- --config.entrypoint /usr/local/bin/addon-operator \
	--config.cmd start \
	--clear=config.labels \
	--config.label org.opencontainers.image.version="$version" \
	--config.label org.opencontainers.image.revision="$commit"
umoci gc --layout "$layout"
echo "built $layout:$tag" >&2
