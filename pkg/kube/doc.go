// Package kube is the ground the Kubernetes-facing packages share: one
// discovery cache and the one Resolver from kinds to resources over it,
// the reader of rendered manifests into objects, YAML stream reading, the
// fold of a Secret's stringData into data, and retries on conflicts. The
// parts that watch and change objects live in its sub-packages: monitor
// (kubernetes bindings), patch (hooks' object operations), heal (deleted
// release objects and records), drift, crd and event.
package kube
