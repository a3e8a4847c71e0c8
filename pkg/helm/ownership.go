package helm

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/release"

	"github.com/addon-operator/addon-operator/pkg/helm/kubeclient"
	"github.com/addon-operator/addon-operator/pkg/helm/objects"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// ForeignReleaseError reports that a release of the module's name exists
// but was not created by the operator (its last revision has no
// LabelManagedBy): it is not upgraded, unless Options.AdoptUnlabeledReleases.
type ForeignReleaseError struct {
	Release   string
	Namespace string
	Revision  int
	State     string
}

func (e *ForeignReleaseError) Error() string {
	return fmt.Sprintf("release %q in namespace %q (revision %d, %s) was not created by addon-operator (no label %s=%s), not taken: "+
		"remove or rename that release, or, when it is this module's release from an earlier addon-operator, start with --%s",
		e.Release, e.Namespace, e.Revision, e.State, LabelManagedBy, ManagedByValue, flagAdoptUnlabeledReleases)
}

// claimObjects is objects.Claim for release self, with the Client's
// adoption of unowned objects.
func (c *Client) claimObjects(ctx context.Context, cfg *action.Configuration, self objects.Owner, infos kube.ResourceList, base *release.Release) (objects.Claimed, error) {
	who := objects.Claimant{Self: self, Unowned: slices.Contains(c.adoptObjects, self.Release), Base: base}
	return objects.Claim(ctx, c.log, cfg, who, infos)
}

// spareForeign makes the uninstall of rel, a last revision that is not
// deployed, leave alone the objects of its manifest that exist and belong
// to another owner (see objects.Foreign; a failed revision's manifest may
// name objects that its creates found in their way, see installFresh). A
// deployed revision's objects are all its own, and are not read.
func (c *Client) spareForeign(ctx context.Context, cfg *action.Configuration, rel *release.Release) error {
	rc, ok := cfg.KubeClient.(kubeclient.Client)
	if !ok {
		return nil // no cluster: nothing can be in the way
	}
	spare, err := objects.Foreign(ctx, c.log, cfg, rel)
	if err != nil {
		return err
	}
	cfg.KubeClient = rc.Sparing(spare)
	return nil
}

// claimRelease refuses a release of the module's name that the operator
// did not create, unless adoptReleases: then the next revision labels it
// ours.
func (c *Client) claimRelease(ctx context.Context, last *release.Release) error {
	if last == nil || last.Labels[LabelManagedBy] == ManagedByValue {
		return nil
	}
	if !c.adoptReleases {
		return &ForeignReleaseError{Release: last.Name, Namespace: last.Namespace, Revision: last.Version, State: last.Info.Status.String()}
	}
	c.logAdopted(ctx, last)
	return nil
}

// logAdopted says once that release rel, which has no LabelManagedBy, is
// the operator's from now on.
func (c *Client) logAdopted(ctx context.Context, rel *release.Release) {
	c.log.InfoContext(ctx, "release without ownership label adopted", slog.String(logkey.Release, rel.Name), slog.Int(logkey.Revision, rel.Version))
}
