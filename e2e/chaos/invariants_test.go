package chaos

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/pkg/helm"
)

// revision is one record of Helm's release storage.
type revision struct {
	version int
	status  string
	owned   bool
}

// releases reads Helm's storage Secrets: every release's revisions, by
// release name, in version order.
func (w *world) releases() (map[string][]revision, error) {
	list, err := w.Client.CoreV1().Secrets(w.Namespace).List(w.T.Context(), metav1.ListOptions{LabelSelector: "owner=helm"})
	if err != nil {
		return nil, fmt.Errorf("list release secrets: %w", err)
	}
	out := map[string][]revision{}
	for i := range list.Items {
		labels := list.Items[i].Labels
		v, err := strconv.Atoi(labels["version"])
		if err != nil {
			return nil, fmt.Errorf("release secret %s: version %q: %w", list.Items[i].Name, labels["version"], err)
		}
		out[labels["name"]] = append(out[labels["name"]], revision{
			version: v, status: labels["status"], owned: labels[helm.LabelManagedBy] == helm.ManagedByValue,
		})
	}
	for _, revs := range out {
		slices.SortFunc(revs, func(a, b revision) int { return a.version - b.version })
	}
	return out, nil
}

// pending returns the releases whose last revision is pending, sorted: what
// a process killed during a Helm operation leaves behind.
func pending(rels map[string][]revision) []string {
	var names []string
	for name, revs := range rels {
		if strings.HasPrefix(revs[len(revs)-1].status, "pending-") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// undeployed describes every module whose release's last revision is not
// deployed; empty when all are.
func undeployed(rels map[string][]revision) []string {
	var bad []string
	for _, m := range moduleNames() {
		revs := rels[m]
		if len(revs) == 0 {
			bad = append(bad, m+": no release")
			continue
		}
		if last := revs[len(revs)-1]; last.status != "deployed" {
			bad = append(bad, fmt.Sprintf("%s: revision %d is %s", m, last.version, last.status))
		}
	}
	return bad
}

// historyProblems checks every revision of a converged world's releases:
// only the modules have releases, no revision is pending, exactly one is
// deployed and it is the last, and the last carries the operator's
// ownership label.
func historyProblems(rels map[string][]revision) []string {
	var bad []string
	if got := slices.Sorted(maps.Keys(rels)); !slices.Equal(got, moduleNames()) {
		bad = append(bad, fmt.Sprintf("releases %v, want %v", got, moduleNames()))
	}
	for _, name := range slices.Sorted(maps.Keys(rels)) {
		revs := rels[name]
		var deployed []int
		for _, r := range revs {
			if strings.HasPrefix(r.status, "pending-") {
				bad = append(bad, fmt.Sprintf("%s: revision %d is %s", name, r.version, r.status))
			}
			if r.status == "deployed" {
				deployed = append(deployed, r.version)
			}
		}
		last := revs[len(revs)-1]
		if len(deployed) != 1 || deployed[0] != last.version {
			bad = append(bad, fmt.Sprintf("%s: deployed revisions %v, want only the last, %d", name, deployed, last.version))
		}
		if !last.owned {
			bad = append(bad, fmt.Sprintf("%s: revision %d lacks %s", name, last.version, helm.LabelManagedBy))
		}
	}
	return bad
}

// inventory lists the ConfigMaps and Secrets labelled with a module, as
// "Kind/name (module)", sorted. An object left behind by an interrupted
// operation, or rendered under two names, shows as an extra entry.
func (w *world) inventory() ([]string, error) {
	opts := metav1.ListOptions{LabelSelector: helm.LabelModule}
	var out []string
	cms, err := w.Client.CoreV1().ConfigMaps(w.Namespace).List(w.T.Context(), opts)
	if err != nil {
		return nil, fmt.Errorf("list ConfigMaps: %w", err)
	}
	for i := range cms.Items {
		out = append(out, "ConfigMap/"+cms.Items[i].Name+" ("+cms.Items[i].Labels[helm.LabelModule]+")")
	}
	secrets, err := w.Client.CoreV1().Secrets(w.Namespace).List(w.T.Context(), opts)
	if err != nil {
		return nil, fmt.Errorf("list Secrets: %w", err)
	}
	for i := range secrets.Items {
		out = append(out, "Secret/"+secrets.Items[i].Name+" ("+secrets.Items[i].Labels[helm.LabelModule]+")")
	}
	slices.Sort(out)
	return out, nil
}
