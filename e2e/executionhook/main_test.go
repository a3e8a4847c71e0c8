// Package executionhook tests the execution-hooks module end to end: the
// operator installs the module from the repository's modules/ directory,
// the controller runs as its own process with a token of the module's
// ServiceAccount (so it has exactly the rights the module grants), and
// the actions reach a fake kubelet through the real kube-apiserver's
// pods/exec.
package executionhook

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
	dir, err := os.MkdirTemp("", "addon-operator-kubelet-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	if cert, err = kubelet.NewCertificate(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return operatortest.TestMain(m, &cp, &bin, cert.APIServerArgs()...)
}
