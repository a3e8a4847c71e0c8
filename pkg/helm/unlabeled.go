package helm

import (
	"context"
	"fmt"
	"slices"

	"helm.sh/helm/v3/pkg/action"
)

// ClaimUnlabeled deals with the releases in the namespace whose last
// revision has no LabelManagedBy, at startup, before Owned is read for a
// converge.
//
// With Options.AdoptUnlabeledReleases it labels the last revision of each
// as the operator's, as an upgrade by Apply would, logs each at info level,
// and returns none: Owned lists them from then on, so they are upgraded or
// purged like releases the operator made. Without it nothing is changed and
// their sorted names are returned. Unlike Owned it decodes every release
// record in the namespace, once at startup.
func (c *Client) ClaimUnlabeled(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list unlabeled releases: %w", err)
	}
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
		if rel.Labels == nil {
			rel.Labels = map[string]string{}
		}
		rel.Labels[LabelManagedBy] = ManagedByValue
		if err := cfg.Releases.Update(rel); err != nil {
			return nil, fmt.Errorf("adopt release %q: %w", rel.Name, err)
		}
		c.relabelled.Store(true)
		c.logAdopted(ctx, rel)
	}
	slices.Sort(names)
	return names, nil
}
