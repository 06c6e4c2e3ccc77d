package graph

import (
	"errors"
	"sort"
	"strings"
)

// Entry is one member of a channel and the upgrade edges it declares.
type Entry struct {
	Name      string
	Replaces  string
	Skips     []string
	SkipRange string
}

// Channel is the entries of one channel of one package, in declaration
// order. Entry names are expected to be unique (the model rejects
// duplicates before any graph check); when they are not, the first entry of
// a name wins.
type Channel struct {
	Package string
	Name    string
	Entries []Entry
}

// ErrNoHead is returned by [Channel.Head] when every entry is replaced or
// skipped by another (upstream's wording).
var ErrNoHead = errors.New("no channel head found in graph")

// MultipleHeadsError is returned by [Channel.Head] when more than one entry
// has no incoming replaces or skips edge.
type MultipleHeadsError struct {
	Heads []string // sorted
}

func (e *MultipleHeadsError) Error() string {
	return "multiple channel heads found in graph: " + strings.Join(e.Heads, ", ")
}

// CycleError is returned by [Channel.ReplacesChain] when the walk from the
// head along replaces revisits an entry.
type CycleError struct {
	// Path runs from the first repeated entry back to itself, e.g.
	// [b a b].
	Path []string
}

func (e *CycleError) Error() string {
	return "detected cycle in replaces chain of upgrade graph: " + strings.Join(e.Path, " -> ")
}

// StrandedError is the upstream validation message for stranded bundles;
// [Channel.Stranded] returns the names and callers build this error when
// the list is not empty.
type StrandedError struct {
	Bundles []string // sorted
}

func (e *StrandedError) Error() string {
	return "channel contains one or more stranded bundles: " + strings.Join(e.Bundles, ", ")
}

// Head returns the channel head: the single entry that no entry of the
// channel replaces or skips. Incoming edges are counted whether or not
// their source makes sense; skipRange does not count, as upstream.
func (c *Channel) Head() (string, error) {
	incoming := make(map[string]bool, len(c.Entries))
	for _, e := range c.Entries {
		if e.Replaces != "" {
			incoming[e.Replaces] = true
		}
		for _, s := range e.Skips {
			incoming[s] = true
		}
	}
	var heads []string
	seen := make(map[string]bool, len(c.Entries))
	for _, e := range c.Entries {
		if seen[e.Name] {
			continue
		}
		seen[e.Name] = true
		if !incoming[e.Name] {
			heads = append(heads, e.Name)
		}
	}
	switch len(heads) {
	case 0:
		return "", ErrNoHead
	case 1:
		return heads[0], nil
	}
	sort.Strings(heads)
	return "", &MultipleHeadsError{Heads: heads}
}

// index maps entry names to their first position in Entries.
func (c *Channel) index() map[string]int {
	idx := make(map[string]int, len(c.Entries))
	for i, e := range c.Entries {
		if _, ok := idx[e.Name]; !ok {
			idx[e.Name] = i
		}
	}
	return idx
}

// skipped returns every name that some entry skips.
func (c *Channel) skipped() map[string]bool {
	s := make(map[string]bool)
	for _, e := range c.Entries {
		for _, n := range e.Skips {
			s[n] = true
		}
	}
	return s
}

// ReplacesChain walks from the head along replaces and returns the entries
// visited, head first. The walk stops when the next target is skipped by
// any entry of the channel (upstream: "the replaces edge is known to be
// skipped, disregard it") or is not an entry of the channel (including
// ""). Revisiting an entry is a *CycleError; a channel without a single
// head returns Head's error.
func (c *Channel) ReplacesChain() ([]string, error) {
	head, err := c.Head()
	if err != nil {
		return nil, err
	}
	return c.ChainFrom(head)
}

// Stranded returns the entries that are neither on the replaces chain nor
// skipped by any entry, sorted: no upgrade ever reaches or leaves them.
// The error is ReplacesChain's.
func (c *Channel) Stranded() ([]string, error) {
	chain, err := c.ReplacesChain()
	if err != nil {
		return nil, err
	}
	on := make(map[string]bool, len(chain))
	for _, n := range chain {
		on[n] = true
	}
	skipped := c.skipped()
	var out []string
	seen := make(map[string]bool, len(c.Entries))
	for _, e := range c.Entries {
		if on[e.Name] || skipped[e.Name] || seen[e.Name] {
			continue
		}
		seen[e.Name] = true
		out = append(out, e.Name)
	}
	sort.Strings(out)
	return out, nil
}
