package helm

import (
	"context"
	"fmt"
	"slices"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"

	"github.com/addon-operator/addon-operator/pkg/helm/records"
)

// ClaimUnlabeled deals with the releases in the namespace whose last
// revision has no LabelManagedBy, at startup, before Owned is read for a
// converge.
//
// With Options.AdoptUnlabeledReleases it labels the last revision of each
// as the operator's, as an upgrade by Apply would, logs each at info level,
// and returns none: Owned lists them from then on, so they are upgraded or
// purged like releases the operator made. Without it nothing is changed and
// their sorted names are returned. It finds them with one LIST of the
// records' metadata and decodes only the records of those it labels; a
// Client without a cluster decodes every record.
func (c *Client) ClaimUnlabeled(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list unlabeled releases: %w", err)
	}
	labels, ok, err := c.listRecords(ctx)
	if err != nil {
		return nil, fmt.Errorf("list unlabeled releases: %w", err)
	}
	if !ok {
		return c.claimDecoded(ctx)
	}
	names := records.Listed(labels, func(l map[string]string) bool { return !ownedRecord(l) })
	if len(names) == 0 {
		return nil, nil
	}
	if !c.adoptReleases {
		return names, nil
	}
	cfg, err := c.config(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("list unlabeled releases: %w", err)
	}
	for _, name := range names {
		rel, err := lastRelease(cfg, name)
		if err != nil {
			return nil, fmt.Errorf("adopt release %q: %w", name, err)
		}
		if rel == nil || rel.Labels[LabelManagedBy] == ManagedByValue {
			continue // gone or labelled since the LIST
		}
		if err := c.adoptRelease(ctx, cfg, rel); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// claimDecoded is ClaimUnlabeled through Helm's list, which decodes every
// record.
func (c *Client) claimDecoded(ctx context.Context) ([]string, error) {
	cfg, err := c.config(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("list unlabeled releases: %w", err)
	}
	list := action.NewList(cfg)
	list.All = true
	list.StateMask = action.ListAll
	rels, err := list.Run()
	if err != nil {
		return nil, fmt.Errorf("list unlabeled releases: %w", err)
	}
	var names []string
	for _, rel := range rels {
		if rel.Labels[LabelManagedBy] == ManagedByValue {
			continue
		}
		if !c.adoptReleases {
			names = append(names, rel.Name)
			continue
		}
		if err := c.adoptRelease(ctx, cfg, rel); err != nil {
			return nil, err
		}
	}
	slices.Sort(names)
	return names, nil
}

// adoptRelease labels rel, a release's last revision, as the operator's.
func (c *Client) adoptRelease(ctx context.Context, cfg *action.Configuration, rel *release.Release) error {
	if rel.Labels == nil {
		rel.Labels = map[string]string{}
	}
	rel.Labels[LabelManagedBy] = ManagedByValue
	if err := cfg.Releases.Update(rel); err != nil {
		return fmt.Errorf("adopt release %q: %w", rel.Name, err)
	}
	c.relabelled.Store(true)
	c.logAdopted(ctx, rel)
	return nil
}
