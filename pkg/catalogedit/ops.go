package catalogedit

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/suggest"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/versionrange"
)

// Change is one thing an edit did, for people and for -o json.
type Change struct {
	Kind    string `json:"kind"`
	Package string `json:"package"`
	Channel string `json:"channel,omitempty"`
	Bundle  string `json:"bundle,omitempty"`
	// File is the file the change is in, as the user names it.
	File    string `json:"file,omitempty"`
	Message string `json:"message"`
}

// Change kinds.
const (
	KindEntryAdded        = "channel-entry-added"
	KindEntryChanged      = "channel-entry-changed"
	KindEntryRemoved      = "channel-entry-removed"
	KindChannelAdded      = "channel-added"
	KindChannelRemoved    = "channel-removed"
	KindDefaultChannel    = "default-channel-set"
	KindPackageAdded      = "package-added"
	KindBundleAdded       = "bundle-added"
	KindBundleRemoved     = "bundle-removed"
	KindDeprecated        = "deprecated"
	KindUndeprecated      = "deprecation-removed"
	KindDeprecationsAdded = "deprecations-added"
	KindNone              = "unchanged"
)

// Changes returns what the operations did, in order.
func (c *Catalog) Changes() []Change { return c.changes }

func (c *Catalog) note(ch Change) { c.changes = append(c.changes, ch) }

// Edges are the upgrade edges asked for a new channel entry.
type Edges struct {
	// Replaces, when set, is the entry's replaces (no default edge then).
	Replaces string
	// Skips are added to the entry's skips.
	Skips []string
	// SkipRange is the entry's skipRange.
	SkipRange string
}

// Check reports malformed edges.
func (e Edges) Check() error {
	if e.SkipRange != "" {
		if _, err := versionrange.ParseSkipRange(e.SkipRange); err != nil {
			return fmt.Errorf("invalid skip range %q: %w", e.SkipRange, err)
		}
	}
	for _, s := range e.Skips {
		if s == "" {
			return errors.New("skips names an empty bundle")
		}
	}
	return nil
}

// errorf builds a refusal naming the package.
func refusef(format string, args ...any) error { return fmt.Errorf(format, args...) }

// requirePackage returns pkg's olm.package blob.
func (c *Catalog) requirePackage(pkg string) (*Blob, error) {
	pb := c.Package(pkg)
	if pb == nil {
		return nil, c.unknownPackage(pkg)
	}
	return pb, nil
}

// unknownPackage is the error for a package the catalog does not have.
func (c *Catalog) unknownPackage(pkg string) *suggest.UnknownError {
	var names []string
	for _, b := range c.blobs {
		if b.Schema == declcfg.SchemaPackage && !b.deleted {
			names = append(names, b.Name)
		}
	}
	return suggest.Unknown("package", pkg, "", names)
}

// unknownChannel is the error for a channel pkg does not have.
func (c *Catalog) unknownChannel(pkg, chName string) *suggest.UnknownError {
	var names []string
	for _, ch := range c.Channels(pkg) {
		names = append(names, ch.Name)
	}
	return suggest.Unknown("channel", chName, fmt.Sprintf("of package %q", pkg), names)
}

// hasBundle reports whether pkg has a bundle called name: an olm.bundle
// blob, or for a template (whose stubs carry no names) a channel entry.
func (c *Catalog) hasBundle(pkg, name string) bool {
	if c.Template {
		return c.entryNames(pkg)[name]
	}
	return c.Bundle(pkg, name) != nil
}

// entryNames returns every name the channels of pkg list.
func (c *Catalog) entryNames(pkg string) map[string]bool {
	names := map[string]bool{}
	for _, ch := range c.Channels(pkg) {
		for _, e := range ch.ch.Entries {
			names[e.Name] = true
		}
	}
	return names
}

// versionOf returns the version of pkg's bundle name (unknown for a
// template's bundles).
func (c *Catalog) versionOf(pkg, name string) (semver.Version, bool) {
	b := c.Bundle(pkg, name)
	if b == nil {
		return semver.Version{}, false
	}
	v, err := graph.BundleVersion(b.bundle)
	if err != nil {
		return semver.Version{}, false
	}
	return v, true
}

