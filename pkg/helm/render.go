package helm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"

	"github.com/addon-operator/addon-operator/pkg/helm/manifest"
	"github.com/addon-operator/addon-operator/pkg/helm/modulechart"
)

// checksumLen is the length of Rendered.Checksum: a sha256 in hex cut to
// the 63 characters a label value may hold.
const checksumLen = 63

// Release is what the operator deploys for one module.
type Release struct {
	// Name is the release name: the module name.
	Name string
	// ChartDir is the module directory. It is a chart with or without
	// Chart.yaml (see Client.Render).
	ChartDir string
	// Values are the effective values given to the chart, {global: ...,
	// <moduleKey>: ...}. They must encode as JSON; they are copied, never
	// modified.
	Values map[string]any
	// Namespace is the release's namespace, where its namespaced objects
	// without one land; "" is the Client's. The release records stay in
	// the Client's namespace either way.
	Namespace string
	// HookTimeout bounds how long an install or upgrade waits for each of
	// the chart's Helm hooks (a hook Job to complete); zero is the
	// Client's Options.Timeout, which still bounds the whole operation.
	HookTimeout time.Duration
	// UpgradeOnValuesChange makes the checksum cover Values as well as the
	// rendered manifests: any change of the values then deploys a new
	// revision, and runs the chart's pre-upgrade and post-upgrade hooks,
	// even when the manifests are the same. Without it a values change
	// that renders the same manifests is skipped.
	UpgradeOnValuesChange bool
	// Ahead, when not nil, runs once Apply has rendered the chart and
	// decided to deploy it, before Helm installs or upgrades, with the
	// rendered manifest: it may create objects of the release first,
	// carrying Helm's ownership metadata for it (which the install or
	// upgrade adopts). It returns how many of the release's objects now
	// exist because it created them ahead, in this or an earlier call, and
	// whether Apply must stop there and be called again later
	// (Outcome.Deferred).
	Ahead func(ctx context.Context, manifest string) (ahead int, deferred bool, err error)
}

// Rendered is a release's chart rendered against the cluster.
type Rendered struct {
	// Manifest is the multi-document YAML of the release's objects, as Helm
	// applies it: labelled, without CRDs and chart hooks.
	Manifest string
	// Hooks are the chart hooks' manifests in Helm's order, each starting
	// with a "# Source: <template path>" line. Hooks are not labelled:
	// Helm does not post-render them.
	Hooks []string
	// Checksum identifies Manifest and Hooks together (and the values, for
	// a Release with UpgradeOnValuesChange): a change in a hook alone
	// changes it, so it redeploys. Hex, 63 characters, usable as a label
	// value.
	Checksum string
}

// Render renders the chart in r.ChartDir with r.Values as Helm would
// deploy release r.Name now: with the API server's capabilities
// (.Capabilities.APIVersions and KubeVersion are true to the cluster),
// lookup functions answered by the cluster, and the object labels applied.
// CRDs in crds/ are not rendered: the release skips them. It works whether
// or not the release exists, and always renders as an upgrade to revision 1
// (.Release.IsUpgrade true, .Release.Revision 1), so that the checksum
// depends on the chart, the values and the cluster only, never on the
// release's history; the real install or upgrade renders with the true
// flags and revision.
//
// A module dir without Chart.yaml is a synthesised chart: name = r.Name,
// version 0.1.0, apiVersion v2, made of the dir without crds/, docs/,
// hooks/, images/, lib/, openapi/, the enabled script, hidden entries and
// .helmignore matches. In every chart, top-level keys of r.Values other
// than global replace the same keys of the chart's default values instead
// of being merged with them: the module's values.yaml is the operator's
// static values, already part of r.Values. The chart's global: defaults
// are merged under r.Values' global as Helm merges a values file over a
// chart (see modulechart.Load). The chart's values.schema.json, and its
// subcharts', check the values without the operator's own keys the chart
// does not declare (see modulechart.Validate).
func (c *Client) Render(ctx context.Context, r Release) (*Rendered, error) {
	cfg, err := c.config(ctx, r.Name)
	if err != nil {
		return nil, fmt.Errorf("render release %q: %w", r.Name, err)
	}
	c.inNamespace(cfg, c.releaseNamespace(r))
	return c.render(ctx, cfg, r)
}

