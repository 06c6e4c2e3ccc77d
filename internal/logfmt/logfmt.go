// Package logfmt writes log records (log/slog) in the shapes upstream opm's
// logs have, so that scrapers written for upstream's catalog pods keep
// working:
//
//   - text, logrus's text format without a terminal:
//     time="2026-11-22T04:18:14Z" level=info msg="serving registry" configs=/configs port=50051
//     (the time in RFC 3339, levels debug, info, warning and error, the
//     message and field values quoted (Go syntax) when they hold anything
//     but letters, digits and -._/@^+, the fields sorted by key);
//   - json, logrus's JSON format: one object a line with the fields,
//     "level", "msg" and "time".
package logfmt

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Formats lists the accepted formats, the default first.
var Formats = []string{"text", "json"}

// New returns a logger writing records of level and above to w in format
// (one of Formats).
func New(w io.Writer, format string, level slog.Level) (*slog.Logger, error) {
	switch format {
	case "text", "json":
	default:
		return nil, fmt.Errorf("invalid --log-format value %q, expected (%s)", format, strings.Join(Formats, "|"))
	}
	return slog.New(&handler{out: &output{w: w}, json: format == "json", level: level}), nil
}

// output serialises writes: one record is one Write.
type output struct {
	mu sync.Mutex
	w  io.Writer
}

type handler struct {
	out    *output
	json   bool
	level  slog.Level
	attrs  []slog.Attr // from WithAttrs, keys already prefixed
	prefix string      // from WithGroup: "group." ...
}

func (h *handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = slices.Clone(h.attrs)
	for _, a := range as {
		c.attrs = appendAttr(c.attrs, h.prefix, a)
	}
	return &c
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.prefix = h.prefix + name + "."
	return &c
}

// appendAttr adds a, its key prefixed, groups flattened as "group.key".
func appendAttr(as []slog.Attr, prefix string, a slog.Attr) []slog.Attr {
	a.Value = a.Value.Resolve()
	if a.Value.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, g := range a.Value.Group() {
			as = appendAttr(as, p, g)
		}
		return as
	}
	if a.Equal(slog.Attr{}) {
		return as
	}
	a.Key = prefix + a.Key
	return append(as, a)
}

// levelName is logrus's name of a level.
func levelName(l slog.Level) string {
	switch {
	case l < slog.LevelInfo:
		return "debug"
	case l < slog.LevelWarn:
		return "info"
	case l < slog.LevelError:
		return "warning"
	}
	return "error"
}

func (h *handler) Handle(_ context.Context, r slog.Record) error {
	fields := slices.Clone(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		fields = appendAttr(fields, h.prefix, a)
		return true
	})
	// logrus sorts fields by key; a later field of the same key wins.
	slices.SortStableFunc(fields, func(a, b slog.Attr) int { return strings.Compare(a.Key, b.Key) })
	kept := fields[:0]
	for i, f := range fields {
		if i+1 < len(fields) && fields[i+1].Key == f.Key {
			continue
		}
		kept = append(kept, f)
	}
	fields = kept
	t := r.Time
	if t.IsZero() {
		t = time.Now()
	}
	ts := t.Format(time.RFC3339)
	var b []byte
	if h.json {
		m := make(map[string]any, len(fields)+3)
		for _, f := range fields {
			m[f.Key] = jsonValue(f.Value)
		}
		// logrus renames fields that clash with its own as fields.KEY.
		for _, k := range []string{"time", "level", "msg"} {
			if v, ok := m[k]; ok {
				m["fields."+k] = v
			}
		}
		m["time"], m["level"], m["msg"] = ts, levelName(r.Level), r.Message
		var err error
		if b, err = json.Marshal(m); err != nil {
			return err
		}
		b = append(b, '\n')
	} else {
		b = append(b, "time="...)
		b = appendValue(b, ts)
		b = append(b, " level="...)
		b = append(b, levelName(r.Level)...)
		b = append(b, " msg="...)
		b = appendValue(b, r.Message)
		for _, f := range fields {
			b = append(b, ' ')
			b = append(b, f.Key...)
			b = append(b, '=')
			b = appendValue(b, f.Value.String())
		}
		b = append(b, '\n')
	}
	h.out.mu.Lock()
	defer h.out.mu.Unlock()
	_, err := h.out.w.Write(b)
	return err
}

// jsonValue is v as logrus's JSON formatter writes a field: numbers and
// booleans as such, errors by their message, everything else as text.
func jsonValue(v slog.Value) any {
	switch v.Kind() {
	case slog.KindString, slog.KindInt64, slog.KindUint64, slog.KindFloat64, slog.KindBool:
		return v.Any()
	case slog.KindTime:
		return v.Time().Format(time.RFC3339)
	}
	if err, ok := v.Any().(error); ok {
		return err.Error()
	}
	return v.String()
}

// appendValue appends s, quoted as logrus quotes: when it holds anything
// but letters, digits and -._/@^+ (an empty value is not quoted).
func appendValue(b []byte, s string) []byte {
	if needsQuoting(s) {
		return strconv.AppendQuote(b, s)
	}
	return append(b, s...)
}

func needsQuoting(s string) bool {
	for _, c := range s {
		if !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			c == '-' || c == '.' || c == '_' || c == '/' || c == '@' || c == '^' || c == '+') {
			return true
		}
	}
	return false
}
