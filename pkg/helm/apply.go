package helm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"

	"github.com/addon-operator/addon-operator/pkg/helm/kubeclient"
	"github.com/addon-operator/addon-operator/pkg/helm/manifest"
	"github.com/addon-operator/addon-operator/pkg/helm/modulechart"
	"github.com/addon-operator/addon-operator/pkg/helm/objects"
	"github.com/addon-operator/addon-operator/pkg/helm/revisions"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// Reason names why Apply deployed a release.
type Reason string

// Reasons for a deployment, checked in this order.
const (
	// ReasonNoRelease: the release has no revision yet.
	ReasonNoRelease Reason = "no-release"
	// ReasonNotDeployed: the last revision is not deployed (failed, pending,
	// uninstalled...).
	ReasonNotDeployed Reason = "not-deployed"
	// ReasonChecksumChanged: the rendered manifests differ from the ones the
	// last revision was deployed from.
	ReasonChecksumChanged Reason = "checksum-changed"
	// ReasonObjectMissing: an object of the rendered manifest is absent from
	// the cluster.
	ReasonObjectMissing Reason = "object-missing"
)

// Outcome is what Apply did.
type Outcome struct {
	// Revision is the release's revision after Apply: the new one, or the
	// current one when Skipped.
	Revision int
	// Checksum is the rendered manifests' checksum, now stored on the
	// release (Rendered.Checksum).
	Checksum string
	// Skipped reports that the release was up to date and nothing was
	// deployed.
	Skipped bool
	// Reason is why the release was deployed; empty when Skipped.
	Reason Reason
	// Missing names the first absent object, as kind/namespace/name (or
	// kind/name for a cluster-scoped kind), when Reason is
	// ReasonObjectMissing.
	Missing string
	// Recovered reports that the last revision had been left pending (or
	// uninstalling, or unknown) by an interrupted operation and was marked
	// failed before upgrading.
	Recovered bool
	// Manifest is the objects of the release's revision in force (the
	// new one, or the current one when Skipped), as Helm stored them: what
	// the cluster holds for it, for healing and drift checks. Unlike
	// Rendered.Manifest it is rendered with the revision's true
	// .Release.Revision and .Release.IsInstall.
	Manifest string
	// HistoryLost reports that the release was installed although objects
	// carrying its ownership annotations existed: its records had been
	// deleted, and with them its history.
	HistoryLost bool
	// Fresh reports an install that created every object of the release:
	// none existed before, so none can differ from the manifest yet.
	Fresh bool
	// Created are the objects Helm created in one batch during the
	// operation, at the versions the API server created them with: an
	// install's objects, and chart hooks' objects of any operation (an
	// upgrade creates its new release objects one by one, not listed).
	Created []kubeclient.CreatedObject
	// Deferred reports that Release.Ahead asked Apply to stop before
	// Helm's install or upgrade: no revision was made.
	Deferred bool
	// Rendered is the chart as Apply rendered it, set once rendering
	// succeeded, also when Apply fails after: the API server's errors may
	// quote the values of its Secrets.
	Rendered *Rendered
}

