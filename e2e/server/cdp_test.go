package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

// browser is headless Chromium driven through the DevTools protocol over
// a pipe (--remote-debugging-pipe: it reads commands from fd 3 and writes
// answers and events to fd 4, each a JSON message ended by a NUL byte), so
// that a test can set the viewport, read the layout, take screenshots and
// hear console errors without a network port or a library.
type browser struct {
	t       *testing.T
	in      io.WriteCloser
	out     *bufio.Reader
	next    int
	session string
	// problems are the console errors, uncaught exceptions and error log
	// entries (a refused resource, a blocked script) heard so far.
	problems []string
	loaded   bool
}

// cdpMessage is a command's answer or an event.
type cdpMessage struct {
	ID        int             `json:"id"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params"`
	Result    json.RawMessage `json:"result"`
	SessionID string          `json:"sessionId"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// startBrowser starts Chromium with a page attached; a cleanup stops it.
func startBrowser(t *testing.T) *browser {
	t.Helper()
	chromium := findChromium(t)
	ctx, cancel := context.WithTimeout(t.Context(), 4*operatortest.Timeout)
	toBrowser, cmdIn, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmdOut, fromBrowser, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--hide-scrollbars", "--remote-debugging-pipe", "--user-data-dir="+t.TempDir(), "about:blank")
	cmd.ExtraFiles = []*os.File{toBrowser, fromBrowser}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = operatortest.Timeout / 6
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	_, _ = toBrowser.Close(), fromBrowser.Close()
	t.Cleanup(func() {
		_ = cmdIn.Close()
		cancel()
		_ = cmd.Wait()
		_ = cmdOut.Close()
		if t.Failed() {
			t.Logf("chromium's stderr:\n%s", stderr.String())
		}
	})
	b := &browser{t: t, in: cmdIn, out: bufio.NewReader(cmdOut)}
	var target struct {
		TargetID string `json:"targetId"`
	}
	b.call("Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	b.call("Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached)
	b.session = attached.SessionID
	for _, domain := range []string{"Page", "Runtime", "Log"} {
		b.call(domain+".enable", nil, nil)
	}
	return b
}

// call sends a command (to the page once attached) and decodes its
// result into result; events read meanwhile are kept.
func (b *browser) call(method string, params, result any) {
	b.t.Helper()
	b.next++
	msg := map[string]any{"id": b.next, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if b.session != "" {
		msg["sessionId"] = b.session
	}
	data, err := json.Marshal(msg)
	if err != nil {
		b.t.Fatal(err)
	}
	if _, err := b.in.Write(append(data, 0)); err != nil {
		b.t.Fatalf("%s: send: %v", method, err)
	}
	for {
		m := b.read(method)
		if m.ID != b.next {
			continue
		}
		if m.Error != nil {
			b.t.Fatalf("%s: %s", method, m.Error.Message)
		}
		if result != nil {
			if err := json.Unmarshal(m.Result, result); err != nil {
				b.t.Fatalf("%s: decode %s: %v", method, m.Result, err)
			}
		}
		return
	}
}

// read returns the next message, keeping what events say.
func (b *browser) read(waiting string) cdpMessage {
	b.t.Helper()
	data, err := b.out.ReadBytes(0)
	if err != nil {
		b.t.Fatalf("chromium stopped answering while %s: %v", waiting, err)
	}
	var m cdpMessage
	if err := json.Unmarshal(data[:len(data)-1], &m); err != nil {
		b.t.Fatalf("chromium sent %q: %v", data, err)
	}
	b.hear(m)
	return m
}

// hear keeps what an event says about the page.
func (b *browser) hear(m cdpMessage) {
	switch m.Method {
	case "Page.loadEventFired":
		b.loaded = true
	case "Runtime.consoleAPICalled":
		var p struct {
			Type string `json:"type"`
			Args []struct {
				Value any `json:"value"`
			} `json:"args"`
		}
		if json.Unmarshal(m.Params, &p) == nil && (p.Type == "error" || p.Type == "assert") {
			b.problems = append(b.problems, fmt.Sprintf("console.%s %v", p.Type, p.Args))
		}
	case "Runtime.exceptionThrown":
		b.problems = append(b.problems, "exception: "+string(m.Params))
	case "Log.entryAdded":
		var p struct {
			Entry struct {
				Level, Text, URL string
			} `json:"entry"`
		}
		if json.Unmarshal(m.Params, &p) == nil && p.Entry.Level == "error" {
			b.problems = append(b.problems, "log: "+p.Entry.Text+" "+p.Entry.URL)
		}
	}
}

// open sets a viewport width pixels wide and loads url, returning once
// its load event fired.
func (b *browser) open(url string, width int) {
	b.t.Helper()
	b.call("Emulation.setDeviceMetricsOverride", map[string]any{
		"width": width, "height": 800, "deviceScaleFactor": 1, "mobile": width < 600,
	}, nil)
	b.loaded = false
	b.call("Page.navigate", map[string]any{"url": url}, nil)
	for !b.loaded {
		b.read("loading " + url)
	}
}

// eval runs a JavaScript expression in the page and decodes its value.
func (b *browser) eval(expr string, result any) {
	b.t.Helper()
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	b.call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &r)
	if r.ExceptionDetails != nil {
		b.t.Fatalf("evaluate %s: %s", expr, r.ExceptionDetails.Text)
	}
	if err := json.Unmarshal(r.Result.Value, result); err != nil {
		b.t.Fatalf("evaluate %s: decode %s: %v", expr, r.Result.Value, err)
	}
}

// screenshot returns the whole page as an image, and writes it to
// file in the test's output directory when the test fails.
func (b *browser) screenshot(name string) image.Image {
	b.t.Helper()
	var r struct {
		Data string `json:"data"`
	}
	b.call("Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true}, &r)
	data, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		b.t.Fatalf("screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		b.t.Fatalf("screenshot is no PNG: %v", err)
	}
	if dir := os.Getenv("SCREENSHOT_DIR"); dir != "" {
		if err := os.WriteFile(dir+"/"+name+".png", data, 0o600); err != nil {
			b.t.Errorf("keep screenshot: %v", err)
		}
	}
	return img
}
