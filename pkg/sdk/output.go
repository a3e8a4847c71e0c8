package sdk

import (
	"strings"
)

// Pointer builds a JSON pointer (RFC 6901) from keys, escaping "~" and
// "/": Pointer("myModule", "a/b") is "/myModule/a~1b".
func Pointer(keys ...string) string {
	var b strings.Builder
	r := strings.NewReplacer("~", "~0", "/", "~1")
	for _, k := range keys {
		b.WriteByte('/')
		b.WriteString(r.Replace(k))
	}
	return b.String()
}

// PatchOp is one RFC 6902 operation.
type PatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// Patch collects JSON patch operations. A module hook may patch only
// /<moduleKey>/...; a global hook /global/... and /<moduleKey>Enabled.
type Patch struct {
	ops []PatchOp
}

// Set adds or replaces the value at path (an "add" operation, which
// creates the last key and replaces an existing one).
func (p *Patch) Set(path string, value any) {
	p.ops = append(p.ops, PatchOp{Op: "add", Path: path, Value: value})
}

// Remove removes the value at path; the operator fails the run when the
// path does not exist.
func (p *Patch) Remove(path string) {
	p.ops = append(p.ops, PatchOp{Op: "remove", Path: path})
}

// Ops returns the operations recorded so far.
func (p *Patch) Ops() []PatchOp { return append([]PatchOp(nil), p.ops...) }

// ObjectRef names an object for the operations that do not carry one.
type ObjectRef struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	// Subresource, e.g. "status", for the patch operations.
	Subresource string
	// IgnoreMissing makes a missing object no error.
	IgnoreMissing bool
}

// ObjectOp is one object operation as written to KUBERNETES_PATCH_PATH.
type ObjectOp struct {
	Operation           string `json:"operation"`
	Object              any    `json:"object,omitempty"`
	APIVersion          string `json:"apiVersion,omitempty"`
	Kind                string `json:"kind,omitempty"`
	Namespace           string `json:"namespace,omitempty"`
	Name                string `json:"name,omitempty"`
	Subresource         string `json:"subresource,omitempty"`
	IgnoreMissingObject bool   `json:"ignoreMissingObject,omitempty"`
	MergePatch          any    `json:"mergePatch,omitempty"`
	JSONPatch           any    `json:"jsonPatch,omitempty"`
	JQFilter            string `json:"jqFilter,omitempty"`
}

// Objects collects object operations; they run in order after the hook
// succeeded, and the first failure fails the run.
type Objects struct {
	ops []ObjectOp
}

// Create creates obj (any value that encodes to a Kubernetes object, such
// as a k8s.io/api struct with TypeMeta set); an existing object fails.
func (o *Objects) Create(obj any) { o.add(ObjectOp{Operation: "Create", Object: obj}) }

// CreateIfNotExists creates obj unless it exists.
func (o *Objects) CreateIfNotExists(obj any) {
	o.add(ObjectOp{Operation: "CreateIfNotExists", Object: obj})
}

// CreateOrUpdate creates obj or replaces the existing one.
func (o *Objects) CreateOrUpdate(obj any) {
	o.add(ObjectOp{Operation: "CreateOrUpdate", Object: obj})
}

// Delete deletes the object and waits for it to be gone (foreground).
func (o *Objects) Delete(ref ObjectRef) { o.add(ref.op("Delete")) }

// DeleteInBackground deletes the object without waiting.
func (o *Objects) DeleteInBackground(ref ObjectRef) { o.add(ref.op("DeleteInBackground")) }

// DeleteNonCascading deletes the object and orphans its dependents.
func (o *Objects) DeleteNonCascading(ref ObjectRef) { o.add(ref.op("DeleteNonCascading")) }

// MergePatch applies a JSON merge patch (RFC 7386) to the object.
func (o *Objects) MergePatch(ref ObjectRef, patch any) {
	op := ref.op("MergePatch")
	op.MergePatch = patch
	o.add(op)
}

// JSONPatch applies RFC 6902 operations to the object.
func (o *Objects) JSONPatch(ref ObjectRef, ops []PatchOp) {
	op := ref.op("JSONPatch")
	op.JSONPatch = ops
	o.add(op)
}

// Ops returns the operations recorded so far.
func (o *Objects) Ops() []ObjectOp { return append([]ObjectOp(nil), o.ops...) }

func (o *Objects) add(op ObjectOp) { o.ops = append(o.ops, op) }

func (r ObjectRef) op(operation string) ObjectOp {
	return ObjectOp{
		Operation: operation, APIVersion: r.APIVersion, Kind: r.Kind, Namespace: r.Namespace,
		Name: r.Name, Subresource: r.Subresource, IgnoreMissingObject: r.IgnoreMissing,
	}
}

// MetricOp is one metric operation as written to METRICS_PATH.
type MetricOp struct {
	Name    string            `json:"name"`
	Action  string            `json:"action"`
	Value   *float64          `json:"value,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	Group   string            `json:"group,omitempty"`
	Buckets []float64         `json:"buckets,omitempty"`
}

// Metrics collects metric operations. The operator adds the hook and
// module labels; a group's new batch replaces its previous series.
type Metrics struct {
	ops []MetricOp
}

// Add adds value to a counter.
func (m *Metrics) Add(name string, value float64, labels map[string]string) {
	m.ops = append(m.ops, MetricOp{Name: name, Action: "add", Value: &value, Labels: labels})
}

// Set sets a gauge.
func (m *Metrics) Set(name string, value float64, labels map[string]string) {
	m.ops = append(m.ops, MetricOp{Name: name, Action: "set", Value: &value, Labels: labels})
}

// Observe records value in a histogram with the given buckets.
func (m *Metrics) Observe(name string, value float64, labels map[string]string, buckets []float64) {
	m.ops = append(m.ops, MetricOp{Name: name, Action: "observe", Value: &value, Labels: labels, Buckets: buckets})
}

// SetInGroup sets a gauge that belongs to group: the group's series are
// replaced as a whole by each run that writes the group.
func (m *Metrics) SetInGroup(group, name string, value float64, labels map[string]string) {
	m.ops = append(m.ops, MetricOp{Name: name, Action: "set", Value: &value, Labels: labels, Group: group})
}

// Expire drops every series of group.
func (m *Metrics) Expire(group string) {
	m.ops = append(m.ops, MetricOp{Action: "expire", Group: group})
}

// Ops returns the operations recorded so far.
func (m *Metrics) Ops() []MetricOp { return append([]MetricOp(nil), m.ops...) }
