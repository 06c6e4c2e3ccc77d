package serve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/opmkit/opm/internal/fsutil"
)

// Comparing a cache with its catalog.
//
// A cache's digests and seal say which catalog it was built from, but
// they are not keyed: whoever can write the cache can build it from one
// catalog and record the digest of another. The only proof that a cache
// holds what the catalog says is to build the index from the catalog again
// and compare what the two serve; Compare does the comparing. It compares
// what a client can ask for (records in ListBundles order, packages,
// channels and their heads, bundles with their manifests and CSV metadata,
// custom-schema blobs, the HTTP API's lines), not how the data file lays
// them out, which depends on the order in which files were parsed.

// MaxDifferences is how many differences Compare describes; the others are
// only counted.
const MaxDifferences = 20

// Differences are what Compare found: the first MaxDifferences described,
// and how many more there were.
type Differences struct {
	List []string
	More int
}

// Empty reports whether nothing differed.
func (d *Differences) Empty() bool { return len(d.List) == 0 && d.More == 0 }

// String is the first difference, and how many more there are.
func (d *Differences) String() string {
	if d.Empty() {
		return "no difference"
	}
	n := len(d.List) - 1 + d.More
	if n == 0 {
		return d.List[0]
	}
	return fmt.Sprintf("%s (and %d more difference%s)", d.List[0], n, plural(n))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Add records a difference (only counted beyond MaxDifferences).
func (d *Differences) Add(format string, args ...any) {
	if len(d.List) < MaxDifferences {
		d.List = append(d.List, fmt.Sprintf(format, args...))
		return
	}
	d.More++
}

// Compare compares the index of a cache (cached) with the index built from
// the catalog (built) as clients see them. The HTTP API's data is compared
// when both have it. built may be built with HashOnly: its sections are
// then compared by their SHA-256 digests, and nothing needs writing.
func Compare(ctx context.Context, cached, built *Index) (*Differences, error) {
	if cached.sums != nil {
		return nil, errors.New("compare: the cache's index has no data file")
	}
	c := &comparer{a: cached, b: built, d: &Differences{}, seen: map[[2]int32]bool{}}
	if err := c.records(ctx); err != nil {
		return nil, err
	}
	if err := c.packages(ctx); err != nil {
		return nil, err
	}
	if err := c.custom(ctx); err != nil {
		return nil, err
	}
	if cached.http != nil && built.http != nil {
		if err := c.http(ctx); err != nil {
			return nil, err
		}
	}
	return c.d, nil
}

type comparer struct {
	a, b *Index // the cache's, the catalog's
	d    *Differences
	seen map[[2]int32]bool // bundle pairs compared
}

// short quotes s, cut to 80 bytes.
func short(s string) string {
	if len(s) > 80 {
		return fmt.Sprintf("%q... (%d bytes)", s[:80], len(s))
	}
	return fmt.Sprintf("%q", s)
}

func (c *comparer) str(what, a, b string) {
	if a != b {
		c.d.Add("%s: the cache has %s, the catalog %s", what, short(a), short(b))
	}
}

type recordKey struct{ pkg, channel, bundle string }

func (k recordKey) String() string {
	return fmt.Sprintf("package %q, channel %q, bundle %q", k.pkg, k.channel, k.bundle)
}

func (x *Index) recordKey(r int32) recordKey {
	return recordKey{x.PackageOf(r).Name, x.ChannelOf(r).Name, x.BundleOf(r).Name}
}

// records compares the (package, channel, bundle) records, ListBundles'
// answer: the same set, in the same order, with the same edges and
// bundles.
func (c *comparer) records(ctx context.Context) error {
	inB := make(map[recordKey]int32, len(c.b.records))
	for r := range c.b.records {
		inB[c.b.recordKey(int32(r))] = int32(r)
	}
	seen := make(map[recordKey]bool, len(c.a.records))
	sameOrder := len(c.a.records) == len(c.b.records)
	for r := range c.a.records {
		if r%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		k := c.a.recordKey(int32(r))
		if seen[k] {
			c.d.Add("%s: listed twice in the cache", k)
			continue
		}
		seen[k] = true
		rb, ok := inB[k]
		if !ok {
			c.d.Add("%s: in the cache, not in the catalog", k)
			sameOrder = false
			continue
		}
		sameOrder = sameOrder && rb == int32(r)
		ra, recB := &c.a.records[r], &c.b.records[rb]
		c.str(k.String()+": replaces", ra.Replaces, recB.Replaces)
		if !slices.Equal(ra.Skips, recB.Skips) {
			c.d.Add("%s: skips: the cache has %s, the catalog %s", k, short(strings.Join(ra.Skips, ", ")), short(strings.Join(recB.Skips, ", ")))
		}
		c.str(k.String()+": skipRange", ra.SkipRange, recB.SkipRange)
		if err := c.bundle(ra.Bundle, recB.Bundle); err != nil {
			return err
		}
	}
	for r := range c.b.records {
		if k := c.b.recordKey(int32(r)); !seen[k] {
			c.d.Add("%s: in the catalog, not in the cache", k)
		}
	}
	if !sameOrder && len(c.a.records) == len(c.b.records) && len(seen) == len(inB) {
		c.d.Add("the cache lists the bundles in another order than the catalog")
	}
	return nil
}

// bundle compares bundle a of the cache with bundle b of the catalog, once.
func (c *comparer) bundle(ai, bi int32) error {
	if c.seen[[2]int32{ai, bi}] {
		return nil
	}
	c.seen[[2]int32{ai, bi}] = true
	a, b := &c.a.bundles[ai], &c.b.bundles[bi]
	what := fmt.Sprintf("package %q, bundle %q", b.Package, b.Name)
	c.str(what+": package", a.Package, b.Package)
	c.str(what+": name", a.Name, b.Name)
	c.str(what+": image", a.Image, b.Image)
	c.str(what+": version", a.Version, b.Version)
	c.str(what+": deprecation", deprecationText(a.Deprecation), deprecationText(b.Deprecation))
	c.list(what+": properties", len(a.Properties), len(b.Properties), func(i int) (string, string) {
		return a.Properties[i].Type + " " + a.Properties[i].Value, b.Properties[i].Type + " " + b.Properties[i].Value
	})
	c.list(what+": dependencies", len(a.Deps), len(b.Deps), func(i int) (string, string) {
		return a.Deps[i].Type + " " + a.Deps[i].Value, b.Deps[i].Type + " " + b.Deps[i].Value
	})
	c.list(what+": provided APIs", len(a.Provided), len(b.Provided), func(i int) (string, string) {
		return a.Provided[i].String(), b.Provided[i].String()
	})
	c.list(what+": required APIs", len(a.Required), len(b.Required), func(i int) (string, string) {
		return a.Required[i].String(), b.Required[i].String()
	})
	c.str(what+": version of the stub CSV", a.SemVer, b.SemVer)
	c.list(what+": related images", len(a.RelatedImages), len(b.RelatedImages), func(i int) (string, string) {
		return a.RelatedImages[i].Name + " " + a.RelatedImages[i].Image, b.RelatedImages[i].Name + " " + b.RelatedImages[i].Image
	})
	if err := c.section(what+": manifests (olm.bundle.object)", a.Objects, b.Objects); err != nil {
		return err
	}
	return c.section(what+": olm.csv.metadata", a.Meta, b.Meta)
}

// list compares two lists element by element; at returns the texts of
// element i of each.
func (c *comparer) list(what string, na, nb int, at func(i int) (string, string)) {
	for i := range min(na, nb) {
		if a, b := at(i); a != b {
			c.d.Add("%s[%d]: the cache has %s, the catalog %s", what, i, short(a), short(b))
			return
		}
	}
	if na != nb {
		c.d.Add("%s: %d in the cache, %d in the catalog", what, na, nb)
	}
}

// section compares a data file section of the cache with one of the
// catalog's index.
func (c *comparer) section(what string, a, b span) error {
	if a.Len != b.Len {
		c.d.Add("%s: %d bytes in the cache, %d in the catalog", what, a.Len, b.Len)
		return nil
	}
	if a.Len == 0 {
		return nil
	}
	if c.b.sums != nil {
		same, err := c.sameSum(a, b)
		if err != nil {
			return fmt.Errorf("the cache's %s: %w", what, err)
		}
		if !same {
			c.d.Add("%s: the cache's differ from the catalog's", what)
		}
		return nil
	}
	ab, err := c.a.read(a)
	if err != nil {
		return fmt.Errorf("the cache's %s: %w", what, err)
	}
	bb, err := c.b.read(b)
	if err != nil {
		return err
	}
	if !bytes.Equal(ab, bb) {
		c.d.Add("%s: the cache's differ from the catalog's", what)
	}
	return nil
}

// sameSum reports whether the section a of the cache's data file has the
// digest the catalog's HashOnly index recorded for its section b;
// sameSumAt reads a from r (the data file, or the HTTP API's catalog).
func (c *comparer) sameSum(a, b span) (bool, error) {
	return c.sameSumAt(c.a.data, a, b)
}

func (c *comparer) sameSumAt(r io.ReaderAt, a, b span) (bool, error) {
	want, ok := c.b.sums[b.Off]
	if !ok {
		return false, fmt.Errorf("no digest of the section at %d", b.Off)
	}
	if r == nil {
		return false, errCorrupt
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(r, a.Off, a.Len)); err != nil {
		return false, err
	}
	return bytes.Equal(h.Sum(nil), want[:]), nil
}

func (g GVK) String() string { return g.Group + "/" + g.Version + ", Kind=" + g.Kind }

func deprecationText(d Deprecation) string {
	if !d.Set {
		return "(none)"
	}
	return d.Message
}

// packages compares the packages (GetPackage, ListPackages, the stub CSVs'
// description and icon) and their channels.
func (c *comparer) packages(ctx context.Context) error {
	for _, name := range unionSorted(c.a.byName, c.b.byName) {
		if err := ctx.Err(); err != nil {
			return err
		}
		pa, okA := c.a.Package(name)
		pb, okB := c.b.Package(name)
		switch {
		case !okB:
			c.d.Add("package %q: in the cache, not in the catalog", name)
			continue
		case !okA:
			c.d.Add("package %q: in the catalog, not in the cache", name)
			continue
		}
		what := fmt.Sprintf("package %q", name)
		c.str(what+": default channel", pa.DefaultChannel, pb.DefaultChannel)
		c.str(what+": deprecation", deprecationText(pa.Deprecation), deprecationText(pb.Deprecation))
		c.str(what+": description", pa.Description, pb.Description)
		c.str(what+": icon", iconText(pa.Icon), iconText(pb.Icon))
		for i := 0; i < len(pa.Channels) || i < len(pb.Channels); i++ {
			switch {
			case i >= len(pa.Channels):
				c.d.Add("%s, channel %q: in the catalog, not in the cache", what, pb.Channels[i].Name)
				continue
			case i >= len(pb.Channels):
				c.d.Add("%s, channel %q: in the cache, not in the catalog", what, pa.Channels[i].Name)
				continue
			}
			ca, cb := &pa.Channels[i], &pb.Channels[i]
			if ca.Name != cb.Name {
				c.d.Add("%s: channel %d: the cache has %s, the catalog %s", what, i, short(ca.Name), short(cb.Name))
				continue
			}
			cwhat := fmt.Sprintf("%s, channel %q", what, ca.Name)
			c.str(cwhat+": deprecation", deprecationText(ca.Deprecation), deprecationText(cb.Deprecation))
			c.str(cwhat+": head", c.a.headName(ca), c.b.headName(cb))
			c.list(cwhat+": bundles", len(ca.Records), len(cb.Records), func(j int) (string, string) {
				return c.a.BundleOf(ca.Records[j]).Name, c.b.BundleOf(cb.Records[j]).Name
			})
		}
	}
	return nil
}

func (x *Index) headName(ch *Channel) string {
	if ch.Head < 0 {
		return ""
	}
	return x.BundleOf(ch.Head).Name
}

func iconText(ic *Icon) string {
	if ic == nil {
		return "(none)"
	}
	return ic.MediaType + " " + string(ic.Data)
}

func unionSorted[V any](a, b map[string]V) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// custom compares the custom-schema blobs, per schema and package, in
// order.
func (c *comparer) custom(ctx context.Context) error {
	keys := sortedCustomKeys(c.a.custom)
	for k := range c.b.custom {
		if _, ok := c.a.custom[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		if err := ctx.Err(); err != nil {
			return err
		}
		what := fmt.Sprintf("custom blobs of schema %q", k.Schema)
		if k.Package != "" {
			what += fmt.Sprintf(", package %q", k.Package)
		}
		sa, sb := c.a.custom[k], c.b.custom[k]
		if len(sa) != len(sb) {
			c.d.Add("%s: %d in the cache, %d in the catalog", what, len(sa), len(sb))
			continue
		}
		for i := range sa {
			n := c.d.More + len(c.d.List)
			if err := c.section(fmt.Sprintf("%s[%d]", what, i), sa[i], sb[i]); err != nil {
				return err
			}
			if c.d.More+len(c.d.List) > n {
				break
			}
		}
	}
	return nil
}

// http compares the HTTP API's data: catalogd's catalog.jsonl and the
// lines each schema, package and name selects.
func (c *comparer) http(ctx context.Context) error {
	ha, hb := c.a.http, c.b.http
	if ha.size != hb.size {
		c.d.Add("the HTTP API's catalog: %d bytes in the cache, %d in the catalog", ha.size, hb.size)
		return nil
	}
	if c.b.sums != nil {
		// The catalog's lines, file by file, against the same ranges of
		// the cache's catalog.jsonl.
		for _, seg := range hb.segs {
			if err := ctx.Err(); err != nil {
				return err
			}
			same, err := c.sameSumAt(c.a.catalog(), span{Off: seg.virt, Len: seg.Len}, seg.span)
			if err != nil {
				return fmt.Errorf("the cache's HTTP data: %w", err)
			}
			if !same {
				c.d.Add("the HTTP API's catalog: the cache's differs from the catalog's")
				return nil
			}
		}
		return c.httpMaps()
	}
	same, err := fsutil.SameContent(ctx, c.a.catalog(), c.b.catalog())
	if err != nil {
		return fmt.Errorf("the HTTP data: %w", err)
	}
	if !same {
		c.d.Add("the HTTP API's catalog: the cache's differs from the catalog's")
		return nil
	}
	return c.httpMaps()
}

// httpMaps compares the lines each schema, package and name selects.
func (c *comparer) httpMaps() error {
	ha, hb := c.a.http, c.b.http
	for _, m := range []struct {
		what string
		a, b map[string][]span
	}{{"schema", ha.schema, hb.schema}, {"package", ha.pkg, hb.pkg}, {"name", ha.name, hb.name}} {
		for _, k := range unionSorted(m.a, m.b) {
			if !slices.Equal(m.a[k], m.b[k]) {
				c.d.Add("the HTTP API's lines of %s %q: %d in the cache, %d in the catalog, or at other places", m.what, k, len(m.a[k]), len(m.b[k]))
			}
		}
	}
	return nil
}
