package compose

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/opmkit/opm/pkg/graph"
)

// WriteDiffText writes r for people: one section per changed package, "+"
// for what NEW adds, "-" for what it removes, "~" for what it changes and
// "!" for upgrade paths it loses, then a summary line and the line of
// what --fail-on would fail on.
func WriteDiffText(w io.Writer, r *Report) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format+"\n", args...) }
	if r.Empty() {
		p("No differences between %s and %s.", r.Old, r.New)
		return bw.Flush()
	}
	for _, d := range r.Packages {
		name := fmt.Sprintf("package %q", d.Name)
		if d.Name == "" {
			name = "blobs without a package"
		}
		switch d.Change {
		case Added, Removed:
			mark := "+"
			chans, bundles := d.ChannelsAdded, d.BundlesAdded
			if d.Change == Removed {
				mark = "-"
				chans, bundles = d.ChannelsRemoved, d.BundlesRemoved
			}
			names := make([]string, len(chans))
			for i, c := range chans {
				names[i] = c.Name
			}
			p("%s %s (%s): %s; %s", mark, name, d.Change, plural(len(chans), "channel", "channels")+listSuffix(names), plural(len(bundles), "bundle", "bundles"))
			continue
		}
		p("~ %s:", name)
		if d.DefaultChannel != nil {
			p("    default channel: %q -> %q", d.DefaultChannel.Old, d.DefaultChannel.New)
		}
		if len(d.Metadata) > 0 {
			p("    ~ package %s", strings.Join(d.Metadata, ", "))
		}
		for _, c := range d.ChannelsAdded {
			p("    + channel %q (%s)", c.Name, channelInfo(c))
		}
		for _, c := range d.ChannelsRemoved {
			p("    - channel %q (%s)", c.Name, channelInfo(c))
		}
		for _, b := range d.BundlesAdded {
			p("    + bundle %s", b)
		}
		for _, b := range d.BundlesRemoved {
			p("    - bundle %s", b)
		}
		for _, b := range d.BundlesChanged {
			p("    ~ bundle %s:", BundleRef{Name: b.Name, Version: b.Version})
			if b.Image != nil {
				p("        image: %s -> %s", b.Image.Old, b.Image.New)
			}
			for _, ri := range b.RelatedImagesAdded {
				p("        + related image %s", ri)
			}
			for _, ri := range b.RelatedImagesRemoved {
				p("        - related image %s", ri)
			}
			for _, pc := range b.Properties {
				writePropertyChange(p, pc)
			}
		}
		for _, c := range d.Channels {
			p("    ~ channel %q:", c.Name)
			if h := c.Head; h != nil {
				p("        head: %s -> %s%s", headText(h.Old, h.OldProblem), headText(h.New, h.NewProblem), map[bool]string{true: " (not newer)"}[h.Regressed && h.New != nil])
			}
			for _, e := range c.EntriesAdded {
				p("        + entry %s", e)
			}
			for _, e := range c.EntriesRemoved {
				p("        - entry %s", e)
			}
			for _, e := range c.EdgesAdded {
				p("        + edge %s", edgeText(e))
			}
			for _, e := range c.EdgesRemoved {
				p("        - edge %s", edgeText(e))
			}
			for _, s := range c.SkipRanges {
				p("        ~ skipRange of %s: %q -> %q", s.Entry, s.Old, s.New)
			}
		}
		for _, dep := range d.DeprecationsAdded {
			p("    + deprecation of %s: %s", depTarget(dep), oneLine(dep.Message))
		}
		for _, dep := range d.DeprecationsRemoved {
			p("    - deprecation of %s", depTarget(dep))
		}
		for _, dep := range d.DeprecationsChanged {
			p("    ~ deprecation of %s: %s", depTarget(dep), oneLine(dep.Message))
		}
		for _, o := range d.OthersAdded {
			p("    + blob %s", o)
		}
		for _, o := range d.OthersRemoved {
			p("    - blob %s", o)
		}
		for _, o := range d.OthersChanged {
			p("    ~ blob %s", o)
		}
		for _, lp := range d.LostPaths {
			p("    ! channel %q: lost the upgrade path from %s: %s", lp.Channel, lp.From, lp.Reason)
		}
	}
	c := r.Summary
	p("")
	p("Summary: packages +%d -%d ~%d; channels +%d -%d; bundles +%d -%d ~%d; entries +%d -%d; heads moved %d; edges +%d -%d; upgrade paths lost %d (%s semantics)",
		c.PackagesAdded, c.PackagesRemoved, c.PackagesChanged, c.ChannelsAdded, c.ChannelsRemoved,
		c.BundlesAdded, c.BundlesRemoved, c.BundlesChanged, c.EntriesAdded, c.EntriesRemoved,
		c.HeadsMoved, c.EdgesAdded, c.EdgesRemoved, c.LostPaths, r.Semantics)
	p("%s", gateLine(r))
	return bw.Flush()
}

