// Package webhook serves admission and conversion webhooks: one HTTPS
// server for hooks' kubernetesValidating, kubernetesMutating and
// kubernetesCustomResourceConversion bindings and for the check of the
// operator's ConfigMap, its certificates, and the webhook configurations
// and CRD conversion settings it owns. The operator hands it a function
// that runs a hook for a request; this package never calls the operator.
package webhook

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/addon-operator/addon-operator/pkg/hook"
)

// RunFunc runs a webhook hook with one binding context and returns what it
// wrote. ctx carries the binding's deadline.
type RunFunc func(ctx context.Context, bc hook.BindingContext) (*hook.Result, error)

// Admission is one admission binding of one hook, with how to run it.
type Admission struct {
	// Owner is the module, or "" for a global hook.
	Owner    string
	Hook     string
	Mutating bool
	Binding  hook.AdmissionBinding
	Run      RunFunc
}

// Conversion is one conversion binding of one hook, with how to run it.
type Conversion struct {
	Owner   string
	Hook    string
	Binding hook.ConversionBinding
	Run     RunFunc
}

// Entries are the webhook bindings of one owner's hooks.
type Entries struct {
	Admission  []Admission
	Conversion []Conversion
}

// ConfigMapCheck checks a ConfigMap's data: err is the reason to deny,
// warnings are returned to the user either way.
type ConfigMapCheck func(data map[string]string) (warnings []string, err error)

// registry holds the webhook bindings being served, by owner, and which
// owners' bindings belong in the configurations. Owners register and
// unregister from the operator's goroutines; the server reads.
type registry struct {
	mu     sync.RWMutex
	owners map[string]Entries
	// configured are the owners whose entries the configurations hold;
	// the others are only served (a standby replica's, a disabled
	// module's).
	configured map[string]bool
}

func newRegistry() *registry {
	return &registry{owners: map[string]Entries{}, configured: map[string]bool{}}
}

// set replaces an owner's entries after checking that no webhook name is
// taken by another owner; configure puts them into the configurations
// (serving only never takes them out).
func (r *registry) set(owner string, e Entries, configure bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for other, oe := range r.owners {
		if other == owner {
			continue
		}
		for i := range e.Admission {
			a := &e.Admission[i]
			for j := range oe.Admission {
				if b := &oe.Admission[j]; a.Mutating == b.Mutating && a.Binding.Name == b.Binding.Name {
					return fmt.Errorf("webhook %q of hook %s is also declared by %s", a.Binding.Name, a.Hook, ownerName(other))
				}
			}
		}
	}
	r.owners[owner] = e
	if configure {
		r.configured[owner] = true
	}
	return nil
}

func (r *registry) remove(owner string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.owners, owner)
	delete(r.configured, owner)
}

// admission finds the admission binding served at name.
func (r *registry) admission(mutating bool, name string) (Admission, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, e := range r.owners {
		for i := range e.Admission {
			if a := &e.Admission[i]; a.Mutating == mutating && a.Binding.Name == name {
				return *a, true
			}
		}
	}
	return Admission{}, false
}

// conversions returns every conversion binding of crd.
func (r *registry) conversions(crd string) []Conversion {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []Conversion
	for _, owner := range slices.Sorted(maps.Keys(r.owners)) {
		convs := r.owners[owner].Conversion
		for i := range convs {
			if convs[i].Binding.CRDName == crd {
				out = append(out, convs[i])
			}
		}
	}
	return out
}

// snapshotWithout returns the configured admission bindings but skip's (owners in name order, then
// configuration order) and the names of CRDs with conversions.
func (r *registry) snapshotWithout(skip string) (admissions []Admission, crds []string) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	seen := map[string]bool{}
	for _, owner := range slices.Sorted(maps.Keys(r.owners)) {
		if owner == skip || !r.configured[owner] {
			continue
		}
		admissions = append(admissions, r.owners[owner].Admission...)
		convs := r.owners[owner].Conversion
		for i := range convs {
			if name := convs[i].Binding.CRDName; !seen[name] {
				seen[name] = true
				crds = append(crds, name)
			}
		}
	}
	slices.Sort(crds)
	return admissions, crds
}

func ownerName(owner string) string {
	if owner == "" {
		return "global hooks"
	}
	return "module " + owner
}

// path returns the URL path of an admission binding.
func admissionPath(mutating bool, name string) string {
	if mutating {
		return "/mutate/" + name
	}
	return "/validate/" + name
}

// conversionPath returns the URL path of a CRD's conversions.
func conversionPath(crd string) string { return "/convert/" + crd }

// configMapPath is the URL path of the ConfigMap check.
const configMapPath = "/configmap"

// crdGroup returns the API group of a CRD named <plural>.<group>.
func crdGroup(crd string) string {
	_, group, _ := strings.Cut(crd, ".")
	return group
}
