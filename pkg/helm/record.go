package helm

import (
	"fmt"
	"strconv"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"
)

// recordPrefix starts the name of every storage object of Helm 3's secret
// and configmap drivers: sh.helm.release.v1.<release>.v<revision>.
const recordPrefix = "sh.helm.release.v1."

// Record names the storage object of one revision of a release: a Secret
// (driver "secret") or ConfigMap (driver "configmap") in the release
// namespace. Its labels include LabelModule, so watchers selecting the
// operator's objects by that label see it. The zero Record stands for a
// driver without such objects.
type Record struct {
	APIVersion string
	Kind       string
	Name       string
}

// IsRecord reports whether an object named name of kind is a storage
// record of release rel (any revision), as the Client's driver names them.
func IsRecord(rel, kind, name string) bool {
	if kind != "Secret" && kind != "ConfigMap" {
		return false
	}
	rest, ok := strings.CutPrefix(name, recordPrefix+rel+".v")
	if !ok {
		return false
	}
	_, err := strconv.Atoi(rest)
	return err == nil
}

// record returns the storage object of rel under the Client's driver.
func (c *Client) record(rel *release.Release) Record {
	name := recordPrefix + rel.Name + ".v" + strconv.Itoa(rel.Version)
	switch c.driver {
	case "secret", "secrets":
		return Record{APIVersion: "v1", Kind: "Secret", Name: name}
	case "configmap", "configmaps":
		return Record{APIVersion: "v1", Kind: "ConfigMap", Name: name}
	default:
		return Record{}
	}
}

// labelRecord adds LabelModule to the last revision of a release the
// operator owns when an earlier version of the operator created it
// without, so that its deletion is noticed (see Record).
func labelRecord(cfg *action.Configuration, rel *release.Release) error {
	if rel.Labels[LabelModule] == rel.Name {
		return nil
	}
	if rel.Labels == nil {
		rel.Labels = map[string]string{}
	}
	rel.Labels[LabelModule] = rel.Name
	if err := cfg.Releases.Update(rel); err != nil {
		return fmt.Errorf("label revision %d: %w", rel.Version, err)
	}
	return nil
}
