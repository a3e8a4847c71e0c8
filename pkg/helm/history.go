package helm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
)

// Reasons of a Revision: what made it.
const (
	ReasonInstall      = "install"       // the first revision, or the first after an uninstall
	ReasonUpgrade      = "upgrade"       // a new chart version, or the same chart and values deployed again
	ReasonValuesChange = "values change" // the same chart version with other values
	ReasonRollback     = "rollback"      // a rollback to an earlier revision
)

// Revision is one revision of a release, as `helm history` shows it, with
// what made it and the checksum of its values.
type Revision struct {
	Revision int `json:"revision"`
	// Updated is when the revision started to deploy.
	Updated time.Time `json:"updated"`
	// Status is Helm's status of the revision: deployed, superseded,
	// failed, pending-*...
	Status string `json:"status"`
	// Reason is one of the Reason constants.
	Reason      string `json:"reason"`
	Chart       string `json:"chart"`
	AppVersion  string `json:"appVersion,omitempty"`
	Description string `json:"description"`
	// Duration is from Updated to the last write of the revision's record,
	// in whole seconds as the record stores that time; zero when unknown
	// (a revision still pending, or records not read from the cluster).
	Duration time.Duration `json:"duration"`
	// ValuesChecksum is the SHA-256 of the values the revision was
	// deployed with (their JSON, keys sorted).
	ValuesChecksum string `json:"valuesChecksum"`
	// ManifestChecksum is the revision's LabelChecksum: what the operator
	// compares to skip an upgrade; empty on revisions it did not create.
	ManifestChecksum string `json:"manifestChecksum,omitempty"`
}

// History returns the revisions of release name, oldest first; an error
// wrapping ErrNotFound when it has none. It only reads.
func (c *Client) History(ctx context.Context, name string) ([]Revision, error) {
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
	return revisionsOf(rels, modified), nil
}

// modifiedTimes returns the time of the last write of each revision's
// record (Helm's modifiedAt label), by revision; empty when the Client
// cannot list the records. Durations are extra: a failure is no error.
func (c *Client) modifiedTimes(ctx context.Context, name string) map[int]time.Time {
	out := map[int]time.Time{}
	if c.lister == nil {
		return out
	}
	labels, err := c.lister.RecordLabels(ctx)
	if err != nil {
		return out
	}
	for _, l := range labels {
		if l[recordNameLabel] != name {
			continue
		}
		v, err1 := strconv.Atoi(l[recordVersionLabel])
		sec, err2 := strconv.ParseInt(l["modifiedAt"], 10, 64)
		if err1 == nil && err2 == nil {
			out[v] = time.Unix(sec, 0)
		}
	}
	return out
}

// revisionsOf describes rels, sorted by revision; modified holds the last
// write of each revision's record.
func revisionsOf(rels []*release.Release, modified map[int]time.Time) []Revision {
	rels = slices.Clone(rels)
	slices.SortFunc(rels, func(a, b *release.Release) int { return a.Version - b.Version })
	out := make([]Revision, 0, len(rels))
	var prev *release.Release
	for _, r := range rels {
		rev := Revision{
			Revision: r.Version, ValuesChecksum: valuesChecksum(r.Config),
			ManifestChecksum: r.Labels[LabelChecksum], Reason: reasonOf(prev, r),
		}
		if r.Info != nil {
			rev.Updated = r.Info.LastDeployed.Time
			rev.Status = r.Info.Status.String()
			rev.Description = r.Info.Description
			if end, ok := modified[r.Version]; ok && !r.Info.Status.IsPending() && !end.Before(rev.Updated.Truncate(time.Second)) {
				rev.Duration = end.Sub(rev.Updated.Truncate(time.Second))
			}
		}
		if r.Chart != nil && r.Chart.Metadata != nil {
			rev.Chart = r.Chart.Metadata.Name + "-" + r.Chart.Metadata.Version
			rev.AppVersion = r.Chart.Metadata.AppVersion
		}
		out = append(out, rev)
		prev = r
	}
	return out
}

// reasonOf says what made revision cur, prev being the revision before it
// (nil for the first).
func reasonOf(prev, cur *release.Release) string {
	switch {
	case cur.Info != nil && strings.HasPrefix(cur.Info.Description, "Rollback to "):
		return ReasonRollback
	case prev == nil || prev.Info == nil || prev.Info.Status == release.StatusUninstalled:
		return ReasonInstall
	case chartVersion(prev) != chartVersion(cur):
		return ReasonUpgrade
	case valuesChecksum(prev.Config) != valuesChecksum(cur.Config):
		return ReasonValuesChange
	default:
		return ReasonUpgrade
	}
}

func chartVersion(r *release.Release) string {
	if r.Chart == nil || r.Chart.Metadata == nil {
		return ""
	}
	return r.Chart.Metadata.Version
}

// valuesChecksum is the SHA-256 of v's JSON, whose map keys are sorted.
func valuesChecksum(v map[string]any) string {
	if v == nil {
		v = map[string]any{}
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
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
func (c *Client) Rollback(ctx context.Context, name string, revision int) (Revision, error) {
	if err := ctx.Err(); err != nil {
		return Revision{}, fmt.Errorf("roll back release %q: %w", name, err)
	}
	cfg, err := c.config(ctx, name)
	if err != nil {
		return Revision{}, fmt.Errorf("roll back release %q: %w", name, err)
	}
	last, err := lastRelease(cfg, name)
	if err != nil {
		return Revision{}, err
	}
	if last == nil {
		return Revision{}, fmt.Errorf("roll back release %q: %w", name, ErrNotFound)
	}
	if revision == last.Version || (revision == 0 && last.Version < 2) {
		return Revision{}, fmt.Errorf("roll back release %q to revision %d: %w: it is the last one", name, max(revision, last.Version), ErrRollbackTarget)
	}
	if revision != 0 {
		if _, err := cfg.Releases.Get(name, revision); err != nil {
			return Revision{}, fmt.Errorf("roll back release %q to revision %d: %w: %w", name, revision, ErrRollbackTarget, err)
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
		return Revision{}, fmt.Errorf("roll back release %q: %w", name, err)
	}
	revs, err := c.History(ctx, name)
	if err != nil {
		return Revision{}, err
	}
	return revs[len(revs)-1], nil
}
