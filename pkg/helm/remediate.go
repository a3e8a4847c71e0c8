package helm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/storage/driver"

	"github.com/addon-operator/addon-operator/pkg/helm/revisions"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// Remediate puts release name back into a working state after failed
// deployments, as remediation r says (see revisions.RemedyFor): it rolls
// the release back to its last deployed revision, running the chart's
// pre- and post-rollback hooks, or uninstalls it with its delete hooks. The rolled
// back revision keeps that revision's labels, so the next Apply sees its
// checksum differ from the new render and upgrades again. A release
// without revisions is no error and nothing is done.
func (c *Client) Remediate(ctx context.Context, name string, r revisions.Remediation) (revisions.Remedy, error) {
	if err := ctx.Err(); err != nil {
		return revisions.Remedy{}, fmt.Errorf("remediate release %q: %w", name, err)
	}
	cfg, err := c.config(ctx, name)
	if err != nil {
		return revisions.Remedy{}, fmt.Errorf("remediate release %q: %w", name, err)
	}
	history, err := cfg.Releases.History(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return revisions.Remedy{}, nil
	}
	if err != nil {
		return revisions.Remedy{}, fmt.Errorf("remediate release %q: read history: %w", name, err)
	}
	out := revisions.RemedyFor(history, r)
	switch out.Action {
	case string(revisions.RemediationRollback):
		rb := action.NewRollback(cfg)
		rb.Version = out.Target
		rb.Timeout = c.timeout
		rb.MaxHistory = c.historyMax
		rb.CleanupOnFail = true
		if err := rb.Run(name); err != nil {
			return out, fmt.Errorf("roll back release %q to revision %d: %w", name, out.Target, err)
		}
		c.log.InfoContext(ctx, "release rolled back", slog.String(logkey.Release, name), slog.Int(logkey.Revision, out.Target))
	case string(revisions.RemediationUninstall):
		if _, err := c.Uninstall(ctx, name); err != nil {
			return out, fmt.Errorf("remediate release %q: %w", name, err)
		}
	}
	return out, nil
}
