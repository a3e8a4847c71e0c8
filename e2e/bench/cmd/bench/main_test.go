package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseFlagsOperatorArgs(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		want       []string
		wantHeader string
		wantErr    bool
	}{
		{"none", []string{"-n", "10"}, nil, "extra operator args: none.", false},
		{"one", []string{"-operator-args=--kube-client-qps=100"}, []string{"--kube-client-qps=100"},
			"extra operator args: --kube-client-qps=100.", false},
		{"split on spaces", []string{"-operator-args", " --kube-client-qps=20  --kube-client-burst=10 "},
			[]string{"--kube-client-qps=20", "--kube-client-burst=10"}, "extra operator args: --kube-client-qps=20 --kube-client-burst=10.", false},
		{"repeated", []string{"-operator-args=--kube-client-qps=20", "-samples", "2", "-operator-args", "--kube-client-burst 10"},
			[]string{"--kube-client-qps=20", "--kube-client-burst", "10"}, "extra operator args: --kube-client-qps=20 --kube-client-burst 10.", false},
		{"flag the bench sets", []string{"-operator-args=--log-type=text"}, nil, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseFlags(tt.args)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseFlags(%q) error %v, want error %v", tt.args, err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if diff := cmp.Diff(tt.want, []string(o.operatorArgs)); diff != "" {
				t.Errorf("operator args (-want +got):\n%s", diff)
			}
			if h := o.header(); !strings.Contains(h, tt.wantHeader) || !strings.HasPrefix(h, "Machine: ") {
				t.Errorf("header %q, want it to contain %q", h, tt.wantHeader)
			}
		})
	}
}

func TestParseFlagsDeploy(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		n, ref  []int
		delays  []time.Duration
		wantErr bool
	}{
		{"none", []string{"-n", "10"}, nil, nil, nil, false},
		{"default delays", []string{"-deploy-n", "100,1000", "-deploy-reference", "100"},
			[]int{100, 1000}, []int{100}, []time.Duration{0, 2 * time.Second}, false},
		{"delays", []string{"-deploy-n", "20", "-deploy-delays", "2s", "-deploy-reference", "20"},
			[]int{20}, []int{20}, []time.Duration{2 * time.Second}, false},
		{"reference size not run", []string{"-deploy-n", "100", "-deploy-reference", "1000"}, nil, nil, nil, true},
		{"negative delay", []string{"-deploy-n", "100", "-deploy-delays", "-1s"}, nil, nil, nil, true},
		{"not a duration", []string{"-deploy-n", "100", "-deploy-delays", "2"}, nil, nil, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseFlags(tt.args)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseFlags(%q) error %v, want error %v", tt.args, err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if diff := cmp.Diff([]any{tt.n, tt.ref, tt.delays}, []any{o.deployN, o.deployRef, o.deployDelays}); diff != "" {
				t.Errorf("sizes, reference sizes, delays (-want +got):\n%s", diff)
			}
		})
	}
}
