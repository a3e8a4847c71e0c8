package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagRule is what a conventional flag must be wherever it appears.
type flagRule struct {
	shorthand string
	usage     string // its help contains this
}

// conventionalFlags are the flags that mean one thing on every command.
var conventionalFlags = map[string]flagRule{ //nolint:gochecknoglobals // the test's table
	"kubeconfig": {usage: kubeconfigUsage},
	"context":    {usage: contextUsage},
	"namespace":  {shorthand: "n", usage: namespaceUsagePrefix},
	"output":     {shorthand: "o", usage: outputFormats},
	"values":     {shorthand: "f", usage: "YAML file"},
	"set":        {usage: "Helm's syntax"},
}

// shorthands name the one flag each letter stands for.
var shorthands = map[string]string{ //nolint:gochecknoglobals // the test's table
	"n": "namespace", "o": "output", "f": "values", "a": "api-versions", "s": "show-only", "w": "watch",
}

// clusterCommands talk to a cluster; dataCommands print data that
// scripts read.
var (
	clusterCommands = []string{ //nolint:gochecknoglobals // the test's table
		"start", "diff", "live module render", "config migrate", "execution-hook-controller",
		"reconcile module", "suspend module", "resume module", "events module", "tree module", "history module", "rollback module",
	}
	dataCommands = []string{ //nolint:gochecknoglobals // the test's table
		"plan list", "plan values", "plan render", "plan hooks", "lint", "diff", "rbac", "version", "config migrate",
		"live queue list", "live module list", "live module values", "live module config", "live module render",
		"live global values", "live global config",
		"reconcile module", "suspend module", "resume module", "events module", "tree module", "history module", "rollback module",
	}
)

// commandFlags are every flag a command takes, its own and inherited.
func commandFlags(c *cobra.Command) map[string]*pflag.Flag {
	out := map[string]*pflag.Flag{}
	add := func(f *pflag.Flag) { out[f.Name] = f }
	c.Flags().VisitAll(add)
	c.InheritedFlags().VisitAll(add)
	return out
}

func walkCommands(c *cobra.Command, f func(*cobra.Command)) {
	f(c)
	for _, sub := range c.Commands() {
		walkCommands(sub, f)
	}
}

// TestFlagConventions holds every command, hidden ones too, to one set of
// flags: --kubeconfig, --context and -n/--namespace (the operator's
// namespace) where a cluster is asked, -o with the same formats where
// data is printed, each shorthand meaning one flag, and former spellings
// hidden and deprecated.
func TestFlagConventions(t *testing.T) {
	root := newRootCommand()
	seen := map[string]bool{}
	walkCommands(root, func(c *cobra.Command) {
		path := strings.TrimPrefix(c.CommandPath(), "addon-operator ")
		seen[path] = true
		flags := commandFlags(c)
		for name, f := range flags {
			if target, old := oldSpellings[name]; old {
				if !f.Hidden || f.Deprecated == "" || flags[target] == nil {
					t.Errorf("%s: --%s is a former spelling of --%s: want it hidden, deprecated and --%s present", c.CommandPath(), name, target, target)
				}
				continue
			}
			if rule, ok := conventionalFlags[name]; ok {
				if f.Shorthand != rule.shorthand {
					t.Errorf("%s: --%s has shorthand %q, want %q", c.CommandPath(), name, f.Shorthand, rule.shorthand)
				}
				if !strings.Contains(f.Usage, rule.usage) {
					t.Errorf("%s: --%s: help %q does not say %q", c.CommandPath(), name, f.Usage, rule.usage)
				}
			}
			if f.Shorthand != "" && f.ShorthandDeprecated == "" && shorthands[f.Shorthand] != name {
				t.Errorf("%s: -%s is --%s, but -%s means --%s", c.CommandPath(), f.Shorthand, name, f.Shorthand, shorthands[f.Shorthand])
			}
		}
		if flags["kubeconfig"] != nil || slices.Contains(clusterCommands, path) {
			for _, want := range []string{"kubeconfig", "context", "namespace"} {
				if flags[want] == nil {
					t.Errorf("%s talks to a cluster but has no --%s", c.CommandPath(), want)
				}
			}
		}
		if slices.Contains(dataCommands, path) && flags["output"] == nil {
			t.Errorf("%s prints data but has no -o/--output", c.CommandPath())
		}
	})
	for _, path := range append(slices.Clone(clusterCommands), dataCommands...) {
		if !seen[path] {
			t.Errorf("no command %q: update the test's tables", path)
		}
	}
}

