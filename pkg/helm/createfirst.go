package helm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/release"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/addon-operator/addon-operator/pkg/helm/kubeclient"
	"github.com/addon-operator/addon-operator/pkg/helm/objects"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// errInTheWay reports that installFresh found an object in its way and
// undid the install.
var errInTheWay = errors.New("an object the release renders exists")

// createsFirst reports whether the first install of release name creates
// its objects without reading them first (see installFresh): when the
// Client answers Helm's existence checks itself, the chart has no hooks
// (which would run before a create finds an object in the way), and the
// release's last install found nothing in its way.
func (c *Client) createsFirst(name string, rendered *Rendered, infos kube.ResourceList) bool {
	if c.absent == nil || len(rendered.Hooks) > 0 || len(infos) == 0 {
		return false
	}
	c.inTheWayMu.Lock()
	defer c.inTheWayMu.Unlock()
	return !c.inTheWay[name]
}

// noteInTheWay records whether the last install of release name found an
// object in its way.
func (c *Client) noteInTheWay(name string, found bool) {
	c.inTheWayMu.Lock()
	defer c.inTheWayMu.Unlock()
	switch {
	case found && c.inTheWay == nil:
		c.inTheWay = map[string]bool{name: true}
	case found:
		c.inTheWay[name] = true
	default:
		delete(c.inTheWay, name)
	}
}

// installFresh installs d, a release without any revision, by creating
// its objects straight away: the API server's create is the ownership
// check, and an atomic one. A release's first install sends no read of its
// objects; Helm's own existence checks are answered "absent" by c.absent.
//
// An object that exists fails its create with AlreadyExists. The install
// is then undone (see undoInstall) and installFresh returns an error
// wrapping errInTheWay: the caller checks the objects' owners and deploys
// as it would have without this attempt, and the release reads its
// objects before creating them from then on, so that a conflict that
// stays does not create and delete objects on every retry. Should the
// undo fail or the process die before it ends, the revision left is a
// failed one whose objects are checked before any deployment over it (it
// is no ownership base, see deploy) and which Uninstall deletes only the
// release's own objects of (see spareForeign).
func (c *Client) installFresh(ctx context.Context, cfg *action.Configuration, d deployment, infos kube.ResourceList) (*release.Release, error) {
	marks := c.absent.Mark(infos)
	rel, err := c.install(ctx, cfg, d, false)
	c.absent.Forget(marks)
	if err == nil || !apierrors.IsAlreadyExists(err) {
		return rel, err
	}
	c.noteInTheWay(d.name, true)
	c.log.InfoContext(ctx, "install found an object in its way; undoing it to check the objects' owners",
		slog.String(logkey.Release, d.name), logkey.Err(err))
	if uerr := c.undoInstall(ctx, cfg, d.name); uerr != nil {
		return nil, fmt.Errorf("%w; undoing the install: %w", err, uerr)
	}
	return nil, fmt.Errorf("%w: %w", errInTheWay, err)
}

// undoInstall takes back a first install that failed: it deletes the
// objects the install created, each only while it is the one created
// (same UID), then the failed revision 1 it recorded. Objects go first: a
// record without objects is harmless, objects without a record look like a
// release whose history was lost. It fails when the revision is anything
// but a failed revision 1 of the operator's, which it leaves in place.
func (c *Client) undoInstall(ctx context.Context, cfg *action.Configuration, name string) error {
	if rc, ok := cfg.KubeClient.(kubeclient.Client); ok {
		var errs []error
		for _, info := range rc.Created().Take() {
			if err := objects.DeleteCreated(info); err != nil {
				errs = append(errs, err)
			}
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
	}
	rel, err := lastRelease(cfg, name)
	if err != nil {
		return err
	}
	if rel == nil {
		return nil
	}
	if rel.Version != 1 || rel.Info.Status != release.StatusFailed || rel.Labels[LabelManagedBy] != ManagedByValue {
		return fmt.Errorf("release's last revision is %d, %s: not the failed install to undo", rel.Version, rel.Info.Status)
	}
	if _, err := cfg.Releases.Delete(name, rel.Version); err != nil {
		return fmt.Errorf("delete the record of revision %d: %w", rel.Version, err)
	}
	c.log.DebugContext(ctx, "install undone", slog.String(logkey.Release, name))
	return nil
}