// Apply installs or upgrades release r so that the cluster matches its
// rendered chart (see Render), unless it already does.
//
// It skips (Outcome.Skipped, no new revision) when the last revision is
// deployed, its LabelChecksum equals the new checksum, and every object of
// the rendered manifest exists. Otherwise it installs (no revision yet, or
// the last one is uninstalled) or upgrades. A last revision left
// pending-install, pending-upgrade, pending-rollback, uninstalling or
// unknown by an interrupted operation is first marked failed, which is how
// Helm itself records an operation that did not complete; Helm then
// upgrades from the last deployed revision (or from the marked one, which
// ends superseded, when none was ever deployed). Outcome.Recovered tells.
// After upgrading over a revision that is not deployed (recovered or
// failed), Apply deletes the objects that the revisions after the last
// deployed one created and the new one no longer renders, if they still
// carry Helm's ownership annotations for this release; Helm's upgrade,
// which diffs against the last deployed revision only, would leave them.
// If that deletion fails, the new revision is marked failed so that the
// next Apply retries.
//
// Every revision carries LabelManagedBy and LabelChecksum; every object carries LabelManagedBy and LabelModule. A release of r.Name
// whose last revision lacks LabelManagedBy was not created by the
// operator: Apply refuses it with a *ForeignReleaseError, unless
// Options.AdoptUnlabeledReleases, when it upgrades it and so owns it from
// then on. Existing objects that the chart renders and Helm would create
// are checked: those of another release or of none are refused with an
// *objects.OwnershipConflictError and left untouched, unless handed over
// (objects.AnnotationAdopt, Options.AdoptObjects); see objects.Claim. An upgrade
// checks them before deploying; a first install creates them and checks
// only when a create finds one in its way, after undoing itself (see
// installFresh).
// Objects that carry this release's ownership (its records were deleted)
// are taken back; Outcome.HistoryLost tells.
// Release.Ahead, when set, runs once Apply has decided to deploy, before
// the install or upgrade, and may defer it (Outcome.Deferred).
// CRDs are skipped. Apply waits for chart hooks, not for workloads to
// become ready: for each hook up to r.HookTimeout (Options.Timeout when
// zero). A hook Job that fails or does not complete in that time, or is
// still awaited when the call ends, fails Apply with a *kubeclient.HookError that
// names it and gives its last condition. Options.Timeout bounds the whole
// call. When ctx ends, Apply
// returns and Helm records the revision failed (its own goroutine may still
// finish applying objects); the next Apply upgrades over it.
func (c *Client) Apply(ctx context.Context, r Release) (Outcome, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cfg, err := c.config(ctx, r.Name)
	if err != nil {
		return Outcome{}, fmt.Errorf("apply release %q: %w", r.Name, err)
	}
	c.inNamespace(cfg, c.releaseNamespace(r))
	last, err := lastRelease(cfg, r.Name)
	if err != nil {
		return Outcome{}, err
	}
	if err := c.claimRelease(ctx, last); err != nil {
		return Outcome{}, fmt.Errorf("apply release %q: %w", r.Name, err)
	}
	if err := revisions.NewCleaner(c.log, c.namespace).Resume(ctx, cfg, last); err != nil {
		return Outcome{}, fmt.Errorf("apply release %q: %w", r.Name, err)
	}
	rendered, err := c.render(ctx, cfg, r)
	if err != nil {
		return Outcome{}, err
	}
	reason, missing, err := deployReason(statusPtr(last), rendered.Checksum, func() (string, error) {
		return objects.FirstMissing(ctx, cfg, rendered.Manifest, c.watched)
	})
	if err != nil {
		return Outcome{Rendered: rendered}, fmt.Errorf("apply release %q: %w", r.Name, err)
	}
	out := Outcome{Checksum: rendered.Checksum, Reason: reason, Missing: missing, Rendered: rendered}
	if reason == "" {
		out.Skipped, out.Revision, out.Manifest = true, last.Version, last.Manifest
		c.log.DebugContext(ctx, "release up to date", slog.String(logkey.Release, r.Name), slog.Duration(logkey.Duration, time.Since(start)))
		return out, nil
	}
	ahead := 0
	if r.Ahead != nil {
		var deferred bool
		ahead, deferred, err = r.Ahead(ctx, rendered.Manifest)
		if err != nil {
			return out, fmt.Errorf("apply release %q: %w", r.Name, err)
		}
		if deferred {
			out.Deferred = true
			return out, nil
		}
	}
	rel, recovered, own, fresh, err := c.deploy(ctx, cfg, r, last, rendered, ahead)
	if manifest.ExtendsAPI(rendered.Manifest) || (last != nil && manifest.ExtendsAPI(last.Manifest)) {
		c.refreshDiscovery() // kinds may have come or gone, even on failure
	}
	out.Recovered = recovered
	if err != nil {
		return out, fmt.Errorf("apply release %q: %w", r.Name, err)
	}
	out.Revision, out.Manifest, out.Fresh = rel.Version, rel.Manifest, fresh
	if rc, ok := cfg.KubeClient.(kubeclient.Client); ok {
		out.Created = rc.Created().Objects()
	}
	if last == nil && own > ahead {
		out.HistoryLost = true
		c.log.WarnContext(ctx, "release records were deleted while its objects remained, history is lost; installed anew",
			slog.String(logkey.Release, r.Name), slog.Int(logkey.Count, own-ahead))
	}
	c.log.DebugContext(ctx, "release deployed", slog.String(logkey.Release, r.Name), slog.Duration(logkey.Duration, time.Since(start)))
	return out, nil
}

// deployment is what an install or upgrade of one release sends to Helm.
type deployment struct {
	name      string
	namespace string
	chart     *chart.Chart
	values    map[string]any
	labels    map[string]string // release labels
	post      manifest.Labeler
	// hookTimeout bounds the wait for each chart hook.
	hookTimeout time.Duration
}