// resolveBundle returns the name of the bundle of pkg that s names: its
// name, or its version (a leading "v" is fine) when exactly one bundle has
// it. A template's bundles have no known versions.
func (c *Catalog) resolveBundle(pkg, s string) (string, error) {
	if c.hasBundle(pkg, s) {
		return s, nil
	}
	scope := fmt.Sprintf("of package %q", pkg)
	if c.Template {
		scope += " in any channel of the template"
	}
	e := suggest.Unknown("bundle", s, scope, slices.Collect(maps.Keys(c.bundleNames(pkg))))
	v, err := versionrange.ParseVersion(s)
	if err != nil || c.Template {
		return "", e
	}
	var names []string
	for _, b := range c.Bundles(pkg) {
		if bv, ok := c.versionOf(pkg, b.Name); ok && bv.Equals(v) {
			names = append(names, b.Name)
		}
	}
	sort.Strings(names)
	switch len(names) {
	case 0:
		e.Hint = fmt.Sprintf("no bundle has version %s", v)
		return "", e
	case 1:
		return names[0], nil
	}
	return "", refusef("package %q: bundles %s all have version %s; name one of them instead", pkg, strings.Join(names, ", "), v)
}

func graphEntries(es []declcfg.ChannelEntry) []graph.Entry {
	out := make([]graph.Entry, len(es))
	for i, e := range es {
		out[i] = graph.Entry{Name: e.Name, Replaces: e.Replaces, Skips: e.Skips, SkipRange: e.SkipRange}
	}
	return out
}

// channelProblem returns what is wrong with a channel's upgrade graph:
// several heads, no head, a replaces cycle or stranded entries.
func channelProblem(pkg, name string, es []declcfg.ChannelEntry) error {
	if len(es) == 0 {
		return nil
	}
	g := graph.Channel{Package: pkg, Name: name, Entries: graphEntries(es)}
	stranded, err := g.Stranded()
	if err != nil {
		var mh *graph.MultipleHeadsError
		var cy *graph.CycleError
		switch {
		case errors.As(err, &mh):
			return fmt.Errorf("two or more heads (%s): every entry but the head must be replaced or skipped by another", strings.Join(mh.Heads, ", "))
		case errors.As(err, &cy):
			return fmt.Errorf("a replaces cycle (%s)", strings.Join(cy.Path, " -> "))
		case errors.Is(err, graph.ErrNoHead):
			return errors.New("no head: every entry is replaced or skipped by another")
		}
		return err
	}
	if len(stranded) > 0 {
		return fmt.Errorf("stranded bundles (%s): neither on the replaces chain from the head nor skipped by any entry", strings.Join(stranded, ", "))
	}
	return nil
}

// checkChannelEdit refuses an edit that breaks a channel's graph (one that
// was already broken the same way, under --force, passes).
func checkChannelEdit(what, pkg, name string, before, after []declcfg.ChannelEntry) error {
	errAfter := channelProblem(pkg, name, after)
	if errAfter == nil {
		return nil
	}
	if errBefore := channelProblem(pkg, name, before); errBefore != nil && errBefore.Error() == errAfter.Error() {
		return nil
	}
	return refusef("%s would leave channel %q of package %q with %v", what, name, pkg, errAfter)
}

// --- channel entries as values ---

func entriesOf(o *Object) []any {
	v, _ := o.Get("entries")
	a, _ := v.([]any)
	return a
}

// setEntry writes a typed entry's edges into an entry value, leaving its
// other keys alone.
func setEntry(o *Object, e declcfg.ChannelEntry) {
	o.Set("name", e.Name)
	if e.Replaces != "" {
		o.Set("replaces", e.Replaces)
	} else {
		o.Delete("replaces")
	}
	if len(e.Skips) > 0 {
		skips := make([]any, len(e.Skips))
		for i, s := range e.Skips {
			skips[i] = s
		}
		o.Set("skips", skips)
	} else {
		o.Delete("skips")
	}
	if e.SkipRange != "" {
		o.Set("skipRange", e.SkipRange)
	} else {
		o.Delete("skipRange")
	}
}

// entryValue builds a new entry value shaped like its siblings.
func entryValue(e declcfg.ChannelEntry, siblings []any, sorted bool) *Object {
	o := &Object{}
	setEntry(o, e)
	if sib := mostKeys(siblings); sib != nil && len(sib.Keys) >= len(o.Keys) || !sorted {
		// like its siblings (keys they lack go last)
		return orderLike(o, mostKeys(siblings))
	}
	return writerOrder(o)
}

// writeEntries replaces a channel blob's entries with es: entries keep
// their values (and unknown keys), changed ones get the new edges, new
// ones are shaped like their siblings.
func (c *Catalog) writeEntries(b *Blob, es []declcfg.ChannelEntry) error {
	o, err := c.Edit(b)
	if err != nil {
		return err
	}
	old := entriesOf(o)
	byName := map[string]*Object{}
	for _, v := range old {
		if eo, ok := v.(*Object); ok {
			byName[eo.String("name")] = eo
		}
	}
	sorted := keysSorted(o)
	list := make([]any, 0, len(es))
	for _, e := range es {
		if eo, ok := byName[e.Name]; ok {
			ne := clone(eo).(*Object)
			setEntry(ne, e)
			list = append(list, ne)
			continue
		}
		list = append(list, entryValue(e, old, sorted))
	}
	o.Set("entries", list)
	return c.Sync(b)
}

