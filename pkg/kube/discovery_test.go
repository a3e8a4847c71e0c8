package kube

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clocktesting "k8s.io/utils/clock/testing"
)

// discoveryReads counts how often d's group list was read: once per fill
// of a cache over it.
func discoveryReads(d *fakediscovery.FakeDiscovery) int {
	n := 0
	for _, a := range d.Actions() {
		if a.GetVerb() == "get" && a.GetResource().Resource == "group" {
			n++
		}
	}
	return n
}

// widgets is a group served once a CRD is installed.
func widgets() *metav1.APIResourceList {
	return &metav1.APIResourceList{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{
		{Name: "widgets", SingularName: "widget", Kind: "Widget", Namespaced: true, Verbs: []string{"list", "watch"}},
	}}
}

func widgetKind() schema.GroupKind { return schema.GroupKind{Group: "example.com", Kind: "Widget"} }

func TestDiscoveryReadsOnceForManyLookups(t *testing.T) {
	fake := testDiscovery()
	d := NewDiscovery(fake, time.Second, clocktesting.NewFakePassiveClock(time.Unix(0, 0)))
	mapper := d.RESTMapper()
	for range 50 {
		if _, err := mapper.RESTMapping(schema.GroupKind{Kind: "ConfigMap"}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := d.Client().ServerGroupsAndResources(); err != nil {
			t.Fatal(err)
		}
	}
	if got := discoveryReads(fake); got != 1 {
		t.Errorf("discovery read %d times for 100 lookups, want 1", got)
	}
}

func TestDiscoveryMissRefreshesOnlyWhenStale(t *testing.T) {
	fake := testDiscovery()
	clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	d := NewDiscovery(fake, time.Second, clk)
	mapper := d.RESTMapper()
	if _, err := mapper.RESTMapping(schema.GroupKind{Kind: "ConfigMap"}); err != nil {
		t.Fatal(err)
	}
	fake.Resources = append(fake.Resources, widgets())

	// Within the fresh window a miss is trusted: no second read.
	if _, err := mapper.RESTMapping(widgetKind()); err == nil {
		t.Fatal("found a kind added after the fill, within the fresh window")
	}
	if got := discoveryReads(fake); got != 1 {
		t.Fatalf("discovery read %d times within the fresh window, want 1", got)
	}

	// Later, a miss refreshes and finds the new kind.
	clk.SetTime(clk.Now().Add(2 * time.Second))
	m, err := mapper.RESTMapping(widgetKind())
	if err != nil {
		t.Fatalf("kind added since the fill not found after the fresh window: %v", err)
	}
	if m.Resource.Resource != "widgets" {
		t.Errorf("resource = %q, want widgets", m.Resource.Resource)
	}
	if got := discoveryReads(fake); got != 2 {
		t.Errorf("discovery read %d times, want 2", got)
	}

	// A kind that does not exist refreshes at most once per window.
	clk.SetTime(clk.Now().Add(2 * time.Second))
	for range 5 {
		if _, err := mapper.RESTMapping(schema.GroupKind{Group: "nowhere.io", Kind: "Ghost"}); err == nil {
			t.Fatal("found a kind nobody serves")
		}
	}
	if got := discoveryReads(fake); got != 3 {
		t.Errorf("discovery read %d times after 5 misses of an unknown kind, want 3", got)
	}
}

func TestDiscoveryRefreshFromEveryView(t *testing.T) {
	for name, refresh := range map[string]func(*Discovery){
		"Refresh":           (*Discovery).Refresh,
		"mapper Reset":      func(d *Discovery) { d.RESTMapper().Reset() },
		"client Invalidate": func(d *Discovery) { d.Client().Invalidate() },
	} {
		t.Run(name, func(t *testing.T) {
			fake := testDiscovery()
			d := NewDiscovery(fake, time.Hour, clocktesting.NewFakePassiveClock(time.Unix(0, 0)))
			if _, err := d.RESTMapper().RESTMapping(schema.GroupKind{Kind: "ConfigMap"}); err != nil {
				t.Fatal(err)
			}
			fake.Resources = append(fake.Resources, widgets())
			refresh(d)
			if _, err := d.RESTMapper().RESTMapping(widgetKind()); err != nil {
				t.Errorf("mapper does not see a kind added before the refresh: %v", err)
			}
			_, lists, err := d.Client().ServerGroupsAndResources()
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, l := range lists {
				found = found || l.GroupVersion == "example.com/v1"
			}
			if !found {
				t.Error("client does not serve a group added before the refresh")
			}
		})
	}
}
