package rbac

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Verbs the operator needs on what a chart deploys. Helm gets, creates,
// patches and deletes; the operator watches managed kinds to heal them.
// Namespaced objects get every verb in their namespace (names there may
// follow values); cluster-scoped ones get create, list and watch, and the
// rest on their rendered names only.
var (
	allVerbs   = []string{"get", "list", "watch", "create", "update", "patch", "delete"} //nolint:gochecknoglobals // constant
	anyVerbs   = []string{"list", "watch", "create"}                                     //nolint:gochecknoglobals // constant
	namedVerbs = []string{"get", "update", "patch", "delete"}                            //nolint:gochecknoglobals // constant
	readVerbs  = []string{"get", "list", "watch"}                                        //nolint:gochecknoglobals // constant
	// applyVerbs are what a server-side apply by name takes: its create
	// check carries the name, so a rule limited to names allows it.
	applyVerbs = []string{"get", "create", "patch"} //nolint:gochecknoglobals // constant
)

// Compute returns the rules inputs need and warnings about what it had to
// guess. Charts were rendered into releaseNS: objects there, and rules
// declared for namespace "", go to Rules.
func Compute(releaseNS string, inputs []Input) (Rules, []string) {
	var all []map[string]any
	for i := range inputs {
		all = append(all, inputs[i].Objects...)
		all = append(all, inputs[i].CRDs...)
	}
	k := newKinds(all)
	g := newGrants()
	c := &computation{kinds: k, grants: g, releaseNS: releaseNS, roles: roleNames(releaseNS, inputs)}
	for i := range inputs {
		in := &inputs[i]
		c.owner, c.ns = in.Owner, releaseNS
		if in.Namespace != "" {
			c.ns = in.Namespace
			g.add("", resourceKey{"", "namespaces"}, "", "create")
			g.add("", resourceKey{"", "namespaces"}, in.Namespace, "get")
		}
		c.objects(in.Objects)
		for _, o := range in.CRDs {
			md, _ := o["metadata"].(map[string]any)
			name, _ := md["name"].(string)
			g.add("", resourceKey{"apiextensions.k8s.io", "customresourcedefinitions"}, name, applyVerbs...)
		}
		c.watches(in.Watches)
		for _, crd := range in.Conversions {
			g.add("", resourceKey{"apiextensions.k8s.io", "customresourcedefinitions"}, crd, "get", "patch")
		}
		for j := range in.Declared {
			r := &in.Declared[j]
			if len(r.Namespaces) == 0 {
				g.addRule("", r.PolicyRule)
				continue
			}
			for _, ns := range r.Namespaces {
				if ns == "" {
					ns = releaseNS
				}
				g.addRule(ns, r.PolicyRule)
			}
		}
	}
	out := Rules{Rules: g.rules(releaseNS), Namespaces: map[string][]rbacv1.PolicyRule{}, ClusterRules: g.rules("")}
	for _, ns := range slices.Sorted(maps.Keys(g.byPlace)) {
		if ns != "" && ns != releaseNS {
			out.Namespaces[ns] = g.rules(ns)
		}
	}
	slices.Sort(c.warnings)
	return out, slices.Compact(c.warnings)
}

// computation is one Compute call's state.
type computation struct {
	kinds     *kinds
	grants    *grants
	releaseNS string
	// roles are the names of the set's roles: "<namespace>/<name>" for a
	// Role, "<name>" for a ClusterRole.
	roles map[string]bool
	// owner and ns are the input's owner and where its namespace-less
	// objects land.
	owner, ns string
	warnings  []string
}

func (c *computation) warnf(format string, args ...any) {
	c.warnings = append(c.warnings, c.owner+": "+fmt.Sprintf(format, args...))
}

