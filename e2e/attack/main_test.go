// Package attack tries, as a user with fewer rights than the operator
// would, each way the security review found to turn one of the operator's
// surfaces against the cluster: ExecutionHooks, the webhook port, the
// chart's RBAC, a missing configuration source, ModuleConfigs, error texts
// and the smaller items of docs/security.md. Each test is named after what
// the attacker tries and fails when the attack succeeds.
//
// One control plane serves the package. Its API server trusts the fake
// kubelets' certificate, so pods/exec reaches a real streaming server on
// loopback, and presents a client certificate to admission webhooks.
package attack

import (
	"fmt"
	"os"
	"testing"

	"github.com/addon-operator/addon-operator/e2e/cluster"
	"github.com/addon-operator/addon-operator/e2e/kubelet"
	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

var (
	cp   *cluster.ControlPlane //nolint:gochecknoglobals // set once by TestMain, read by tests
	bin  string                //nolint:gochecknoglobals // the binary under test, built once by TestMain
	cert kubelet.Certificate   //nolint:gochecknoglobals // the fake kubelets' certificate the API server trusts
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "addon-operator-attack-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	if cert, err = kubelet.NewCertificate(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	webhookPortArgs, err := webhookPortAPIServerArgs(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return operatortest.TestMain(m, &cp, &bin, append(cert.APIServerArgs(), webhookPortArgs...)...)
}
