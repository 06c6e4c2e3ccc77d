package view

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/opmkit/opm/pkg/action"
)

const example = "../../../examples/catalog"

// TestRun serves on 127.0.0.1, answers, and stops promptly when its
// context is cancelled.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- Run(ctx, Options{Refs: []string{example}, Ready: func(u string) { ready <- u }}) }()
	var u string
	select {
	case u = <-ready:
	case err := <-done:
		t.Fatal(err)
	case <-time.After(30 * time.Second):
		t.Fatal("not ready")
	}
	if !strings.HasPrefix(u, "http://127.0.0.1:") {
		t.Fatalf("URL %s is not on 127.0.0.1", u)
	}
	resp, err := http.Get(u + "api/packages/cache-operator")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET: %s", resp.Status)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Run did not stop within 3s of its context's end")
	}
}

func TestOptionErrors(t *testing.T) {
	ctx := context.Background()
	for _, opts := range []Options{
		{},
		{Refs: []string{"a", "b", "c"}},
		{Refs: []string{"-", "-"}},
		{Refs: []string{example}, Fragment: true},
		{Refs: []string{example, example}, Semantics: "v0"},
		{Refs: []string{example}, Port: 70000},
	} {
		var ue *action.UsageError
		if err := Run(ctx, opts); !errors.As(err, &ue) {
			t.Errorf("%+v: %v, want a usage error", opts, err)
		}
	}
	if _, err := Load(ctx, Options{Refs: []string{"./missing"}}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a missing catalog: %v", err)
	}
}