// objects grants what deploying a chart's objects takes.
func (c *computation) objects(objs []map[string]any) {
	for _, o := range objs {
		apiVersion, kind := str(o, "apiVersion"), str(o, "kind")
		key, namespaced, known := c.kinds.resolve(apiVersion, kind)
		if !known {
			c.warnf("%s %s is neither built in nor defined by a CRD of the modules: taken as namespaced", apiVersion, kind)
		}
		md, _ := o["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		ns, _ := md["namespace"].(string)
		if ns == "" {
			ns = c.ns
		}
		if namespaced {
			c.grants.add(ns, key, "", allVerbs...)
		} else {
			c.grants.add("", key, "", anyVerbs...)
			c.grants.add("", key, name, namedVerbs...)
		}
		c.roleRules(o, key, ns)
	}
}

// roleRules grants what creating RBAC objects takes: the API server lets
// a user create a role only with the rights it grants, and bind a role
// only with them or the bind verb on it.
func (c *computation) roleRules(o map[string]any, key resourceKey, ns string) {
	if key.group != rbacv1.GroupName {
		return
	}
	switch key.resource {
	case "roles", "clusterroles":
		var role struct {
			Rules []rbacv1.PolicyRule `json:"rules"`
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o, &role); err != nil {
			c.warnf("%s %v: %v", key.resource, o["metadata"], err)
			return
		}
		place := ns
		if key.resource == "clusterroles" {
			place = ""
		}
		for _, r := range role.Rules {
			c.grants.addRule(place, r)
		}
	case "rolebindings", "clusterrolebindings":
		var binding struct {
			RoleRef rbacv1.RoleRef `json:"roleRef"`
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o, &binding); err != nil {
			c.warnf("%s %v: %v", key.resource, o["metadata"], err)
			return
		}
		ref := binding.RoleRef
		switch {
		case ref.Kind == "ClusterRole" && !c.roles[ref.Name]:
			c.warnf("%s binds ClusterRole %s, which the modules do not define: granted bind on it", key.resource, ref.Name)
			c.grants.add("", resourceKey{rbacv1.GroupName, "clusterroles"}, ref.Name, "bind")
		case ref.Kind == "Role" && !c.roles[ns+"/"+ref.Name]:
			c.warnf("%s binds Role %s/%s, which the modules do not define: granted bind on it", key.resource, ns, ref.Name)
			c.grants.add(ns, resourceKey{rbacv1.GroupName, "roles"}, ref.Name, "bind")
		}
	}
}

// roleNames names the Roles and ClusterRoles the inputs render.
func roleNames(releaseNS string, inputs []Input) map[string]bool {
	names := map[string]bool{}
	for i := range inputs {
		in := &inputs[i]
		for _, o := range in.Objects {
			if !strings.HasPrefix(str(o, "apiVersion"), rbacv1.GroupName+"/") {
				continue
			}
			md, _ := o["metadata"].(map[string]any)
			name, _ := md["name"].(string)
			switch str(o, "kind") {
			case "ClusterRole":
				names[name] = true
			case "Role":
				ns, _ := md["namespace"].(string)
				if ns == "" {
					ns = firstNonEmpty(in.Namespace, releaseNS)
				}
				names[ns+"/"+name] = true
			}
		}
	}
	return names
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// watches grants what hooks' kubernetes bindings read.
func (c *computation) watches(ws []Watch) {
	for _, w := range ws {
		key, namespaced, known := c.kinds.resolve(w.APIVersion, w.Kind)
		if !known {
			c.warnf("watched %s %s is neither built in nor defined by a CRD of the modules: taken as namespaced", w.APIVersion, w.Kind)
		}
		if w.NamespaceLabels {
			c.grants.add("", resourceKey{"", "namespaces"}, "", "list", "watch")
		}
		if !namespaced || len(w.Namespaces) == 0 || w.NamespaceLabels {
			c.grants.add("", key, "", readVerbs...)
			continue
		}
		for _, ns := range w.Namespaces {
			c.grants.add(ns, key, "", readVerbs...)
		}
	}
}
