package module

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKeyForNameFor(t *testing.T) {
	tests := []struct {
		name string
		key  string
	}{
		{name: "cert-manager", key: "certManager"},
		{name: "a", key: "a"},
		{name: "very-simple-module", key: "verySimpleModule"},
		{name: "ingress-nginx2", key: "ingressNginx2"},
		{name: "1password", key: "1password"},
		{name: "x-y-z", key: "xYZ"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := KeyFor(tt.name); got != tt.key {
				t.Errorf("KeyFor(%q) = %q, want %q", tt.name, got, tt.key)
			}
			if got := NameFor(tt.key); got != tt.name {
				t.Errorf("NameFor(%q) = %q, want %q", tt.key, got, tt.name)
			}
		})
	}
}

func TestValidName(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"cert-manager", true},
		{"a", true},
		{"abc123", true},
		{"1password", true},
		{"ingress-nginx2", true},
		{"", false},
		{"module-2", false},
		{"a--b", false},
		{"-a", false},
		{"a-", false},
		{"Cert", false},
		{"certManager", false},
		{"cert_manager", false},
		{"cert.manager", false},
		{"modulé", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ValidName(tt.name); got != tt.want {
				t.Errorf("ValidName(%q) = %v, want %v", tt.name, got, tt.want)
			}
		})
	}
}

func TestSuggestName(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"Cert_Manager", "cert-manager"},
		{"certManager", "cert-manager"},
		{"cert_manager", "cert-manager"},
		{"module-2", "module2"},
		{"a--b", "a-b"},
		{"-a-", "a"},
		{"HTTPProxy", "httpproxy"},
		{"my.module v2", "my-module-v2"},
		{"___", "module"},
		{"Global", "global-module"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := suggestName(tt.in)
			if got != tt.want {
				t.Errorf("suggestName(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if !ValidName(got) {
				t.Errorf("suggestName(%q) = %q is not a valid name", tt.in, got)
			}
		})
	}
}

func TestSplitDirs(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{name: "empty", in: "", want: nil},
		{name: "one", in: "/modules", want: []string{"/modules"}},
		{name: "several", in: "/a:/b:rel/c", want: []string{"/a", "/b", "rel/c"}},
		{name: "empty elements and spaces", in: ":/a:: /b :", want: []string{"/a", "/b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, SplitDirs(tt.in)); diff != "" {
				t.Errorf("SplitDirs(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}
