package rbac

import (
	"maps"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// Rules are the rules a module set needs, by where they apply.
type Rules struct {
	// Rules apply in the release namespace (the operator's), where
	// namespace-less objects of charts land.
	Rules []rbacv1.PolicyRule `json:"rules"`
	// Namespaces are the rules in other namespaces, by namespace.
	Namespaces map[string][]rbacv1.PolicyRule `json:"namespaces"`
	// ClusterRules apply cluster-wide: cluster-scoped kinds, and kinds
	// watched in every namespace.
	ClusterRules []rbacv1.PolicyRule `json:"clusterRules"`
}

// verbOrder is the order verbs are written in; others follow, sorted.
var verbOrder = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"} //nolint:gochecknoglobals // a constant table

// resourceKey is one resource of one API group.
type resourceKey struct{ group, resource string }

// grants collect verbs by place ("" cluster-wide, else a namespace),
// resource and object name ("" any name).
type grants struct {
	byPlace map[string]map[resourceKey]map[string]map[string]bool
	// urls are non-resource URLs and their verbs, cluster-wide.
	urls map[string]map[string]bool
}

func newGrants() *grants {
	return &grants{byPlace: map[string]map[resourceKey]map[string]map[string]bool{}, urls: map[string]map[string]bool{}}
}

// add grants verbs on a resource at place, on the named object or, for
// name "", on every object.
func (g *grants) add(place string, k resourceKey, name string, verbs ...string) {
	res := g.byPlace[place]
	if res == nil {
		res = map[resourceKey]map[string]map[string]bool{}
		g.byPlace[place] = res
	}
	names := res[k]
	if names == nil {
		names = map[string]map[string]bool{}
		res[k] = names
	}
	set := names[name]
	if set == nil {
		set = map[string]bool{}
		names[name] = set
	}
	for _, v := range verbs {
		set[v] = true
	}
}

// addRule grants a PolicyRule at place.
func (g *grants) addRule(place string, r rbacv1.PolicyRule) {
	for _, u := range r.NonResourceURLs {
		set := g.urls[u]
		if set == nil {
			set = map[string]bool{}
			g.urls[u] = set
		}
		for _, v := range r.Verbs {
			set[v] = true
		}
	}
	names := r.ResourceNames
	if len(names) == 0 {
		names = []string{""}
	}
	for _, group := range r.APIGroups {
		for _, res := range r.Resources {
			for _, n := range names {
				g.add(place, resourceKey{group, res}, n, r.Verbs...)
			}
		}
	}
}

// rules compacts the grants at place into PolicyRules: verbs granted on
// every object drop from the named ones; resources of one group with the
// same verbs and names share a rule.
func (g *grants) rules(place string) []rbacv1.PolicyRule {
	type shape struct{ group, verbs, names string }
	merged := map[shape]*rbacv1.PolicyRule{}
	for k, names := range g.byPlace[place] {
		anyVerbs := names[""]
		byVerbs := map[string][]string{}
		for name, verbs := range names {
			if name == "" {
				continue
			}
			var left []string
			for v := range verbs {
				if !anyVerbs[v] && !anyVerbs["*"] {
					left = append(left, v)
				}
			}
			if len(left) > 0 {
				key := strings.Join(sortVerbs(left), ",")
				byVerbs[key] = append(byVerbs[key], name)
			}
		}
		if len(anyVerbs) > 0 {
			key := strings.Join(sortVerbs(slices.Collect(maps.Keys(anyVerbs))), ",")
			byVerbs[key] = append(byVerbs[key], "")
		}
		for verbs, ns := range byVerbs {
			var named []string
			for _, n := range ns {
				if n == "" {
					s := shape{k.group, verbs, ""}
					merged[s] = mergeInto(merged[s], k, verbs, nil)
				} else {
					named = append(named, n)
				}
			}
			if len(named) > 0 {
				slices.Sort(named)
				s := shape{k.group, verbs, strings.Join(named, ",")}
				merged[s] = mergeInto(merged[s], k, verbs, named)
			}
		}
	}
	out := make([]rbacv1.PolicyRule, 0, len(merged))
	for _, r := range merged {
		slices.Sort(r.Resources)
		out = append(out, *r)
	}
	if place == "" {
		byVerbs := map[string][]string{}
		for u, verbs := range g.urls {
			key := strings.Join(sortVerbs(slices.Collect(maps.Keys(verbs))), ",")
			byVerbs[key] = append(byVerbs[key], u)
		}
		for verbs, urls := range byVerbs {
			slices.Sort(urls)
			out = append(out, rbacv1.PolicyRule{NonResourceURLs: urls, Verbs: strings.Split(verbs, ",")})
		}
	}
	slices.SortFunc(out, compareRules)
	return out
}

func mergeInto(r *rbacv1.PolicyRule, k resourceKey, verbs string, names []string) *rbacv1.PolicyRule {
	if r == nil {
		r = &rbacv1.PolicyRule{APIGroups: []string{k.group}, Verbs: strings.Split(verbs, ","), ResourceNames: names}
	}
	r.Resources = append(r.Resources, k.resource)
	return r
}

// compareRules orders rules by group, first resource, names, verbs;
// non-resource rules last.
func compareRules(a, b rbacv1.PolicyRule) int {
	key := func(r rbacv1.PolicyRule) string {
		if len(r.NonResourceURLs) > 0 {
			return "\xff" + strings.Join(r.NonResourceURLs, ",")
		}
		return strings.Join(r.APIGroups, ",") + "\x00" + strings.Join(r.Resources, ",") + "\x00" + strings.Join(r.ResourceNames, ",") + "\x00" + strings.Join(r.Verbs, ",")
	}
	return strings.Compare(key(a), key(b))
}

// sortVerbs sorts verbs in verbOrder, unknown ones after, alphabetically.
func sortVerbs(verbs []string) []string {
	rank := func(v string) int {
		if i := slices.Index(verbOrder, v); i >= 0 {
			return i
		}
		return len(verbOrder)
	}
	slices.SortFunc(verbs, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	return verbs
}
