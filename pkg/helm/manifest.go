package helm

import (
	"context"
	"fmt"
)

// Manifest returns the manifest of release name's last revision, the
// objects Helm deployed (without chart hooks); "" and ErrNotFound when the
// release has no revision.
func (c *Client) Manifest(ctx context.Context, name string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("read release %q: %w", name, err)
	}
	cfg, err := c.config(ctx, name)
	if err != nil {
		return "", fmt.Errorf("read release %q: %w", name, err)
	}
	rel, err := lastRelease(cfg, name)
	if err != nil {
		return "", err
	}
	if rel == nil {
		return "", fmt.Errorf("read release %q: %w", name, ErrNotFound)
	}
	return rel.Manifest, nil
}
