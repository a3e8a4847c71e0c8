package records

import "testing"

func TestIsRecord(t *testing.T) {
	tests := []struct {
		kind, name string
		want       bool
	}{
		{kind: "Secret", name: "sh.helm.release.v1.echo.v3", want: true},
		{kind: "ConfigMap", name: "sh.helm.release.v1.echo.v12", want: true},
		{kind: "Secret", name: "sh.helm.release.v1.echo-two.v3"},
		{kind: "Secret", name: "sh.helm.release.v1.echo.vx"},
		{kind: "Deployment", name: "sh.helm.release.v1.echo.v3"},
		{kind: "Secret", name: "echo"},
	}
	for _, tt := range tests {
		if got := IsRecord("echo", tt.kind, tt.name); got != tt.want {
			t.Errorf("IsRecord(echo, %s, %s) = %v, want %v", tt.kind, tt.name, got, tt.want)
		}
	}
}
