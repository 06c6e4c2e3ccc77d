package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/opmkit/opm/internal/fsutil"
)

// Baselines.
//
// A baseline records the findings a catalog has today, so that CI can fail
// on new ones only (`opm validate --write-baseline FILE`, then
// `--baseline FILE`). Each finding is recorded by what it is about, not by
// where: its rule, package, channels, bundle and a path to the element
// that names entries, skips, properties and related images by what they
// hold rather than by index, so that unrelated edits (a bundle added, an
// entry moved, lines inserted) leave the records valid. A record matches
// one finding; fixing a problem and making the same one elsewhere in the
// same element is not caught. Findings of rules upstream enforces are
// never recorded: they always fail.

// BaselineVersion is the version of the baseline file format.
const BaselineVersion = 1

// MaxBaselineSize bounds the size of a baseline file read.
const MaxBaselineSize = 64 << 20

// Baseline is a set of recorded findings.
type Baseline struct {
	entries []baselineEntry
	counts  map[string]int
}

// baselineEntry is one recorded finding. Message is for people reading
// the file; it does not take part in matching.
type baselineEntry struct {
	Code    string `json:"code"`
	Package string `json:"package,omitempty"`
	Channel string `json:"channel,omitempty"`
	Bundle  string `json:"bundle,omitempty"`
	Element string `json:"element,omitempty"`
	Message string `json:"message,omitempty"`
}

type baselineFile struct {
	Version  int             `json:"opmValidateBaseline"`
	Findings []baselineEntry `json:"findings"`
}

func (e baselineEntry) key() string {
	return strings.Join([]string{e.Code, e.Package, e.Channel, e.Bundle, e.Element}, "\x1f")
}

// Key identifies the problem a finding is about, independently of lines
// and of the order of elements (see Baseline).
func (f Finding) Key() string { return entryOf(f).key() }

func entryOf(f Finding) baselineEntry {
	ch := f.Channel
	if len(f.Channels) > 0 {
		ch = strings.Join(f.Channels, ",")
	}
	return baselineEntry{Code: f.Code, Package: f.Package, Channel: ch, Bundle: f.Bundle, Element: f.key, Message: f.Message}
}

// Baseline records the findings of r that can be baselined (see
// Ignorable).
func (r *Result) Baseline() *Baseline {
	b := &Baseline{counts: map[string]int{}}
	for _, f := range r.Findings {
		if !Ignorable(f.Code) {
			continue
		}
		e := entryOf(f)
		b.entries = append(b.entries, e)
		b.counts[e.key()]++
	}
	sort.SliceStable(b.entries, func(i, j int) bool {
		a, c := b.entries[i], b.entries[j]
		if a.key() != c.key() {
			return a.key() < c.key()
		}
		return a.Message < c.Message
	})
	return b
}

// Len returns the number of recorded findings.
func (b *Baseline) Len() int { return len(b.entries) }

// Write writes b as JSON.
func (b *Baseline) Write(w io.Writer) error {
	entries := b.entries
	if entries == nil {
		entries = []baselineEntry{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(baselineFile{Version: BaselineVersion, Findings: entries}); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// ReadBaseline reads a baseline written by Write, at most MaxBaselineSize
// bytes of it.
func ReadBaseline(r io.Reader) (*Baseline, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxBaselineSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxBaselineSize {
		return nil, fmt.Errorf("baseline larger than %d bytes", MaxBaselineSize)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f baselineFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not an opm validate baseline: %w", err)
	}
	if dec.More() {
		return nil, errors.New("not an opm validate baseline: data after the object")
	}
	if f.Version != BaselineVersion {
		return nil, fmt.Errorf("baseline format version %d, want %d (opmValidateBaseline)", f.Version, BaselineVersion)
	}
	b := &Baseline{entries: f.Findings, counts: map[string]int{}}
	for i, e := range f.Findings {
		if e.Code == "" {
			return nil, fmt.Errorf("baseline finding %d has no code", i)
		}
		f.Findings[i].Code = canonicalCode(e.Code) // a former code
		b.counts[f.Findings[i].key()]++
	}
	return b, nil
}

// ReadBaselineFile reads the baseline file path.
func ReadBaselineFile(path string) (*Baseline, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read baseline: %w", err)
	}
	defer f.Close()
	b, err := ReadBaseline(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// WriteFile writes b to path atomically: a temporary file beside it,
// renamed over it.
func (b *Baseline) WriteFile(path string) error {
	var buf bytes.Buffer
	if err := b.Write(&buf); err != nil {
		return err
	}
	if err := fsutil.ReplaceFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write baseline: %w", err)
	}
	return nil
}