// render renders r with a dry-run install in "server" mode (the cluster
// answers capabilities and lookups). A dry run does not refuse an existing
// release name, and IsUpgrade skips its check that the objects exist and
// belong to no other release: rendering asks the cluster only for the
// chart's lookups (capabilities come from the discovery cache); Apply
// checks the ownership of existing objects before it deploys.
func (c *Client) render(ctx context.Context, cfg *action.Configuration, r Release) (*Rendered, error) {
	return renderWith(ctx, cfg, c.releaseNamespace(r), r, func(install *action.Install) { install.DryRunOption = "server" })
}

// renderWith renders r with a dry-run install as an upgrade into
// namespace, without CRDs, labelled; configure picks where capabilities
// and lookups come from.
func renderWith(ctx context.Context, cfg *action.Configuration, namespace string, r Release, configure func(*action.Install)) (*Rendered, error) {
	ch, err := modulechart.Load(r.Name, r.ChartDir, r.Values)
	if err != nil {
		return nil, fmt.Errorf("render release %q: %w", r.Name, err)
	}
	vals, err := modulechart.CopyValues(r.Values)
	if err != nil {
		return nil, fmt.Errorf("render release %q: %w", r.Name, err)
	}
	install := action.NewInstall(cfg)
	install.ReleaseName = r.Name
	install.Namespace = namespace
	install.DryRun = true
	install.IsUpgrade = true
	install.SkipCRDs = true
	install.DisableOpenAPIValidation = true
	install.SkipSchemaValidation = true // modulechart.Validate, below
	install.PostRenderer = manifest.NewLabeler(objectLabels(r.Name))
	configure(install)
	rel, err := install.RunWithContext(ctx, ch, vals)
	// The chart's dependencies are processed now (conditions, aliases), as
	// Helm's own schema check sees them; a schema error explains a failed
	// render better than the template error it caused.
	if schemaErr := modulechart.Validate(ch, r.Values); schemaErr != nil {
		return nil, fmt.Errorf("render release %q: %w", r.Name, schemaErr)
	}
	if err != nil {
		return nil, fmt.Errorf("render release %q: %w", r.Name, err)
	}
	var sumValues map[string]any
	if r.UpgradeOnValuesChange {
		sumValues = r.Values
	}
	return newRendered(rel.Manifest, rel.Hooks, sumValues)
}

// objectLabels are the labels set on every object of release name. All keys are
// under the operator's prefix: a chart's own labels (heritage,
// app.kubernetes.io/managed-by...) are never overwritten, and keys under
// the prefix are the operator's, whatever a chart sets.
func objectLabels(name string) map[string]string {
	return map[string]string{LabelManagedBy: ManagedByValue, LabelModule: name}
}

// newRendered returns the rendered manifests with their checksum, which
// covers values too unless they are nil.
func newRendered(text string, hooks []*release.Hook, values map[string]any) (*Rendered, error) {
	r := &Rendered{Manifest: text, Hooks: make([]string, 0, len(hooks))}
	sum := sha256.New()
	sum.Write([]byte(text))
	for _, h := range hooks {
		doc := "# Source: " + h.Path + "\n" + h.Manifest
		r.Hooks = append(r.Hooks, doc)
		sum.Write([]byte("\n---\n"))
		sum.Write([]byte(doc))
	}
	if values != nil {
		raw, err := json.Marshal(values) // map keys sorted: canonical
		if err != nil {
			return nil, fmt.Errorf("encode values: %w", err)
		}
		sum.Write([]byte("\n--- values\n"))
		sum.Write(raw)
	}
	r.Checksum = hex.EncodeToString(sum.Sum(nil))[:checksumLen]
	return r, nil
}
