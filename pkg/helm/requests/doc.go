// Package requests answers or skips requests that Helm's install, upgrade
// and uninstall would send to the API server, where the operator knows the
// answer: existence checks of objects known to be absent (KnownAbsent),
// reads Helm repeats while it patches an object (RepeatedReads), reads of
// a release's history within one operation (OperationStore), and the
// server's capabilities read once per max age rather than per operation
// (Getter). What each relies on in Helm, and what it saves, is in
// docs/helm-requests.md.
package requests
