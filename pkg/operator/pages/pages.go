// Package pages answers the status page's module pages (hooks and
// bindings, recent runs, release revisions, drift, Events, objects with
// their readiness) and converge timeline from what the operator keeps.
package pages

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/addon-operator/addon-operator/pkg/binding"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/kube/readiness"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/release"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// maxRevisions bounds the release revisions a module page lists.
const maxRevisions = 10

// RunLog holds modules' recent runs; *runlog.Log is the real one.
type RunLog interface {
	Runs(module string) []status.Run
	All() []status.ModuleRuns
}

// Pages answers the status page's module pages and converge timeline from
// what the operator keeps: module state with its runs, the releases, and
// the Events it recorded. It only reads them.
type Pages struct {
	modules *module.Set
	// hooks returns a module's loaded hooks.
	hooks    func(name string) []*binding.Hook
	runs     RunLog
	releases *release.Manager
	// events, when it has Recent(module), answers a module's Events.
	events any
	// times returns a module's run times; nil: none known.
	times func(name string) status.RunTimes
}

// New returns the pages of modules, with each module's hooks as hooks
// returns them, its runs from runs, its releases from releases and its
// Events from events (when it keeps them: Recent(module)).
func New(modules *module.Set, hooks func(name string) []*binding.Hook, runs RunLog, releases *release.Manager, events any) *Pages {
	return &Pages{modules: modules, hooks: hooks, runs: runs, releases: releases, events: events}
}

// WithRunTimes returns p answering each module's run times (last run,
// attempts, next retry, next run) as times returns them.
func (p *Pages) WithRunTimes(times func(name string) status.RunTimes) *Pages {
	p.times = times
	return p
}

// ModuleRuns returns every module's recent runs, for the converge
// timeline.
func (p *Pages) ModuleRuns() []status.ModuleRuns { return p.runs.All() }

// ModuleDetail returns what a module's page shows beyond its status: its
// hooks and bindings, recent runs, release revisions, last drift check,
// Events and objects with their readiness. A part that cannot be read is
// named in Errors; the rest is still shown.
func (p *Pages) ModuleDetail(ctx context.Context, name string) (status.ModuleDetail, error) {
	if _, ok := p.modules.Module(name); !ok {
		return status.ModuleDetail{}, fmt.Errorf("no module %q", name)
	}
	d := status.ModuleDetail{Hooks: hookInfos(p.hooks(name)), Runs: p.runs.Runs(name)}
	if p.times != nil {
		d.Times = p.times(name)
	}
	if revs, err := p.releases.History(ctx, name, maxRevisions); err != nil {
		d.Errors = append(d.Errors, "revisions: "+err.Error())
	} else {
		for i := range revs {
			r := &revs[i]
			d.Revisions = append(d.Revisions, status.Revision{Revision: r.Revision, Updated: r.Updated, Status: r.Status, Chart: r.Chart, Description: r.Description})
		}
	}
	if last, ok := p.releases.LastDriftCheck(name); ok {
		dc := &status.DriftCheck{Checked: last.Checked}
		if last.Err != nil {
			dc.Error = last.Err.Error()
		}
		for _, dr := range last.Drifts {
			dc.Objects = append(dc.Objects, status.DriftObject{Object: dr.Object.String(), Fields: dr.Fields, Reverted: last.Reverted})
		}
		d.Drift = dc
	}
	if ev, ok := p.events.(interface {
		Recent(module string) []status.Event
	}); ok {
		d.Events = ev.Recent(name)
	}
	objs, err := p.releases.ObjectStatuses(ctx, name)
	if err != nil {
		d.Errors = append(d.Errors, "objects: "+err.Error())
	}
	for _, n := range objs {
		obj := readiness.Object{Kind: n.Kind, Namespace: n.Namespace, Name: n.Name}
		d.Objects = append(d.Objects, status.ObjectStatus{Object: obj.String(), Status: n.Status, Message: n.Message})
	}
	return d, nil
}

// hookInfos lists hooks with their bindings in words, in the order they
// were loaded.
func hookInfos(hooks []*binding.Hook) []status.HookInfo {
	out := make([]status.HookInfo, 0, len(hooks))
	for _, h := range hooks {
		info := status.HookInfo{Name: h.Name}
		if c := h.Config; c != nil {
			for _, b := range []hook.Binding{hook.OnStartup, hook.BeforeHelm, hook.AfterHelm, hook.BeforeDeleteHelm, hook.AfterDeleteHelm} {
				if order, ok := c.Order(b); ok {
					info.Bindings = append(info.Bindings, status.BindingInfo{Type: string(b), Detail: "order " + strconv.FormatFloat(order, 'g', -1, 64)})
				}
			}
			for i := range c.Kubernetes {
				k := &c.Kubernetes[i]
				info.Bindings = append(info.Bindings, status.BindingInfo{Type: "kubernetes", Name: k.Name, Detail: kubernetesDetail(k)})
			}
			for _, s := range c.Schedules {
				info.Bindings = append(info.Bindings, status.BindingInfo{Type: "schedule", Name: s.Name, Detail: s.Crontab + ", queue " + s.Queue})
			}
			for i := range c.Validating {
				info.Bindings = append(info.Bindings, status.BindingInfo{Type: "kubernetesValidating", Name: c.Validating[i].Name})
			}
			for i := range c.Mutating {
				info.Bindings = append(info.Bindings, status.BindingInfo{Type: "kubernetesMutating", Name: c.Mutating[i].Name})
			}
			for _, cv := range c.Conversions {
				info.Bindings = append(info.Bindings, status.BindingInfo{Type: "kubernetesCustomResourceConversion", Name: cv.Name, Detail: cv.CRDName})
			}
		}
		out = append(out, info)
	}
	return out
}

// kubernetesDetail says what a kubernetes binding watches, in words.
func kubernetesDetail(k *hook.KubernetesBinding) string {
	parts := []string{k.Kind}
	if k.APIVersion != "" {
		parts[0] = k.APIVersion + " " + k.Kind
	}
	if k.Queue != "" {
		parts = append(parts, "queue "+k.Queue)
	}
	return strings.Join(parts, ", ")
}
