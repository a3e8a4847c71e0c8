package server

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

// chromiumPath is where Debian's chromium package installs the browser.
const chromiumPath = "/usr/bin/chromium"

// findChromium returns the browser, failing the test with the package to
// install when there is none.
func findChromium(t *testing.T) string {
	t.Helper()
	if path, err := exec.LookPath("chromium"); err == nil {
		return path
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("headless Chromium is needed to check the status page and %s is missing: apt-get install chromium", chromiumPath)
	}
	return chromiumPath
}

// dumpDOM loads url in headless Chromium and returns the DOM after the
// page loaded, as the browser built it.
func dumpDOM(t *testing.T, chromium, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), operatortest.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--dump-dom", url)
	// Chromium forks helpers: kill the whole group on timeout.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = operatortest.Timeout / 6
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Fatalf("chromium did not load %s within %s:\n%s", url, operatortest.Timeout, stderr.String())
		}
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	return stdout.String()
}

// TestStatusPageInChromium loads the status page in a real browser and
// checks what it shows: every module with its state and every queue.
func TestStatusPageInChromium(t *testing.T) {
	chromium := findChromium(t)
	src := &source{}
	src.ready.Store(true)
	r := runServer(t, src)
	dom := dumpDOM(t, chromium, r.base+"/")

	want := []string{
		"<title>addon-operator</title>",
		// ingress-nginx fails: the header says so, not "Ready".
		`<span class="Failed">Failing</span>: the last run of 1 module failed and is retried: <a href="#module-ingress-nginx">ingress-nginx</a>.`,
		`<tr id="module-cert-manager"><td><a href="/modules/cert-manager">cert-manager</a></td><td>true</td><td>configmap</td><td class="Ready">Ready</td><td></td><td>4</td>`,
		`<tr id="module-ingress-nginx"><td><a href="/modules/ingress-nginx">ingress-nginx</a></td><td>true</td><td>static</td><td class="Failed">Failed</td><td></td><td>1</td>`,
		`upgrade release "ingress-nginx": timed out`,
		`<tr id="module-legacy-dashboard"><td><a href="/modules/legacy-dashboard">legacy-dashboard</a></td><td>false</td><td>default</td><td class="Disabled">Disabled</td>`,
		`<tr class="queue-main"><td>main</td><td>running</td><td>ModuleRun ingress-nginx</td>`,
		`<tr class="queue-cert-sync"><td>cert-sync</td><td>idle</td><td colspan="4">no tasks</td></tr>`,
	}
	for _, w := range want {
		if !strings.Contains(dom, w) {
			t.Errorf("the page in Chromium lacks %q; DOM:\n%s", w, dom)
		}
	}
}
