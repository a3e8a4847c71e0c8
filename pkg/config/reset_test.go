package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/values"
)

func TestResets(t *testing.T) {
	full := &Config{
		Global:  values.Values{"domain": "example.com"},
		Modules: map[string]values.Values{"certManager": {"email": "a@b", "replicas": 2}, "ingress": {"class": "nginx"}, "empty": {}},
	}
	for _, tc := range []struct {
		name       string
		prev, next *Config
		want       []Reset
	}{
		{name: "nothing before", prev: nil, next: full},
		{name: "unchanged", prev: full, next: full},
		{name: "everything gone", prev: full, next: nil, want: []Reset{
			{Key: GlobalKey, Keys: []string{"domain"}}, {Key: "certManager", Keys: []string{"email", "replicas"}}, {Key: "ingress", Keys: []string{"class"}},
		}},
		{name: "one section removed, one emptied, a key changed", prev: full, next: &Config{
			Global:  values.Values{"domain": "other.org"},
			Modules: map[string]values.Values{"certManager": {}, "ingress": {"class": "traefik"}},
		}, want: []Reset{{Key: "certManager", Keys: []string{"email", "replicas"}}}},
		{name: "a key dropped is no reset", prev: full, next: &Config{
			Global:  values.Values{"domain": "example.com"},
			Modules: map[string]values.Values{"certManager": {"email": "a@b"}, "ingress": {"class": "nginx"}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Resets(tc.prev, tc.next)); diff != "" {
				t.Errorf("Resets (-want +got):\n%s", diff)
			}
		})
	}
}