// deploy runs the Helm operation planDeploy chooses for last, after
// recovering an interrupted revision and claiming the existing objects the
// release renders (see claimObjects; a first install claims them only when
// one is in its way, see installFresh). It reports whether it recovered, how
// many existing objects already carried the release's ownership, and
// whether it installed with every object created anew. ahead objects of
// the release were created before it by Release.Ahead: a first install
// then checks its objects before creating them.
func (c *Client) deploy(ctx context.Context, cfg *action.Configuration, r Release, last *release.Release, rendered *Rendered, ahead int) (*release.Release, bool, int, bool, error) {
	d, err := newDeployment(r, rendered.Checksum)
	if err != nil {
		return nil, false, 0, false, err
	}
	d.namespace = c.releaseNamespace(r)
	d.hookTimeout = c.timeout
	if r.HookTimeout > 0 {
		d.hookTimeout = r.HookTimeout
	}
	step := planDeploy(statusPtr(last))
	if step == stepRecover {
		c.log.InfoContext(ctx, "recover interrupted release", slog.String(logkey.Release, r.Name))
		last.SetStatus(release.StatusFailed, fmt.Sprintf("interrupted while %s; marked failed by addon-operator", last.Info.Status))
		if err := cfg.Releases.Update(last); err != nil {
			return nil, false, 0, false, fmt.Errorf("mark interrupted revision %d failed: %w", last.Version, err)
		}
	}
	base, err := revisions.Base(cfg, last)
	if err != nil {
		return nil, step == stepRecover, 0, false, err
	}
	infos, err := cfg.KubeClient.Build(strings.NewReader(rendered.Manifest), false)
	if err != nil {
		return nil, step == stepRecover, 0, false, fmt.Errorf("build rendered objects: %w", err)
	}
	if c.reads != nil {
		defer c.reads.Forget(c.reads.Mark(infos))
	}
	if step == stepInstall && ahead == 0 && c.createsFirst(r.Name, rendered, infos) {
		rel, err := c.installFresh(ctx, cfg, d, infos)
		if !errors.Is(err, errInTheWay) {
			return rel, false, 0, err == nil, err
		}
		// Undone: the release has no revision again, and is deployed as
		// any other below, its objects checked first.
	}
	// A revision that never deployed is no evidence of ownership: its
	// manifest may name objects that its creates found in their way.
	ownershipBase := base
	if base != nil && base.Info.Status != release.StatusDeployed {
		ownershipBase = nil
	}
	claimed, err := c.claimObjects(ctx, cfg, objects.Owner{Release: r.Name, Namespace: d.namespace}, infos, ownershipBase)
	if err != nil {
		return nil, step == stepRecover, 0, false, err
	}
	if c.absent != nil {
		defer c.absent.Forget(c.absent.Mark(claimed.Absent))
	}
	var rel *release.Release
	switch step {
	case stepInstall, stepReinstall:
		rel, err = c.install(ctx, cfg, d, step == stepReinstall)
	default:
		rel, err = c.upgradeOver(ctx, cfg, d, last)
	}
	fresh := err == nil && base == nil && claimed.Existing == 0 // ahead > 0 made some exist
	if err == nil {
		c.noteInTheWay(r.Name, false)
	}
	return rel, step == stepRecover, claimed.Own, fresh, err
}

func newDeployment(r Release, checksum string) (deployment, error) {
	ch, err := modulechart.Load(r.Name, r.ChartDir, r.Values)
	if err != nil {
		return deployment{}, err
	}
	vals, err := modulechart.CopyValues(r.Values)
	if err != nil {
		return deployment{}, err
	}
	return deployment{
		name:   r.Name,
		chart:  ch,
		values: vals,
		labels: map[string]string{LabelManagedBy: ManagedByValue, LabelChecksum: checksum},
		post:   manifest.NewLabeler(objectLabels(r.Name)),
	}, nil
}

