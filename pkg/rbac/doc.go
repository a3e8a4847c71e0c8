// Package rbac computes the Kubernetes RBAC rules a module set needs: the
// rights to deploy what its charts render, to watch what its hooks bind to,
// to set the conversion of the CRDs its hooks convert, and the writes its
// module.yaml files declare for hooks, grouped by where they apply (the
// operator's namespace, other namespaces, cluster-wide). It is a pure
// function of what the caller read from disk.
package rbac
