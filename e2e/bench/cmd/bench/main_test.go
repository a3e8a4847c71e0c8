package main

import (
	"strings"
	"testing"

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
