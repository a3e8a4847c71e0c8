package operator

import (
	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/kube"
	"github.com/addon-operator/addon-operator/pkg/module"
)

// Sources of the redactor's values, by module.
const (
	redactValuesGlobal = "values/global"
	redactValues       = "values/"
	redactRelease      = "release/"
)

// learnValues tells the redactor the values of the global section and of
// module m (nil: only global) that their schemas mark sensitive. Module
// runs call it first, so that whatever the run's errors quote of them is
// redacted.
func (o *Operator) learnValues(m *module.Module) {
	if o.redactor == nil {
		return
	}
	o.redactor.Set(redactValuesGlobal, o.store.Sensitive(nil))
	if m != nil {
		o.redactor.Set(redactValues+m.Name(), o.store.Sensitive(m))
	}
}

// learnRendered tells the redactor the values of the Secrets of a
// module's rendered chart, objects and chart hooks, before its deploy's
// errors are shown anywhere.
func (o *Operator) learnRendered(name string, r *helm.Rendered) {
	if o.redactor == nil {
		return
	}
	vals := kube.SecretValues(r.Manifest)
	for _, h := range r.Hooks {
		vals = append(vals, kube.SecretValues(h)...)
	}
	o.redactor.Set(redactRelease+name, vals)
}