// upgradeOver upgrades d over last, the release's last revision. When last
// is not deployed (failed, or just marked failed by a recovery), it then
// deletes the objects that the revisions after the last deployed one left
// behind (see revisions.Cleaner). Should that fail, the new revision is
// marked failed, so the next Apply upgrades again and retries instead of
// skipping a release whose cluster state is not its manifest.
func (c *Client) upgradeOver(ctx context.Context, cfg *action.Configuration, d deployment, last *release.Release) (*release.Release, error) {
	var left []*release.Release
	if last.Info.Status != release.StatusDeployed {
		var err error
		if left, err = revisions.ReadAbandoned(cfg, d.name); err != nil {
			return nil, err
		}
	}
	// The new revision records what it must delete until it has, so that
	// a kill before the deletion does not leave the objects for ever; with
	// nothing to delete, a marker merged from the last revision is dropped.
	d.labels = maps.Clone(d.labels)
	d.labels[revisions.LabelCleanup] = revisions.Range(left)
	rel, err := c.upgrade(ctx, cfg, d)
	if err != nil {
		return nil, err
	}
	if err := revisions.NewCleaner(c.log, c.namespace).Run(ctx, cfg, rel, left); err != nil {
		rel.SetStatus(release.StatusFailed, fmt.Sprintf("upgraded, but objects left by interrupted revisions were not deleted: %v", err))
		if uerr := cfg.Releases.Update(rel); uerr != nil {
			err = errors.Join(err, fmt.Errorf("mark revision %d failed: %w", rel.Version, uerr))
		}
		return nil, fmt.Errorf("clean up after interrupted revisions: %w", err)
	}
	return rel, nil
}

// install installs d; replace installs over a history whose last revision
// is uninstalled.
func (c *Client) install(ctx context.Context, cfg *action.Configuration, d deployment, replace bool) (*release.Release, error) {
	install := action.NewInstall(cfg)
	install.ReleaseName = d.name
	install.Namespace = d.namespace
	install.Replace = replace
	install.Timeout = d.hookTimeout
	install.SkipCRDs = true
	install.DisableOpenAPIValidation = true // see upgrade
	install.SkipSchemaValidation = true     // checked by the render before, see modulechart.Validate
	install.Labels = d.labels
	install.PostRenderer = d.post
	hooks := hooksOf(cfg, "install")
	rel, err := install.RunWithContext(ctx, d.chart, d.values)
	if err != nil {
		return nil, fmt.Errorf("install: %w", blameHook(ctx, hooks, err))
	}
	return rel, nil
}

// hooksOf returns the notes of cfg's kube client on the chart hooks it
// waits for, now for operation op; nil when it takes none.
func hooksOf(cfg *action.Configuration, op string) *kubeclient.HookWaits {
	rc, ok := cfg.KubeClient.(kubeclient.Client)
	if !ok || rc.Hooks() == nil {
		return nil
	}
	rc.Hooks().SetOperation(op)
	return rc.Hooks()
}

// blameHook returns err, or, when a chart hook made the operation fail, a
// *kubeclient.HookError that names it and wraps err.
func blameHook(ctx context.Context, hooks *kubeclient.HookWaits, err error) error {
	if he := hooks.Explain(ctx, err); he != nil {
		return he
	}
	return err
}

func (c *Client) upgrade(ctx context.Context, cfg *action.Configuration, d deployment) (*release.Release, error) {
	upgrade := action.NewUpgrade(cfg)
	upgrade.Install = true
	upgrade.Namespace = d.namespace
	upgrade.MaxHistory = c.historyMax
	upgrade.Timeout = d.hookTimeout
	upgrade.ResetValues = true // values are always complete; never reuse the last ones
	upgrade.SkipCRDs = true
	// Helm's client-side validation only asks the server's OpenAPI (two
	// requests and a large decode per operation) whether the server
	// validates fields itself, which every supported version does; the
	// server then reports unknown fields as warnings, logged by client-go.
	upgrade.DisableOpenAPIValidation = true
	upgrade.SkipSchemaValidation = true // checked by the render before, see modulechart.Validate
	// A failure while the process lives deletes the objects it created.
	upgrade.CleanupOnFail = true
	upgrade.Labels = d.labels // merged by Helm into the last revision's labels
	upgrade.PostRenderer = d.post
	hooks := hooksOf(cfg, "upgrade")
	helmCtx, stop := upgradeContext(ctx)
	rel, err := upgrade.RunWithContext(helmCtx, d.name, d.chart, d.values)
	stop()
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		err = ctx.Err() // helmCtx ended because ctx did: say why
	}
	if err != nil {
		return nil, fmt.Errorf("upgrade: %w", blameHook(ctx, hooks, err))
	}
	return rel, nil
}

// upgradeContext returns the context for Helm's upgrade: it ends when ctx
// ends, until stop is called, and never after. Helm's upgrade watches its
// context in a goroutine which, if it first runs once the upgrade has
// returned and the context has ended, picks at random between the two and
// may mark the revision just deployed failed (then blocks for ever); Apply
// ends ctx as soon as it returns.
func upgradeContext(ctx context.Context) (context.Context, func() bool) {
	helmCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	return helmCtx, context.AfterFunc(ctx, cancel)
}

func statusPtr(rel *release.Release) *Status {
	if rel == nil {
		return nil
	}
	s := statusOf(rel)
	return &s
}
