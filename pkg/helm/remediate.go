package helm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"

	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// Remediation is what Remediate does to a release whose last revision
// failed.
type Remediation string

// Remediations.
const (
	// RemediationNone leaves a failed release as it is; the next Apply
	// upgrades over it.
	RemediationNone Remediation = "none"
	// RemediationRollback rolls a failed upgrade back to the last deployed
	// revision, with the chart's rollback hooks, and uninstalls a failed
	// install, which has no revision to roll back to.
	RemediationRollback Remediation = "rollback"
	// RemediationUninstall uninstalls a failed release, with the chart's
	// delete hooks; the next Apply installs it anew.
	RemediationUninstall Remediation = "uninstall"
)

// ParseRemediation returns the Remediation named s.
func ParseRemediation(s string) (Remediation, error) {
	switch r := Remediation(s); r {
	case RemediationNone, RemediationRollback, RemediationUninstall:
		return r, nil
	default:
		return "", fmt.Errorf("remediation %q: want %q, %q or %q", s, RemediationNone, RemediationRollback, RemediationUninstall)
	}
}

// Remedy is what Remediate did.
type Remedy struct {
	// Action is "rollback", "uninstall", or empty when nothing was done:
	// the last revision is not failed, or the remediation is none.
	Action string
	// Failed is the failed revision remediated.
	Failed int
	// Target is the revision rolled back to; 0 for an uninstall.
	Target int
}

// remedy decides what remediation r does to a release with history (in
// any order): nothing unless the last revision failed or was left pending;
// a rollback to the last deployed revision when there is one and r is
// rollback; an uninstall otherwise.
func remedy(history []*release.Release, r Remediation) Remedy {
	if len(history) == 0 || r == RemediationNone || r == "" {
		return Remedy{}
	}
	byVersion := slices.SortedFunc(slices.Values(history), func(a, b *release.Release) int { return a.Version - b.Version })
	last := byVersion[len(byVersion)-1]
	switch last.Info.Status {
	case release.StatusFailed, release.StatusPendingInstall, release.StatusPendingUpgrade, release.StatusPendingRollback:
	default:
		return Remedy{}
	}
	out := Remedy{Action: string(RemediationUninstall), Failed: last.Version}
	if r != RemediationRollback {
		return out
	}
	for _, rel := range slices.Backward(byVersion) {
		if rel.Info.Status == release.StatusDeployed {
			out.Action, out.Target = string(RemediationRollback), rel.Version
			break
		}
	}
	return out
}

// Remediate puts release name back into a working state after failed
// deployments, as remediation r says (see remedy): it rolls the release
// back to its last deployed revision, running the chart's pre- and
// post-rollback hooks, or uninstalls it with its delete hooks. The rolled
// back revision keeps that revision's labels, so the next Apply sees its
// checksum differ from the new render and upgrades again. A release
// without revisions is no error and nothing is done.
func (c *Client) Remediate(ctx context.Context, name string, r Remediation) (Remedy, error) {
	if err := ctx.Err(); err != nil {
		return Remedy{}, fmt.Errorf("remediate release %q: %w", name, err)
	}
	cfg, err := c.config(ctx, name)
	if err != nil {
		return Remedy{}, fmt.Errorf("remediate release %q: %w", name, err)
	}
	history, err := cfg.Releases.History(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return Remedy{}, nil
	}
	if err != nil {
		return Remedy{}, fmt.Errorf("remediate release %q: read history: %w", name, err)
	}
	out := remedy(history, r)
	switch out.Action {
	case string(RemediationRollback):
		rb := action.NewRollback(cfg)
		rb.Version = out.Target
		rb.Timeout = c.timeout
		rb.MaxHistory = c.historyMax
		rb.CleanupOnFail = true
		if err := rb.Run(name); err != nil {
			return out, fmt.Errorf("roll back release %q to revision %d: %w", name, out.Target, err)
		}
		c.log.InfoContext(ctx, "release rolled back", slog.String(logkey.Release, name), slog.Int(logkey.Revision, out.Target))
	case string(RemediationUninstall):
		if _, err := c.Uninstall(ctx, name); err != nil {
			return out, fmt.Errorf("remediate release %q: %w", name, err)
		}
	}
	return out, nil
}
