package revisions

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/release"
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
	// ManifestChecksum is the revision's pkg/helm LabelChecksum: what the operator
	// compares to skip an upgrade; empty on revisions it did not create.
	ManifestChecksum string `json:"manifestChecksum,omitempty"`
}

// Describe describes rels, sorted by revision; modified holds the last
// write of each revision's record, and checksumLabel the label of the
// manifests' checksum (pkg/helm's LabelChecksum).
func Describe(rels []*release.Release, modified map[int]time.Time, checksumLabel string) []Revision {
	rels = slices.Clone(rels)
	slices.SortFunc(rels, func(a, b *release.Release) int { return a.Version - b.Version })
	out := make([]Revision, 0, len(rels))
	var prev *release.Release
	for _, r := range rels {
		rev := Revision{
			Revision: r.Version, ValuesChecksum: valuesChecksum(r.Config),
			ManifestChecksum: r.Labels[checksumLabel], Reason: reasonOf(prev, r),
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
