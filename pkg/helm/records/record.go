package records

import (
	"strconv"
	"strings"
)

// recordPrefix starts the name of every storage object of Helm 3's secret
// and configmap drivers: sh.helm.release.v1.<release>.v<revision>.
const recordPrefix = "sh.helm.release.v1."

// IsRecord reports whether an object named name of kind is a storage
// record (a revision's Secret or ConfigMap) of release rel.
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
