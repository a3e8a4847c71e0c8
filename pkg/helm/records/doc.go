// Package records reads and writes Helm's release records (its storage
// Secrets or ConfigMaps) as the operator does: Secrets written with a
// pooled gzip writer, the records' labels listed with one request, the
// releases they list (as Helm's list --all does, by each release's newest
// record) and when each revision's record was last written.
package records
