package configcache

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestGetRunsAgainOnlyWhenTheFileOrEnvironmentChanged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hook")
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("one")
	var c Cache
	runs := 0
	run := func() ([]byte, error) { runs++; return []byte("out"), nil }
	steps := []struct {
		name     string
		body     string // written before the step when not empty
		env      []string
		wantRuns int
	}{
		{name: "first load", env: []string{"A=1"}, wantRuns: 1},
		{name: "unchanged", env: []string{"A=1"}, wantRuns: 1},
		{name: "other environment", env: []string{"A=2"}, wantRuns: 2},
		{name: "changed content", body: "two", env: []string{"A=2"}, wantRuns: 3},
		{name: "unchanged again", env: []string{"A=2"}, wantRuns: 3},
	}
	for _, s := range steps {
		if s.body != "" {
			write(s.body)
		}
		out, err := c.Get(path, s.env, run)
		if err != nil || string(out) != "out" {
			t.Fatalf("%s: Get = %q, %v", s.name, out, err)
		}
		if runs != s.wantRuns {
			t.Fatalf("%s: %d runs, want %d", s.name, runs, s.wantRuns)
		}
	}
}

func TestGetDoesNotRememberFailures(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hook")
	if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	var c Cache
	errRun := errors.New("boom")
	runs := 0
	fail := func() ([]byte, error) { runs++; return nil, errRun }
	for range 2 {
		if _, err := c.Get(path, nil, fail); !errors.Is(err, errRun) {
			t.Fatalf("Get: %v, want %v", err, errRun)
		}
	}
	if runs != 2 {
		t.Errorf("%d runs of a failing file, want 2", runs)
	}
}

func TestGetReturnsACopy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hook")
	if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	var c Cache
	run := func() ([]byte, error) { return []byte("out"), nil }
	out, err := c.Get(path, nil, run)
	if err != nil {
		t.Fatal(err)
	}
	out[0] = 'X'
	again, err := c.Get(path, nil, run)
	if err != nil || string(again) != "out" {
		t.Errorf("second Get = %q, %v after the caller changed the first answer; want \"out\"", again, err)
	}
}
