package helm

import (
	"errors"
	"testing"
)

func TestDeployReason(t *testing.T) {
	errLookup := errors.New("api server down")
	deployed := &Status{Revision: 3, State: "deployed", Checksum: "abc"}
	tests := []struct {
		name        string
		last        *Status
		missing     string
		missingErr  error
		want        Reason
		wantMissing string
		wantErr     error
		wantLookups int
	}{
		{name: "no release", last: nil, want: ReasonNoRelease},
		{name: "failed", last: &Status{State: "failed", Checksum: "abc"}, want: ReasonNotDeployed},
		{name: "pending upgrade", last: &Status{State: "pending-upgrade", Checksum: "abc"}, want: ReasonNotDeployed},
		{name: "uninstalled", last: &Status{State: "uninstalled", Checksum: "abc"}, want: ReasonNotDeployed},
		{name: "checksum changed", last: &Status{State: "deployed", Checksum: "old"}, want: ReasonChecksumChanged},
		{name: "no checksum label", last: &Status{State: "deployed"}, want: ReasonChecksumChanged},
		{name: "object missing", last: deployed, missing: "ConfigMap/ns/echo", want: ReasonObjectMissing, wantMissing: "ConfigMap/ns/echo", wantLookups: 1},
		{name: "up to date", last: deployed, want: "", wantLookups: 1},
		{name: "lookup fails", last: deployed, missingErr: errLookup, wantErr: errLookup, wantLookups: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lookups := 0
			got, missing, err := deployReason(tt.last, "abc", func() (string, error) {
				lookups++
				return tt.missing, tt.missingErr
			})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if got != tt.want || missing != tt.wantMissing {
				t.Errorf("deployReason = %q, %q; want %q, %q", got, missing, tt.want, tt.wantMissing)
			}
			if lookups != tt.wantLookups {
				t.Errorf("object lookups = %d, want %d (only when otherwise up to date)", lookups, tt.wantLookups)
			}
		})
	}
}

func TestPlanDeploy(t *testing.T) {
	tests := []struct {
		name string
		last *Status
		want step
	}{
		{name: "no release", last: nil, want: stepInstall},
		{name: "uninstalled with history", last: &Status{State: "uninstalled"}, want: stepReinstall},
		{name: "pending install", last: &Status{State: "pending-install"}, want: stepRecover},
		{name: "pending upgrade", last: &Status{State: "pending-upgrade"}, want: stepRecover},
		{name: "pending rollback", last: &Status{State: "pending-rollback"}, want: stepRecover},
		{name: "uninstalling", last: &Status{State: "uninstalling"}, want: stepRecover},
		{name: "unknown", last: &Status{State: "unknown"}, want: stepRecover},
		{name: "deployed", last: &Status{State: "deployed"}, want: stepUpgrade},
		{name: "failed", last: &Status{State: "failed"}, want: stepUpgrade},
		{name: "superseded", last: &Status{State: "superseded"}, want: stepUpgrade},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := planDeploy(tt.last); got != tt.want {
				t.Errorf("planDeploy = %d, want %d", got, tt.want)
			}
		})
	}
}
