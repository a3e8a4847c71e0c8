package options

import (
	"strings"
	"testing"
)

func TestValidateRemediation(t *testing.T) {
	tests := []struct {
		name        string
		remediation string
		retries     int
		wantErr     string
	}{
		{name: "the default", remediation: "none", retries: 3},
		{name: "empty is none", retries: 0},
		{name: "rollback", remediation: "rollback", retries: 1},
		{name: "uninstall without retries", remediation: "uninstall", retries: 0, wantErr: "--remediation-retries must be at least 1"},
		{name: "unknown", remediation: "revert", retries: 3, wantErr: `--remediation: remediation "revert"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Default()
			o.Namespace, o.Remediation.Strategy, o.Remediation.Retries = "ns", tt.remediation, tt.retries
			err := o.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Validate: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("Validate = %v, want an error with %q", err, tt.wantErr)
			}
		})
	}
}