// addEntry adds bundle name (version ver, when known) to channel chName of
// pkg with the edges asked for; a nil channel blob creates the channel.
// Without Edges.Replaces the entry replaces the channel head when it is
// newer than the head; an older bundle is skipped by the head instead.
func (c *Catalog) addEntry(what, pkg, chName, name string, ver *semver.Version, e Edges, create bool) error {
	chb := c.Channel(pkg, chName)
	if chb == nil && !create {
		e := c.unknownChannel(pkg, chName)
		e.Hint = "add --create to create it"
		return e
	}
	var before []declcfg.ChannelEntry
	if chb != nil {
		before = chb.ch.Entries
	}
	for _, x := range before {
		if x.Name == name {
			return refusef("bundle %q is already in channel %q of package %q", name, chName, pkg)
		}
	}
	entry := declcfg.ChannelEntry{Name: name, Replaces: e.Replaces, SkipRange: e.SkipRange}
	for _, s := range e.Skips {
		if !slices.Contains(entry.Skips, s) && s != name {
			entry.Skips = append(entry.Skips, s)
		}
	}
	after := slices.Clone(before)
	for i := range after {
		after[i].Skips = slices.Clone(after[i].Skips)
	}
	detail := ""
	if e.Replaces == "" && len(before) > 0 {
		head, err := (&graph.Channel{Entries: graphEntries(before)}).Head()
		if err != nil {
			return refusef("%s: channel %q of package %q has no single head (%v); name the edge with --replaces", what, chName, pkg, err)
		}
		headVer, headKnown := c.versionOf(pkg, head)
		reachedBy := ""
		for _, x := range before {
			if x.Replaces == name || slices.Contains(x.Skips, name) {
				reachedBy = x.Name
				break
			}
		}
		switch {
		case slices.Contains(entry.Skips, head):
			detail = "skips the head " + head
		case reachedBy != "":
			// an entry already upgrades from it: it needs no edge of its own
			detail = "already replaced or skipped by " + reachedBy
		case ver != nil && headKnown && ver.LT(headVer):
			// an older bundle: the head skips it, so that its installs
			// upgrade to the head
			for i := range after {
				if after[i].Name == head {
					after[i].Skips = append(after[i].Skips, name)
				}
			}
			detail = fmt.Sprintf("older than the head %s, which now skips it", head)
			c.note(Change{Kind: KindEntryChanged, Package: pkg, Channel: chName, Bundle: head, File: c.fileOf(chb),
				Message: fmt.Sprintf("%s now skips %s in channel %s", head, name, chName)})
		default:
			entry.Replaces = head
			detail = "replaces " + head
		}
	} else if e.Replaces != "" {
		detail = "replaces " + e.Replaces
	}
	// keep entries in version order when they are
	at := len(after)
	if ver != nil {
		at = c.versionSlot(pkg, after, *ver)
	}
	after = slices.Insert(after, at, entry)
	if err := checkChannelEdit(what, pkg, chName, before, after); err != nil {
		return err
	}
	if chb == nil {
		if err := c.createChannel(pkg, chName, after); err != nil {
			return err
		}
	} else if err := c.writeEntries(chb, after); err != nil {
		return err
	}
	msg := fmt.Sprintf("added %s to channel %s", name, chName)
	if detail != "" {
		msg += " (" + detail + ")"
	}
	c.note(Change{Kind: KindEntryAdded, Package: pkg, Channel: chName, Bundle: name, File: c.fileOf(c.Channel(pkg, chName)), Message: msg})
	return nil
}

// versionSlot returns where an entry of version v goes among es: before
// the first newer entry when es is in increasing version order, else at
// the end.
func (c *Catalog) versionSlot(pkg string, es []declcfg.ChannelEntry, v semver.Version) int {
	var prev *semver.Version
	slot := -1
	for i, e := range es {
		ev, ok := c.versionOf(pkg, e.Name)
		if !ok {
			return len(es)
		}
		if prev != nil && ev.LT(*prev) {
			return len(es)
		}
		if slot < 0 && ev.GT(v) {
			slot = i
		}
		prev = &ev
	}
	if slot < 0 {
		return len(es)
	}
	return slot
}

