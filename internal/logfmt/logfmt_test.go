package logfmt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"time"
)

func record(t *testing.T, format string, level slog.Level, f func(*slog.Logger)) string {
	t.Helper()
	var buf bytes.Buffer
	l, err := New(&buf, format, level)
	if err != nil {
		t.Fatal(err)
	}
	f(l)
	return buf.String()
}

var at = time.Date(2026, 11, 22, 4, 18, 14, 0, time.UTC)

func logAt(l *slog.Logger, level slog.Level, msg string, args ...any) {
	if !l.Enabled(context.Background(), level) {
		return
	}
	r := slog.NewRecord(at, level, msg, 0)
	r.Add(args...)
	_ = l.Handler().Handle(context.Background(), r)
}

func TestText(t *testing.T) {
	got := record(t, "text", slog.LevelInfo, func(l *slog.Logger) {
		logAt(l, slog.LevelInfo, "serving registry", "port", "50051", "configs", "/configs", "cache", "")
		logAt(l, slog.LevelWarn, "rebuilding the cache", "reason", "digest \"a\" != \"b\"\nnext")
		logAt(l, slog.LevelError, "x", "error", errors.New("boom"))
		logAt(l, slog.LevelDebug, "not shown")
		logAt(l.With("z", 1).WithGroup("g"), slog.LevelInfo, "grouped", "a", true, slog.Group("h", "b", 2.5))
	})
	want := `time="2026-11-22T04:18:14Z" level=info msg="serving registry" cache= configs=/configs port=50051
time="2026-11-22T04:18:14Z" level=warning msg="rebuilding the cache" reason="digest \"a\" != \"b\"\nnext"
time="2026-11-22T04:18:14Z" level=error msg=x error=boom
time="2026-11-22T04:18:14Z" level=info msg=grouped g.a=true g.h.b=2.5 z=1
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestJSON(t *testing.T) {
	got := record(t, "json", slog.LevelDebug, func(l *slog.Logger) {
		logAt(l, slog.LevelDebug, "index built", "duration", "12ms", "msg", "clash")
	})
	var m map[string]any
	if err := json.Unmarshal([]byte(got), &m); err != nil {
		t.Fatalf("%v: %s", err, got)
	}
	want := map[string]any{"time": "2026-11-22T04:18:14Z", "level": "debug", "msg": "index built", "duration": "12ms", "fields.msg": "clash"}
	if len(m) != len(want) {
		t.Errorf("got %v, want %v", m, want)
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
}

func TestBadFormat(t *testing.T) {
	if _, err := New(&bytes.Buffer{}, "xml", slog.LevelInfo); err == nil || err.Error() != `invalid --log-format value "xml", expected (text|json)` {
		t.Errorf("err = %v", err)
	}
}
