package requests

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

// countingCache is a discovery cache over a fake that counts
// invalidations and server version reads.
type countingCache struct {
	*fakediscovery.FakeDiscovery
	invalidations int
	versions      int
}

func (c *countingCache) Fresh() bool { return true }
func (c *countingCache) Invalidate() { c.invalidations++ }
func (c *countingCache) ServerVersion() (*version.Info, error) {
	c.versions++
	return &version.Info{GitVersion: "v1.36.3", Major: "1", Minor: "36"}, nil
}

var _ discovery.CachedDiscoveryInterface = (*countingCache)(nil)

func newCountingCache() *countingCache {
	return &countingCache{FakeDiscovery: &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{{GroupVersion: "v1"}}}}}
}

func TestCapabilityCacheInvalidatesOncePerMaxAge(t *testing.T) {
	inner := newCountingCache()
	clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	c := &capabilityCache{CachedDiscoveryInterface: inner, clock: clk, maxAge: 10 * time.Second}

	// What Helm does at the start of each operation: invalidate, read the
	// version. 20 operations within max age cost one invalidation and one
	// version read.
	for range 20 {
		c.Invalidate()
		v, err := c.ServerVersion()
		if err != nil {
			t.Fatal(err)
		}
		if v.GitVersion != "v1.36.3" {
			t.Fatalf("version %q", v.GitVersion)
		}
		clk.SetTime(clk.Now().Add(100 * time.Millisecond))
	}
	if inner.invalidations != 1 || inner.versions != 1 {
		t.Fatalf("20 operations within max age: %d invalidations, %d version reads; want 1, 1", inner.invalidations, inner.versions)
	}

	clk.SetTime(clk.Now().Add(10 * time.Second))
	c.Invalidate()
	if _, err := c.ServerVersion(); err != nil {
		t.Fatal(err)
	}
	if inner.invalidations != 2 || inner.versions != 2 {
		t.Errorf("operation after max age: %d invalidations, %d version reads; want 2, 2", inner.invalidations, inner.versions)
	}

	c.Refresh()
	if inner.invalidations != 3 {
		t.Errorf("Refresh within max age did not invalidate (%d invalidations)", inner.invalidations)
	}
	if _, err := c.ServerVersion(); err != nil {
		t.Fatal(err)
	}
	if inner.versions != 3 {
		t.Errorf("version not read again after Refresh (%d reads)", inner.versions)
	}
}
