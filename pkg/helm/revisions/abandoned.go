package revisions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/release"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/pkg/helm/objects"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// LabelCleanup on a revision names the earlier revisions, as
// "first-last", whose objects it still has to delete (objects that
// interrupted upgrades created and the revision no longer renders). It is
// set with the upgrade and removed once they are deleted, so an operator
// killed in between finishes the deletion on its next Apply.
const LabelCleanup = "addon-operator.io/cleanup"

// Abandoned returns the revisions of history after the last
// deployed one (all of them when none is deployed), in version order.
//
// Helm upgrades from the last deployed revision and deletes only the
// objects of that revision which the new manifest drops. Objects that a
// later, failed or interrupted, revision created are in neither manifest,
// so Helm would leave them behind; these revisions name them.
func Abandoned(history []*release.Release) []*release.Release {
	deployed := 0
	for _, rel := range history {
		if rel.Info.Status == release.StatusDeployed {
			deployed = max(deployed, rel.Version)
		}
	}
	var out []*release.Release
	for _, rel := range history {
		if rel.Version > deployed {
			out = append(out, rel)
		}
	}
	slices.SortFunc(out, func(a, b *release.Release) int { return a.Version - b.Version })
	return out
}

// ReadAbandoned returns the abandoned revisions of release name (see
// Abandoned). Read it before upgrading: the upgrade supersedes the
// deployed revision and may prune history.
func ReadAbandoned(cfg *action.Configuration, name string) ([]*release.Release, error) {
	history, err := cfg.Releases.History(name)
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	return Abandoned(history), nil
}

// Range is LabelCleanup's value for abandoned, "first-last", or
// "null" (which Helm's upgrade takes as: drop the label) when it is empty.
func Range(abandoned []*release.Release) string {
	if len(abandoned) == 0 {
		return "null"
	}
	return strconv.Itoa(abandoned[0].Version) + "-" + strconv.Itoa(abandoned[len(abandoned)-1].Version)
}

// parseRevisionRange parses a LabelCleanup value.
func parseRevisionRange(s string) (first, last int, err error) {
	a, b, ok := strings.Cut(s, "-")
	first, err1 := strconv.Atoi(a)
	last, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || first < 1 || last < first {
		return 0, 0, fmt.Errorf("label %s=%q: want first-last revision numbers", LabelCleanup, s)
	}
	return first, last, nil
}

// Cleaner deletes the objects that interrupted revisions left behind,
// logging each to log; namespace is the Client's, which log names.
type Cleaner struct {
	log       *slog.Logger
	namespace string
}

// NewCleaner returns a Cleaner that logs to log.
func NewCleaner(log *slog.Logger, namespace string) Cleaner {
	return Cleaner{log: log, namespace: namespace}
}

// Resume finishes the deletion that a deployed last revision still marks
// with LabelCleanup (see pkg/helm's upgradeOver): an earlier Apply was
// stopped between the upgrade and the deletion.
func (c Cleaner) Resume(ctx context.Context, cfg *action.Configuration, last *release.Release) error {
	if last == nil || last.Info.Status != release.StatusDeployed || last.Labels[LabelCleanup] == "" {
		return nil
	}
	first, end, err := parseRevisionRange(last.Labels[LabelCleanup])
	if err != nil {
		return err
	}
	history, err := cfg.Releases.History(last.Name)
	if err != nil {
		return fmt.Errorf("read history: %w", err)
	}
	var left []*release.Release
	for _, rel := range history {
		if rel.Version >= first && rel.Version <= end && rel.Version < last.Version {
			left = append(left, rel)
		}
	}
	slices.SortFunc(left, func(a, b *release.Release) int { return a.Version - b.Version })
	c.log.InfoContext(ctx, "resuming deletion of objects left by interrupted revisions",
		slog.String(logkey.Release, last.Name), slog.String(logkey.Revision, last.Labels[LabelCleanup]))
	return c.Run(ctx, cfg, last, left)
}

