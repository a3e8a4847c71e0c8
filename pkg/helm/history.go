package helm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/storage/driver"

	"github.com/addon-operator/addon-operator/pkg/helm/records"
	"github.com/addon-operator/addon-operator/pkg/helm/revisions"
)

// History returns the revisions of release name, oldest first; an error
// wrapping ErrNotFound when it has none. It only reads.
func (c *Client) History(ctx context.Context, name string) ([]revisions.Revision, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("history of release %q: %w", name, err)
	}
	cfg, err := c.config(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("history of release %q: %w", name, err)
	}
	rels, err := cfg.Releases.History(name)
	if errors.Is(err, driver.ErrReleaseNotFound) || (err == nil && len(rels) == 0) {
		return nil, fmt.Errorf("history of release %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("history of release %q: %w", name, err)
	}
	modified := c.modifiedTimes(ctx, name)
	return revisions.Describe(rels, modified, LabelChecksum), nil
}

// modifiedTimes returns the time of the last write of each revision's
// record of release name (records.Modified), by revision; empty when the
// Client cannot list the records. Durations are extra: a failure is no
// error.
func (c *Client) modifiedTimes(ctx context.Context, name string) map[int]time.Time {
	if c.lister == nil {
		return map[int]time.Time{}
	}
	labels, err := c.lister.RecordLabels(ctx)
	if err != nil {
		return map[int]time.Time{}
	}
	return records.Modified(labels, name)
}

// ErrRollbackTarget is returned by Rollback for a revision that cannot be
// rolled back to: the current one, or one the history does not hold.
var ErrRollbackTarget = errors.New("no revision to roll back to")

// Rollback rolls release name back to revision (0: the one before the
// last) as `helm rollback` does: a new revision with the target's chart,
// values and labels, described "Rollback to N". The target's LabelChecksum
// comes with it, so the operator's next run of the module sees a release
// that differs from what it renders and upgrades it again; only a module
// in maintenance keeps the rolled-back revision. Helm's rollback takes no
// context: ctx is checked before it starts, and Options.Timeout bounds its
// hooks. It returns the new revision.
func (c *Client) Rollback(ctx context.Context, name string, revision int) (revisions.Revision, error) {
	if err := ctx.Err(); err != nil {
		return revisions.Revision{}, fmt.Errorf("roll back release %q: %w", name, err)
	}
	cfg, err := c.config(ctx, name)
	if err != nil {
		return revisions.Revision{}, fmt.Errorf("roll back release %q: %w", name, err)
	}
	last, err := lastRelease(cfg, name)
	if err != nil {
		return revisions.Revision{}, err
	}
	if last == nil {
		return revisions.Revision{}, fmt.Errorf("roll back release %q: %w", name, ErrNotFound)
	}
	if revision == last.Version || (revision == 0 && last.Version < 2) {
		return revisions.Revision{}, fmt.Errorf("roll back release %q to revision %d: %w: it is the last one", name, max(revision, last.Version), ErrRollbackTarget)
	}
	if revision != 0 {
		if _, err := cfg.Releases.Get(name, revision); err != nil {
			return revisions.Revision{}, fmt.Errorf("roll back release %q to revision %d: %w: %w", name, revision, ErrRollbackTarget, err)
		}
	}
	if last.Namespace != "" {
		c.inNamespace(cfg, last.Namespace)
	}
	rb := action.NewRollback(cfg)
	rb.Version = revision
	rb.MaxHistory = c.historyMax
	rb.Timeout = c.timeout
	rb.CleanupOnFail = true
	if err := rb.Run(name); err != nil {
		return revisions.Revision{}, fmt.Errorf("roll back release %q: %w", name, err)
	}
	revs, err := c.History(ctx, name)
	if err != nil {
		return revisions.Revision{}, err
	}
	return revs[len(revs)-1], nil
}
