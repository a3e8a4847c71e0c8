#!/usr/bin/env bash
# Runs an image built by build.sh as its configuration says (user, working
# directory, environment, entrypoint and command), without a container
# engine: the image is unpacked with umoci and its command run in a chroot
# as the image's user. It checks that `version` works, that the jq hooks
# call is 1.7 or later, and that `start`, as
# user 65532, gets ready against the cluster of KUBECONFIG, then stops it.
# Needs root (chroot, bind mounts).
#
# Usage: KUBECONFIG=... hack/image/check.sh OCI_LAYOUT TAG NAMESPACE
set -euo pipefail

layout=${1:?usage: check.sh OCI_LAYOUT TAG NAMESPACE}
tag=${2:?tag}
namespace=${3:?namespace}
: "${KUBECONFIG:?KUBECONFIG must name the cluster to start against}"

work=$(mktemp -d)
rootfs="$work/bundle/rootfs"
cleanup() {
	if [[ -n ${pid:-} ]]; then
		# tini, PID 1 of the run's PID namespace (unshare ignores TERM),
		# passes TERM on to the operator and exits with it.
		pkill -TERM -P "$pid" -x tini 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	umount "$rootfs/dev" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

umoci unpack --image "$layout:$tag" "$work/bundle" >/dev/null
spec="$work/bundle/config.json"
uid=$(jq -r '.process.user.uid' "$spec")
gid=$(jq -r '.process.user.gid' "$spec")
cwd=$(jq -r '.process.cwd' "$spec")
mapfile -t env < <(jq -r '.process.env[]' "$spec")
mapfile -t args < <(jq -r '.process.args[]' "$spec")
echo "image user ${uid}:${gid}, cwd ${cwd}, command: ${args[*]}"
mount --bind /dev "$rootfs/dev"
install -m 0644 "$KUBECONFIG" "$rootfs/tmp/kubeconfig"

# The image's entrypoint, run as its user in its working directory with its
# environment only, in a PID namespace of its own as in a container (tini
# is PID 1 there); arguments after it replace the image's command.
entry=("${args[@]}")
unset 'entry[${#entry[@]}-1]' # the image's command (start)
image=(unshare --pid --fork --mount-proc="$rootfs/proc"
	chroot --userspec="${uid}:${gid}" "$rootfs" /usr/bin/env -i "${env[@]}" HOME=/tmp
	sh -c 'cd "$0" && exec "$@"' "$cwd" "${entry[@]}")

"${image[@]}" version
# Hooks call the image's jq; 1.6 costs about 15 ms of CPU a start, 1.7 about 2.
jq_version=$(chroot --userspec="${uid}:${gid}" "$rootfs" /usr/bin/jq --version)
echo "image jq: $jq_version"
case $jq_version in
jq-1.[7-9]* | jq-[2-9]*) ;;
*)
	echo "the image's jq is $jq_version, want 1.7 or later" >&2
	exit 1
	;;
esac
port=$((20000 + RANDOM % 20000))
"${image[@]}" start --namespace "$namespace" --kube-config /tmp/kubeconfig --listen-address "127.0.0.1:$port" --log-type json \
	>"$work/operator.log" 2>&1 &
pid=$!
for _ in $(seq 1 120); do
	if [[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz") == 200 ]]; then
		# unshare -> tini -> the operator, which must run as the image's user.
		tini=$(pgrep -P "$pid")
		op=$(pgrep -P "$tini")
		echo "ready: /readyz 200 after converging; tini is PID 1 of the run, its child $(ps -o comm= -p "$op") runs as uid $(ps -o uid= -p "$op" | tr -d ' ')"
		[[ $(ps -o uid= -p "$op" | tr -d ' ') == "$uid" ]] || { echo "operator does not run as $uid" >&2; exit 1; }
		grep -o '"msg":"[^"]*converge[^"]*"' "$work/operator.log" | sort | uniq -c
		exit 0
	fi
	kill -0 "$pid" 2>/dev/null || { echo "operator exited:" >&2; cat "$work/operator.log" >&2; exit 1; }
	sleep 1
done
echo "operator not ready after 120 s:" >&2
cat "$work/operator.log" >&2
exit 1
