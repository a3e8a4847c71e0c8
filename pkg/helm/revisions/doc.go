// Package revisions reads a release's revisions: its history as the
// operator shows it (what made each revision, how long it took, the
// checksum of its values), the revision Helm upgrades from, and the
// revisions that interrupted upgrades abandoned, with the deletion of the
// objects they left behind (LabelCleanup).
package revisions