func (c *Catalog) fileOf(b *Blob) string {
	if b == nil {
		return ""
	}
	if b.created {
		if b.newFile != "" {
			return c.DisplayName(b.newFile)
		}
		if b.anchor != nil {
			return c.DisplayName(b.anchor.Pos.File)
		}
		return c.DisplayName(c.single)
	}
	return c.DisplayName(b.Pos.File)
}

// ErrCommaInChannel is matched by the error of a channel name that holds
// a comma (see CheckChannelName).
var ErrCommaInChannel = errors.New("channel names cannot hold commas (lists of channels are comma-separated)")

// CheckChannelName refuses a channel name that is empty or holds a comma:
// channels are listed comma-separated (the bundle annotation
// operators.operatorframework.io.bundle.channels.v1, opm's --channel and
// --to), so such a name could never be named again.
func CheckChannelName(name string) error {
	if strings.TrimSpace(name) == "" {
		return errors.New("empty channel name")
	}
	if strings.Contains(name, ",") {
		return fmt.Errorf("channel name %q holds a comma: %w", name, ErrCommaInChannel)
	}
	return nil
}

// createChannel adds a channel blob.
func (c *Catalog) createChannel(pkg, name string, es []declcfg.ChannelEntry) error {
	if err := CheckChannelName(name); err != nil {
		return refusef("%v", err)
	}
	place, err := c.placeChannel(pkg, name)
	if err != nil {
		return err
	}
	ch := declcfg.Channel{Schema: declcfg.SchemaChannel, Name: name, Package: pkg, Entries: es}
	v, err := c.newValue(ch, place, declcfg.SchemaChannel)
	if err != nil {
		return err
	}
	b, err := c.Create(v, place)
	if err != nil {
		return err
	}
	c.note(Change{Kind: KindChannelAdded, Package: pkg, Channel: name, File: c.fileOf(b), Message: "added channel " + name})
	return nil
}

// newValue converts a typed blob to a value shaped like the blobs of the
// file it goes into.
func (c *Catalog) newValue(x any, place Place, schema string) (*Object, error) {
	v, err := valueOf(x)
	if err != nil {
		return nil, err
	}
	o := v.(*Object)
	// entries of a new channel: name, replaces, skips, skipRange as the
	// struct writes them; an empty list is written as such
	file := place.StyleFile
	for a := place.After; a != nil; a = a.anchor {
		if !a.created {
			file = a.Pos.File
			break
		}
		if a.newFile != "" {
			file = a.styleFile
			break
		}
	}
	if file == "" && !c.dir {
		file = c.single
	}
	ref := c.refValue(file, schema)
	return shapeNew(o, ref), nil
}

// refValue returns the value of a blob of file to shape new blobs on: the
// first one of schema, else the first one.
func (c *Catalog) refValue(file, schema string) *Object {
	bs := c.byFile[file]
	if len(bs) == 0 {
		return nil
	}
	pick := bs[0]
	for _, b := range bs {
		if b.Schema == schema {
			pick = b
			break
		}
	}
	if err := c.load(pick); err != nil {
		return nil
	}
	return pick.orig
}

// --- operations ---

// Promote adds an existing bundle of pkg to channel chName (creating the
// channel when create is set).
func (c *Catalog) Promote(pkg, bundle, chName string, e Edges, create bool) error {
	if err := e.Check(); err != nil {
		return err
	}
	if _, err := c.requirePackage(pkg); err != nil {
		return err
	}
	bundle, err := c.resolveBundle(pkg, bundle)
	if err != nil {
		return err
	}
	var ver *semver.Version
	if v, ok := c.versionOf(pkg, bundle); ok {
		ver = &v
	}
	what := fmt.Sprintf("promoting %s", bundle)
	return c.addEntry(what, pkg, chName, bundle, ver, e, create)
}

// SetDefaultChannel makes chName the default channel of pkg.
func (c *Catalog) SetDefaultChannel(pkg, chName string) error {
	pb, err := c.requirePackage(pkg)
	if err != nil {
		return err
	}
	if c.Channel(pkg, chName) == nil {
		return c.unknownChannel(pkg, chName)
	}
	old := pb.pkg.DefaultChannel
	if old == chName {
		c.note(Change{Kind: KindNone, Package: pkg, Channel: chName, File: c.fileOf(pb), Message: fmt.Sprintf("%s is already the default channel of %s", chName, pkg)})
		return nil
	}
	o, err := c.Edit(pb)
	if err != nil {
		return err
	}
	o.Set("defaultChannel", chName)
	if err := c.Sync(pb); err != nil {
		return err
	}
	c.note(Change{Kind: KindDefaultChannel, Package: pkg, Channel: chName, File: c.fileOf(pb),
		Message: fmt.Sprintf("default channel of %s: %s (was %s)", pkg, chName, old)})
	return nil
}
