package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/") //nolint:gochecknoglobals // the test binary's -update flag

func TestStartHelpGolden(t *testing.T) {
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"start", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "start-help.golden")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), out.String()); diff != "" {
		t.Errorf("start --help (-want +got), regenerate with -update:\n%s", diff)
	}
}

func TestApplyEnv(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    map[string]string
		wantErr string
	}{
		{
			name: "new names win over old ones",
			env:  map[string]string{"ADDON_OPERATOR_MODULES_DIR": "/new", "MODULES_DIR": "/old"},
			want: map[string]string{"modules-dir": "/new"},
		},
		{
			name: "old names still work",
			env:  map[string]string{"MODULES_DIR": "/old", "GLOBAL_HOOKS_DIR": "/gh"},
			want: map[string]string{"modules-dir": "/old", "global-hooks-dir": "/gh"},
		},
		{
			name: "a flag on the command line wins over the environment",
			args: []string{"--namespace=from-flag"},
			env:  map[string]string{"ADDON_OPERATOR_NAMESPACE": "from-env"},
			want: map[string]string{"namespace": "from-flag"},
		},
		{
			name: "KUBE_CONFIG before KUBECONFIG",
			env:  map[string]string{"KUBECONFIG": "/b", "KUBE_CONFIG": "/a"},
			want: map[string]string{"kubeconfig": "/a"},
		},
		{
			name: "the webhook server's names",
			env:  map[string]string{"ADDON_OPERATOR_WEBHOOK_HTTP2": "true", "VALIDATING_WEBHOOK_LISTEN_PORT": "9443"},
			want: map[string]string{"webhook-http2": "true", "validating-webhook-listen-port": "9443"},
		},
		{
			name:    "a bad value names the variable",
			env:     map[string]string{"ADDON_OPERATOR_HOOK_TIMEOUT": "soon"},
			wantErr: `environment variable ADDON_OPERATOR_HOOK_TIMEOUT="soon"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newStartCommand().Flags()
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			err := applyEnv(fs, func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			if tt.wantErr != "" {
				if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tt.wantErr)) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range tt.want {
				if got := fs.Lookup(name).Value.String(); got != want {
					t.Errorf("--%s = %q, want %q", name, got, want)
				}
			}
		})
	}
}

func TestWithRateLimitSharesOneBucket(t *testing.T) {
	base := &rest.Config{Host: "https://127.0.0.1:6443"}
	cfg := withRateLimit(base, 0.01, 3) // a token per 100 s: none comes back during the test
	if base.RateLimiter != nil || base.QPS != 0 {
		t.Error("withRateLimit changed the config it was given")
	}
	a, err := rest.RESTClientFor(withContentDefaults(cfg))
	if err != nil {
		t.Fatal(err)
	}
	b, err := rest.RESTClientFor(withContentDefaults(rest.CopyConfig(cfg)))
	if err != nil {
		t.Fatal(err)
	}
	if a.GetRateLimiter() == nil || a.GetRateLimiter() != b.GetRateLimiter() {
		t.Fatal("two clients of the config do not share one rate limiter")
	}
	// The burst is spent by the first 3 requests; the 4th must wait.
	for i := range 3 {
		if !a.GetRateLimiter().TryAccept() {
			t.Fatalf("request %d of the burst refused", i+1)
		}
	}
	if b.GetRateLimiter().TryAccept() {
		t.Error("the other client sent a 4th request within the burst of 3")
	}

	unlimited, err := rest.RESTClientFor(withContentDefaults(withRateLimit(base, 0, 0)))
	if err != nil {
		t.Fatal(err)
	}
	if unlimited.GetRateLimiter() != nil {
		t.Error("--kube-client-qps 0 still limits")
	}
}

// withContentDefaults fills what rest.RESTClientFor requires of a config.
func withContentDefaults(cfg *rest.Config) *rest.Config {
	cfg.GroupVersion = &schema.GroupVersion{Version: "v1"}
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	return cfg
}

// TestEveryDocumentedVariableIsRead checks that each environment variable
// a start flag's help names is one applyEnv reads for that flag, so --help
// and docs/configuration.md never promise a variable nobody reads.
func TestEveryDocumentedVariableIsRead(t *testing.T) {
	envName := regexp.MustCompile(`\b[A-Z][A-Z0-9_]*[A-Z0-9]\b`)
	fallbacks := envFallbacks()
	newStartCommand().Flags().VisitAll(func(f *pflag.Flag) {
		_, after, ok := strings.Cut(f.Usage, "(env ")
		if !ok {
			return
		}
		doc, _, _ := strings.Cut(after, ")")
		for _, name := range envName.FindAllString(doc, -1) {
			if !slices.Contains(fallbacks[f.Name], name) {
				t.Errorf("--%s: help names %s, but applyEnv reads %v", f.Name, name, fallbacks[f.Name])
			}
		}
	})
}
