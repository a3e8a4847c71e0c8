package helm

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/addon-operator/addon-operator/pkg/helm/records"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// recordsSyncWait is how long Owned waits for Options.Records to have
// listed the records before it lists them itself.
const recordsSyncWait = 30 * time.Second

// ReleaseRecords reads the labels of the release records (Helm's storage
// Secrets or ConfigMaps) in the namespace; *heal.RecordWatcher is the real
// one, answering from its watch.
type ReleaseRecords interface {
	// RecordLabels returns the labels of every record, among them Helm's
	// name, version and status and LabelManagedBy, once known; it blocks
	// until then or until ctx ends. The maps are read, never written.
	RecordLabels(ctx context.Context) ([]map[string]string, error)
}

// ownedFromRecords answers Owned from the records' labels; ok is false
// when the Client can read none (a test's memory driver).
func (c *Client) ownedFromRecords(ctx context.Context) (owned []string, ok bool, err error) {
	relabelled := c.relabelled.Swap(false)
	if c.records != nil && !relabelled {
		wait, cancel := context.WithTimeout(ctx, c.recordsSyncWait)
		labels, err := c.records.RecordLabels(wait)
		cancel()
		if err == nil {
			owned, err := c.confirmUninstalled(ctx, ownedOf(labels))
			return owned, err == nil, err
		}
		if ctx.Err() != nil {
			return nil, false, fmt.Errorf("read release records: %w", ctx.Err())
		}
		c.log.WarnContext(ctx, "release records not watched in time, listing them", logkey.Err(err))
	}
	labels, ok, err := c.listRecords(ctx)
	if !ok || err != nil {
		return nil, false, err
	}
	return ownedOf(labels), true, nil
}

// listRecords lists the records' labels with one request; ok is false
// when the Client has no cluster to list them from (a test's memory
// driver).
func (c *Client) listRecords(ctx context.Context) (labels []map[string]string, ok bool, err error) {
	if c.lister == nil {
		return nil, false, nil
	}
	labels, err = c.lister.RecordLabels(ctx)
	return labels, err == nil, err
}

// confirmUninstalled reads the last revision of each release in owned
// that the Client uninstalled since the watch last showed it gone: the
// watch may not have seen the deletion of its records yet. A release read
// anew no longer needs it; owned loses those without a revision of ours.
func (c *Client) confirmUninstalled(ctx context.Context, owned []string) ([]string, error) {
	c.uninstalledMu.Lock()
	defer c.uninstalledMu.Unlock()
	for name := range c.uninstalled {
		if !slices.Contains(owned, name) {
			delete(c.uninstalled, name) // the watch has seen it go
			continue
		}
		cfg, err := c.config(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("read release %q: %w", name, err)
		}
		last, err := lastRelease(cfg, name)
		if err != nil {
			return nil, err
		}
		if last != nil && statusOf(last).Owned {
			delete(c.uninstalled, name) // installed again since
			continue
		}
		owned = slices.DeleteFunc(owned, func(n string) bool { return n == name })
	}
	return owned, nil
}

// noteUninstalled makes the next answers from the watch confirm that
// release name is gone.
func (c *Client) noteUninstalled(name string) {
	c.uninstalledMu.Lock()
	defer c.uninstalledMu.Unlock()
	if c.uninstalled == nil {
		c.uninstalled = map[string]bool{}
	}
	c.uninstalled[name] = true
}

// ownedOf returns the sorted names of the releases whose newest record
// carries LabelManagedBy=ManagedByValue, as records.Listed tells: the
// answer action.List gives for those records with StateMask ListAll and
// selector LabelManagedBy=ManagedByValue. A release whose newest record
// lost the label is not owned, whatever its older records say.
func ownedOf(labels []map[string]string) []string { return records.Listed(labels, ownedRecord) }

// ownedRecord reports whether a record's labels carry
// LabelManagedBy=ManagedByValue.
func ownedRecord(labels map[string]string) bool { return labels[LabelManagedBy] == ManagedByValue }
