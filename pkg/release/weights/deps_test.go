package weights

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// obj is a manifest document of kind and name with annotations.
func obj(apiVersion, kind, name, namespace string, annotations map[string]string) string {
	doc := "---\napiVersion: " + apiVersion + "\nkind: " + kind + "\nmetadata:\n  name: " + name + "\n"
	if namespace != "" {
		doc += "  namespace: " + namespace + "\n"
	}
	if len(annotations) > 0 {
		doc += "  annotations:\n"
		for k, v := range annotations {
			doc += "    " + k + ": \"" + v + "\"\n"
		}
	}
	return doc
}

func dep(id, value string) map[string]string {
	return map[string]string{DependencyPrefix + id: value}
}

func TestGroupsWithDeployDependencies(t *testing.T) {
	db := obj("apps/v1", "StatefulSet", "db", "", nil)
	for _, tt := range []struct {
		name     string
		manifest string
		want     [][]string
	}{
		{"after its dependency, in a group of its own",
			obj("apps/v1", "Deployment", "app", "", dep("db", "state=ready,kind=StatefulSet,name=db")) + db + cm("other", ""),
			[][]string{{"0", "db", "other"}, {"0+1", "app"}}},
		{"a dependency takes precedence over the object's weight",
			obj("apps/v1", "Deployment", "app", "", map[string]string{Annotation: "-20", DependencyPrefix + "db": "state=ready,name=db"}) + db + cm("late", "10"),
			[][]string{{"0", "db"}, {"0+1", "app"}, {"10", "late"}}},
		{"after the latest of several, chains deepen",
			obj("v1", "Service", "api", "", dep("app", "state=present,kind=Deployment,name=app")) +
				obj("apps/v1", "Deployment", "app", "", map[string]string{DependencyPrefix + "db": "state=ready,kind=StatefulSet,name=db", DependencyPrefix + "cm": "state=ready,kind=ConfigMap,name=late"}) +
				db + cm("late", "10"),
			[][]string{{"0", "db"}, {"10", "late"}, {"10+1", "app"}, {"10+2", "api"}}},
		{"group, version and the release namespace match; another namespace does not",
			obj("apps/v1", "Deployment", "app", "", dep("db", "state=ready,kind=StatefulSet,group=apps,version=v1,name=db,namespace=ns")) +
				obj("apps/v1", "StatefulSet", "db", "ns", nil) + obj("apps/v1", "StatefulSet", "db", "elsewhere", nil),
			[][]string{{"0", "db", "db"}, {"0+1", "app"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			groups, err := Groups(tt.manifest, "ns")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, stageNames(groups)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// stageNames returns each group as "weight[+depth]" and its objects'
// names.
func stageNames(groups []Group) [][]string {
	out := names(groups)
	for i, g := range groups {
		if g.Depth > 0 {
			out[i][0] += "+" + strconv.Itoa(g.Depth)
		}
	}
	return out
}

func TestGroupsRefuseDependenciesThatCannotBeKept(t *testing.T) {
	for _, tt := range []struct {
		name, manifest, want string
	}{
		{"no state", obj("v1", "ConfigMap", "a", "", dep("x", "name=b")) + cm("b", ""),
			`ConfigMap a: annotation werf.io/deploy-dependency-x: "name=b": state "" is neither ready nor present`},
		{"unknown key", obj("v1", "ConfigMap", "a", "", dep("x", "state=ready,nme=b")) + cm("b", ""),
			`unknown key "nme"`},
		{"matches nothing", obj("v1", "ConfigMap", "a", "", dep("x", "state=ready,kind=Secret,name=b")) + cm("b", ""),
			`ConfigMap a: annotation werf.io/deploy-dependency-x: "state=ready,kind=Secret,name=b": no object of the release matches it`},
		{"a cycle",
			obj("v1", "ConfigMap", "a", "", dep("x", "state=ready,name=b")) + obj("v1", "ConfigMap", "b", "", dep("y", "state=ready,name=c")) + obj("v1", "ConfigMap", "c", "", dep("z", "state=ready,name=a")),
			`the objects depend on each other in a cycle: ConfigMap a -> ConfigMap b -> ConfigMap c -> ConfigMap a`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Groups(tt.manifest, "ns")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			var invalid *InvalidError
			var cycle *CycleError
			if !errors.As(err, &invalid) && !errors.As(err, &cycle) {
				t.Errorf("error %T is neither an *InvalidError nor a *CycleError", err)
			}
		})
	}
}
