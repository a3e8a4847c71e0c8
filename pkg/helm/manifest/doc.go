// Package manifest edits and reads the manifests Helm renders: the
// post-renderer that labels every object of a release (and keeps those
// that nelm's annotations keep), nelm's chart hook delete policies in
// Helm's terms, and whether a manifest extends the API (CRDs,
// APIServices).
package manifest