// gateLine says what --fail-on would fail on, asked for or not: the
// report alone exits 0, whatever it found.
func gateLine(r *Report) string {
	var fail, pass, counts []string
	for _, k := range FailOnKinds {
		n := r.WouldFail(k)
		if n == 0 {
			pass = append(pass, string(k))
			continue
		}
		fail = append(fail, string(k))
		counts = append(counts, fmt.Sprintf("%s: %s", k, plural(n, "change", "changes")))
	}
	switch {
	case len(fail) == 0:
		return "Gate: --fail-on would pass on every kind (" + strings.Join(pass, ", ") + ")."
	case len(pass) == 0:
		return fmt.Sprintf("Gate: --fail-on %s would fail (%s).", strings.Join(fail, ","), strings.Join(counts, "; "))
	}
	return fmt.Sprintf("Gate: --fail-on %s would fail (%s); %s would pass.", strings.Join(fail, ","), strings.Join(counts, "; "), strings.Join(pass, ","))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func listSuffix(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return " (" + strings.Join(names, ", ") + ")"
}

func channelInfo(c ChannelRef) string {
	s := plural(c.Entries, "entry", "entries")
	if c.Head != nil {
		s += ", head " + c.Head.String()
	} else {
		s += ", no single head"
	}
	return s
}

func headText(b *BundleRef, problem string) string {
	if b != nil {
		return b.String()
	}
	return "none (" + problem + ")"
}

func edgeText(e graph.Edge) string {
	kind := string(e.Kind)
	if e.Kind == graph.KindSkipRange {
		kind += " " + e.Range
	}
	return fmt.Sprintf("%s -> %s (%s)", e.From, e.To, kind)
}

func depTarget(d DeprecationRef) string {
	switch d.Schema {
	case "olm.package":
		return "the package"
	case "olm.channel":
		return fmt.Sprintf("channel %q", d.Name)
	case "olm.bundle":
		return fmt.Sprintf("bundle %q", d.Name)
	}
	return fmt.Sprintf("%s %q", d.Schema, d.Name)
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " ..."
	}
	return s
}

func writePropertyChange(p func(string, ...any), pc PropertyChange) {
	shown := len(pc.AddedValues) == pc.Added && len(pc.RemovedValues) == pc.Removed
	switch {
	case shown && pc.Added == 1 && pc.Removed == 1:
		p("        %s: %s -> %s", pc.Type, pc.RemovedValues[0], pc.AddedValues[0])
	case shown:
		for _, v := range pc.AddedValues {
			p("        + %s %s", pc.Type, v)
		}
		for _, v := range pc.RemovedValues {
			p("        - %s %s", pc.Type, v)
		}
	case pc.Added == pc.Removed:
		p("        ~ %s: %s changed", pc.Type, plural(pc.Added, "value", "values"))
	default:
		p("        ~ %s: %s added, %s removed", pc.Type, plural(pc.Added, "value", "values"), plural(pc.Removed, "value", "values"))
	}
}
