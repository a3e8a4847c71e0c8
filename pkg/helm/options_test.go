package helm

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/spf13/pflag"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
)

func TestOptionsValidate(t *testing.T) {
	valid := Options{RESTConfig: &rest.Config{Host: "https://127.0.0.1"}, Namespace: "ns"}
	tests := []struct {
		name    string
		change  func(o *Options)
		wantErr []string
	}{
		{name: "valid", change: func(*Options) {}},
		{name: "configmap driver", change: func(o *Options) { o.Driver = "configmap" }},
		{name: "no cluster", change: func(o *Options) { o.RESTConfig = nil }, wantErr: []string{"no cluster access"}},
		{name: "no namespace", change: func(o *Options) { o.Namespace = "" }, wantErr: []string{"namespace is empty"}},
		{name: "memory driver", change: func(o *Options) { o.Driver = "memory" }, wantErr: []string{`unknown helm driver "memory"`}},
		{name: "negative numbers", change: func(o *Options) { o.HistoryMax, o.Timeout, o.DiscoveryMaxAge = -1, -time.Second, -time.Minute }, wantErr: []string{"history max -1", "timeout -1s", "discovery max age -1m0s"}},
		{name: "empty module to adopt", change: func(o *Options) { o.AdoptObjects = []string{"a", " "} }, wantErr: []string{"--adopt-objects names an empty module"}},
		{name: "discovery without mapper", change: func(o *Options) { o.Discovery = memory.NewMemCacheClient(nil) }, wantErr: []string{"both Discovery and Mapper"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := valid
			tt.change(&o)
			err := o.Validate()
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate = nil, want errors %q", tt.wantErr)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Validate = %v, want it to mention %q", err, want)
				}
			}
		})
	}
}

func TestOptionsFlagsAndDefaults(t *testing.T) {
	var o Options
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.BindFlags(fs)
	args := []string{"--helm-history-max=3", "--helm-timeout=90s", "--helm-driver=configmap", "--adopt-objects=a,b", "--adopt-unlabeled-releases"}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if o.HistoryMax != 3 || o.Timeout != 90*time.Second || o.Driver != "configmap" || !cmp.Equal(o.AdoptObjects, []string{"a", "b"}) || !o.AdoptUnlabeledReleases {
		t.Errorf("parsed options = %+v", o)
	}
	got := Options{}.withDefaults()
	want := Options{Driver: DefaultDriver, HistoryMax: DefaultHistoryMax, Timeout: DefaultTimeout, DiscoveryMaxAge: DefaultDiscoveryMaxAge}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Options{}, "Logger")); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if got.Logger == nil {
		t.Error("default logger is nil")
	}
}

func TestNewRejectsInvalidOptions(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Error("New(Options{}) succeeded, want an error")
	}
	c, err := New(Options{RESTConfig: &rest.Config{Host: "https://127.0.0.1:1"}, Namespace: "ns"})
	if err != nil || c == nil {
		t.Fatalf("New = %v, %v; want a client (no connection is made)", c, err)
	}
}