// TestFormerSpellingsStillWork sets flags by their former names.
func TestFormerSpellingsStillWork(t *testing.T) {
	for _, tt := range []struct {
		args []string
		flag string
		want string
	}{
		{[]string{"diff", "--kube-config", "/k", "--kube-context", "c"}, "kubeconfig", "/k"},
		{[]string{"diff", "--kube-context", "c"}, "context", "c"},
		{[]string{"start", "--kube-config", "/k"}, "kubeconfig", "/k"},
		{[]string{"config", "migrate", "--kube-context", "c"}, "context", "c"},
		{[]string{"execution-hook-controller", "--operator-namespace", "ops"}, "namespace", "ops"},
		{[]string{"live", "module", "render", "x", "--kube-config", "/k"}, "kubeconfig", "/k"},
	} {
		root := newRootCommand()
		c, rest, err := root.Find(tt.args)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.ParseFlags(rest); err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		f := c.Flags().Lookup(tt.flag)
		if f.Value.String() != tt.want || !f.Changed {
			t.Errorf("%v: --%s = %q (given %t), want %q", tt.args, tt.flag, f.Value.String(), f.Changed, tt.want)
		}
	}
}

// TestClusterNamespaceIsTheOperators: the kubeconfig's namespace is the
// user's, never taken as the operator's.
func TestClusterNamespaceIsTheOperators(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "config")
	err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: c, context: {cluster: c, user: u, namespace: default}}]
current-context: c
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("ADDON_OPERATOR_NAMESPACE", "")
	k := kubeFlags{kubeconfig: kubeconfig}
	if _, err := k.view(newWarnLogger(&bytes.Buffer{})); err == nil || !strings.Contains(err.Error(), "operator's namespace") {
		t.Errorf("view without -n = %v, want an error asking for the operator's namespace", err)
	}
	t.Setenv("ADDON_OPERATOR_NAMESPACE", "ops")
	v, err := k.view(newWarnLogger(&bytes.Buffer{}))
	if err != nil {
		t.Fatal(err)
	}
	if v.namespace != "ops" {
		t.Errorf("namespace = %q, want ops (ADDON_OPERATOR_NAMESPACE)", v.namespace)
	}
	k.namespace = "flag"
	if v, _ = k.view(newWarnLogger(&bytes.Buffer{})); v.namespace != "flag" {
		t.Errorf("namespace = %q, want flag (-n)", v.namespace)
	}
}

func TestOutputFormats(t *testing.T) {
	items := []map[string]any{{"name": "web", "enabled": true}, {"name": "db", "enabled": false}}
	list := map[string]any{"kind": "List", "items": []any{
		map[string]any{"kind": "ModuleConfig", "metadata": map[string]any{"name": "web"}},
	}}
	for _, tt := range []struct {
		format string
		v      any
		want   string
	}{
		{"name", items, "web\ndb\n"},
		{"name", list, "moduleconfig/web\n"},
		{"jsonpath={.items[*].metadata.name}", list, "web\n"},
		{"jsonpath={[?(@.enabled==true)].name}", items, "web\n"},
	} {
		if err := checkOutput(tt.format); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := writeOutput(&b, tt.format, tt.v, nil); err != nil {
			t.Fatalf("%s: %v", tt.format, err)
		}
		if b.String() != tt.want {
			t.Errorf("-o %s = %q, want %q", tt.format, b.String(), tt.want)
		}
	}
	for _, bad := range []string{"wide", "jsonpath=", "jsonpath={.x"} {
		if checkOutput(bad) == nil {
			t.Errorf("-o %s accepted", bad)
		}
	}
	if err := writeOutput(&bytes.Buffer{}, "name", readVersion(), nil); err == nil {
		t.Error("-o name of a nameless object printed something")
	}
}
