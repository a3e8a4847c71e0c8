package helm

import "helm.sh/helm/v3/pkg/release"

// deployReason decides whether a release must be deployed, given its last
// revision (nil when there is none) and the checksum of its new rendering.
// It returns "" when the release is up to date. missing reports the first
// rendered object absent from the cluster ("" when none); it is consulted
// only when everything else says the release is up to date, since it costs
// a request per object.
func deployReason(last *Status, checksum string, missing func() (string, error)) (Reason, string, error) {
	switch {
	case last == nil:
		return ReasonNoRelease, "", nil
	case last.State != release.StatusDeployed.String():
		return ReasonNotDeployed, "", nil
	case last.Checksum != checksum:
		return ReasonChecksumChanged, "", nil
	}
	absent, err := missing()
	if err != nil {
		return "", "", err
	}
	if absent != "" {
		return ReasonObjectMissing, absent, nil
	}
	return "", "", nil
}

// step is the Helm operation that deploys a release.
type step int

const (
	// stepInstall installs a release that has no revision.
	stepInstall step = iota
	// stepReinstall installs over a history whose last revision is
	// uninstalled (helm uninstall --keep-history).
	stepReinstall
	// stepRecover marks an interrupted last revision failed, then upgrades.
	stepRecover
	// stepUpgrade upgrades from the last revision.
	stepUpgrade
)

// planDeploy chooses the operation for a release whose last revision is
// last (nil when there is none).
func planDeploy(last *Status) step {
	if last == nil {
		return stepInstall
	}
	switch release.Status(last.State) {
	case release.StatusUninstalled:
		return stepReinstall
	case release.StatusPendingInstall, release.StatusPendingUpgrade, release.StatusPendingRollback,
		release.StatusUninstalling, release.StatusUnknown:
		// Helm refuses to upgrade over a pending revision, and finds no
		// revision to upgrade from behind an uninstalling or unknown one.
		return stepRecover
	default: // deployed, failed, superseded
		return stepUpgrade
	}
}