// Run deletes the objects of the abandoned revisions that rel dropped (see
// deleteAbandoned), then removes rel's LabelCleanup.
func (c Cleaner) Run(ctx context.Context, cfg *action.Configuration, rel *release.Release, abandoned []*release.Release) error {
	if err := c.deleteAbandoned(ctx, cfg, rel, abandoned); err != nil {
		return err
	}
	if _, ok := rel.Labels[LabelCleanup]; !ok {
		return nil
	}
	delete(rel.Labels, LabelCleanup)
	if err := cfg.Releases.Update(rel); err != nil {
		return fmt.Errorf("remove label %s from revision %d: %w", LabelCleanup, rel.Version, err)
	}
	return nil
}

// deleteAbandoned deletes the objects of the abandoned revisions that rel,
// the release just deployed over them, no longer has, as long as they
// still exist, carry Helm's ownership annotations for rel and no
// helm.sh/resource-policy: keep. Objects of another release, or of none,
// are never touched. Deletion propagates in the background.
func (c Cleaner) deleteAbandoned(ctx context.Context, cfg *action.Configuration, rel *release.Release, abandoned []*release.Release) error {
	if len(abandoned) == 0 {
		return nil
	}
	left, err := leftObjects(cfg, rel, abandoned)
	if err != nil {
		return err
	}
	if len(left) == 0 {
		return nil
	}
	if err := deleteObjects(cfg, left); err != nil {
		return err
	}
	for _, info := range left {
		attrs := []any{slog.String(logkey.Release, rel.Name), slog.String(logkey.Kind, info.Mapping.GroupVersionKind.Kind),
			slog.String(logkey.Name, info.Name)}
		if info.Namespace != "" && info.Namespace != c.namespace {
			attrs = append(attrs, slog.String(logkey.Namespace, info.Namespace)) // c.log carries the Client's
		}
		c.log.InfoContext(ctx, "deleted object left by an interrupted revision", attrs...)
	}
	return nil
}

// leftObjects returns the live objects of the abandoned revisions that rel
// dropped and that rel's release still owns (see deleteAbandoned).
func leftObjects(cfg *action.Configuration, rel *release.Release, abandoned []*release.Release) (kube.ResourceList, error) {
	current, err := cfg.KubeClient.Build(strings.NewReader(rel.Manifest), false)
	if err != nil {
		return nil, fmt.Errorf("build objects of revision %d: %w", rel.Version, err)
	}
	var dropped kube.ResourceList
	for _, old := range abandoned {
		built, err := cfg.KubeClient.Build(strings.NewReader(old.Manifest), false)
		if err != nil {
			return nil, fmt.Errorf("build objects of revision %d: %w", old.Version, err)
		}
		// Difference and Contains match on group, kind, namespace and name,
		// as Helm's own upgrade diff does.
		for _, info := range built.Difference(current) {
			if !dropped.Contains(info) {
				dropped.Append(info)
			}
		}
	}
	var owned kube.ResourceList
	for _, info := range dropped {
		err := info.Get() // replaces the rendered object with the live one
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("get %s: %w", objects.Ref(info), err)
		}
		if objects.OwnedBy(info.Object, rel.Name, rel.Namespace) {
			owned.Append(info)
		}
	}
	return owned, nil
}

// deleteObjects deletes objects with background propagation; an object
// already gone counts as deleted.
func deleteObjects(cfg *action.Configuration, list kube.ResourceList) error {
	var errs []error
	if kc, ok := cfg.KubeClient.(kube.InterfaceDeletionPropagation); ok {
		_, errs = kc.DeleteWithPropagationPolicy(list, metav1.DeletePropagationBackground)
	} else {
		_, errs = cfg.KubeClient.Delete(list) // Helm's client propagates in the background
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("delete list: %w", err)
	}
	return nil
}

// Base returns the revision Helm's upgrade diffs against: the last
// deployed one, else a failed or superseded last one; nil when Helm
// installs (no revision, or the last one uninstalled).
func Base(cfg *action.Configuration, last *release.Release) (*release.Release, error) {
	switch {
	case last == nil, last.Info.Status == release.StatusUninstalled:
		return nil, nil
	case last.Info.Status == release.StatusDeployed:
		return last, nil
	}
	history, err := cfg.Releases.History(last.Name)
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	var deployed *release.Release
	for _, rel := range history {
		if rel.Info.Status == release.StatusDeployed && (deployed == nil || rel.Version > deployed.Version) {
			deployed = rel
		}
	}
	if deployed != nil {
		return deployed, nil
	}
	return last, nil
}
