// Package kube watches and changes Kubernetes objects: monitors (dynamic
// informers with selectors, jq filters and snapshots) feed kubernetes
// bindings; the patcher applies the object operations hooks write to
// KUBERNETES_PATCH_PATH; the heal watcher reports deleted release objects;
// the drift checker compares live objects with what a release applied;
// CRDs from a module's crds/ are applied; module Events are recorded, and
// held through an API server outage.
package kube
