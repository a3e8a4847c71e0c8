package module

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func exclusiveSet(t *testing.T) *Set {
	t.Helper()
	_, set, _, err := discoverTree(t, map[string]node{
		"m/010-cni-a/module.yaml": file("exclusiveGroup: cni\n"),
		"m/020-cni-b/module.yaml": file("exclusiveGroup: cni\n"),
		"m/030-cni-c/module.yaml": file("exclusiveGroup: cni\n"),
		"m/040-other":             dir(),
	}, Options{ModulesDirs: []string{"m"}})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestExclusiveLosers(t *testing.T) {
	set := exclusiveSet(t)
	all := []string{"cni-a", "cni-b", "cni-c", "other"}
	if diff := cmp.Diff(map[string]string{"cni-b": "cni-a", "cni-c": "cni-a"}, set.ExclusiveLosers(all, nil)); diff != "" {
		t.Errorf("first in module order stays (-want +got):\n%s", diff)
	}
	got := set.ExclusiveLosers(all, map[string]bool{"cni-c": true, "other": true})
	if diff := cmp.Diff(map[string]string{"cni-a": "cni-c", "cni-b": "cni-c"}, got); diff != "" {
		t.Errorf("the module enabled before stays (-want +got):\n%s", diff)
	}
	if got := set.ExclusiveLosers([]string{"cni-b", "other"}, nil); len(got) != 0 {
		t.Errorf("one member enabled: %v", got)
	}
	if r := set.ExclusiveReason("cni-b", "cni-a"); !strings.Contains(r, `exclusiveGroup "cni": module cni-a is enabled`) {
		t.Errorf("reason %q", r)
	}
}

func TestExclusiveConflicts(t *testing.T) {
	set := exclusiveSet(t)
	errs := set.ExclusiveConflicts(map[string]bool{"cni-a": true, "cni-b": true}, map[string]bool{"cni-b": true})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `exclusiveGroup "cni": modules cni-a, cni-b would be enabled together`) {
		t.Fatalf("errs = %v", errs)
	}
	if errs := set.ExclusiveConflicts(map[string]bool{"cni-a": true, "cni-b": true}, map[string]bool{"other": true}); len(errs) != 0 {
		t.Errorf("a change that switches on no member is not refused: %v", errs)
	}
	if errs := set.ExclusiveConflicts(map[string]bool{"cni-b": true}, map[string]bool{"cni-b": true}); len(errs) != 0 {
		t.Errorf("switching to another member is allowed: %v", errs)
	}
}
