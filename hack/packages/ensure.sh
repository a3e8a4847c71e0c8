#!/usr/bin/env bash
# Installs from Debian's packages what the developer targets need and the
# machine lacks: a C compiler for the race detector (cgo), jq for the
# shipped hooks, Chromium for the status page's browser test, Python 3 with
# venv for the Python hook test. Called by `make test` and `make run`; does
# nothing when all are present.
set -euo pipefail

want=()
for target in "$@"; do
	case "$target" in
	test)
		command -v gcc >/dev/null || want+=(gcc libc6-dev)
		command -v chromium >/dev/null || want+=(chromium)
		command -v jq >/dev/null || want+=(jq)
		# pkg/hook runs a Python hook with a venv made by python3 -m venv.
		python3 -c 'import venv' 2>/dev/null || want+=(python3 python3-venv)
		;;
	run)
		command -v jq >/dev/null || want+=(jq)
		;;
	jq-build)
		# hack/jq/build.sh: jq from Debian's source, checked against
		# Debian's signed index.
		command -v gcc >/dev/null || want+=(gcc libc6-dev)
		command -v make >/dev/null || want+=(make)
		command -v autoreconf >/dev/null || want+=(autoconf automake)
		command -v libtoolize >/dev/null || want+=(libtool)
		command -v bison >/dev/null || want+=(bison)
		command -v flex >/dev/null || want+=(flex)
		[[ -e /usr/include/oniguruma.h ]] || want+=(libonig-dev)
		command -v gpgv >/dev/null || want+=(gpgv)
		command -v curl >/dev/null || want+=(curl)
		command -v xz >/dev/null || want+=(xz-utils)
		command -v patch >/dev/null || want+=(patch)
		[[ -e /usr/share/keyrings/debian-archive-keyring.gpg ]] || want+=(debian-archive-keyring)
		;;
	image)
		# A daemonless image build and run: Debian's root file system, an
		# OCI layout, jq to read its configuration, curl to probe it.
		command -v mmdebstrap >/dev/null || want+=(mmdebstrap)
		command -v umoci >/dev/null || want+=(umoci)
		command -v jq >/dev/null || want+=(jq)
		command -v curl >/dev/null || want+=(curl)
		;;
	*)
		echo "ensure.sh: unknown target $target (want test, run, jq-build or image)" >&2
		exit 2
		;;
	esac
done
((${#want[@]})) || exit 0

if [[ $(id -u) -ne 0 ]]; then
	echo "missing Debian packages: ${want[*]}; install them (apt-get install ${want[*]}) or run as root" >&2
	exit 1
fi
echo "installing Debian packages: ${want[*]}" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
