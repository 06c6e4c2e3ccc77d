package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/ocpversion"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/property"
)

// OpenShiftVersion is an OpenShift minor version (4.y): the unit
// olm.maxOpenShiftVersion and cluster upgrade checks compare.
type OpenShiftVersion = ocpversion.Version

// maxOpenShiftValueLimit bounds the raw value we try to read.
const maxOpenShiftValueLimit = 256

// ParseMaxOpenShiftVersion reads the value of an olm.maxOpenShiftVersion
// property. Real catalogs write it as a JSON string ("4.16") or a number
// (4.17); both are accepted, as are a "v" prefix, surrounding spaces, a
// bare major ("4" is 4.0) and a zero patch ("4.16.0"), as OLM reads it.
// Anything else is malformed: another JSON type, an empty string, a patch
// other than 0, a pre-release or build metadata, text that is not a
// version. OLM treats a malformed value as blocking cluster upgrades.
//
// A YAML number loses trailing zeros before it reaches the catalog's JSON
// (4.10 becomes 4.1): catalogs should write the value as a string.
func ParseMaxOpenShiftVersion(raw json.RawMessage) (OpenShiftVersion, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > maxOpenShiftValueLimit {
		return OpenShiftVersion{}, fmt.Errorf("value is %d bytes long, expected a version such as \"4.16\"", len(raw))
	}
	var s string
	switch {
	case len(raw) == 0:
		return OpenShiftVersion{}, errors.New("value is missing, expected a version such as \"4.16\"")
	case raw[0] == '"':
		if err := json.Unmarshal(raw, &s); err != nil {
			return OpenShiftVersion{}, fmt.Errorf("value %s is not a JSON string: %w", raw, err)
		}
	case raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9'):
		var n json.Number
		if err := json.Unmarshal(raw, &n); err != nil {
			return OpenShiftVersion{}, fmt.Errorf("value %s is not a JSON number: %w", raw, err)
		}
		s = n.String()
	default:
		return OpenShiftVersion{}, fmt.Errorf("value %s is neither a string nor a number, expected a version such as \"4.16\"", raw)
	}
	return parseMinorVersion(s)
}

func parseMinorVersion(s string) (OpenShiftVersion, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return OpenShiftVersion{}, errors.New(`value is "" (an empty string), expected a version such as "4.16"`)
	}
	digits := strings.TrimLeft(t, "vV")
	v, err := semver.ParseTolerant(t)
	switch {
	case err != nil || digits == "" || digits[0] < '0' || digits[0] > '9':
		return OpenShiftVersion{}, fmt.Errorf("%q is not a version such as \"4.16\"", s)
	case v.Patch != 0 || len(v.Pre) > 0 || len(v.Build) > 0:
		return OpenShiftVersion{}, fmt.Errorf("%q must give only <major>.<minor>, such as \"4.16\"", s)
	}
	return ocpversion.FromUint(v.Major, v.Minor), nil
}

// NextMinor returns the minor version a cluster at version s upgrades to
// next (4.y+1). Only the major and minor count: 4.18.3, 4.18.0-rc1 and
// 4.18 all give 4.19.
func NextMinor(s string) (OpenShiftVersion, error) {
	t := strings.TrimSpace(s)
	v, err := semver.ParseTolerant(t)
	if err != nil || t == "" {
		if err == nil {
			err = errors.New("empty")
		}
		return OpenShiftVersion{}, fmt.Errorf("invalid cluster version %q: %w", s, err)
	}
	next := ocpversion.FromUint(v.Major, v.Minor)
	if next.Minor < math.MaxInt {
		next.Minor++
	}
	return next, nil
}

// maxOpenShiftOf reads a bundle's olm.maxOpenShiftVersion: none (nil,
// nil), the version, or why it is malformed (more than one property is
// malformed too, as OLM reads it).
func maxOpenShiftOf(b *declcfg.Bundle) (*OpenShiftVersion, error) {
	var raw json.RawMessage
	n := 0
	for _, p := range b.Properties {
		if p.Type == property.TypeMaxOpenShift {
			n++
			raw = p.Value
		}
	}
	switch n {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, fmt.Errorf("%d %s properties, expected at most 1", n, property.TypeMaxOpenShift)
	}
	v, err := ParseMaxOpenShiftVersion(raw)
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// BundleMaxOpenShiftVersion returns the olm.maxOpenShiftVersion of b: nil
// when it has none, an error when it is malformed or given more than once.
func BundleMaxOpenShiftVersion(b *declcfg.Bundle) (*OpenShiftVersion, error) {
	return maxOpenShiftOf(b)
}

// Blocks reports whether bundle n, installed, blocks a cluster upgrade to
// the minor version next: its olm.maxOpenShiftVersion is below next, or
// malformed (OLM treats a value it cannot read as blocking). A node without
// a bundle (HasBundle false) is unknown: blocks is false and known false.
func (n *Node) Blocks(next OpenShiftVersion) (blocks, known bool) {
	if !n.HasBundle {
		return false, false
	}
	if n.MaxOpenShiftErr != nil {
		return true, true
	}
	return n.MaxOpenShift != nil && n.MaxOpenShift.Compare(next) < 0, true
}

// allowsText says why n allows the minor version next.
func (n *Node) allowsText(next OpenShiftVersion) string {
	if n.MaxOpenShift == nil {
		return fmt.Sprintf("sets no olm.maxOpenShiftVersion, so it allows %s", next)
	}
	return fmt.Sprintf("has olm.maxOpenShiftVersion %s, which allows %s", n.MaxOpenShift, next)
}

// ClusterStatus is what an installed bundle means for a cluster upgrade.
type ClusterStatus string

// Cluster statuses.
const (
	// ClusterOK: the bundle allows the next minor version.
	ClusterOK ClusterStatus = "ok"
	// ClusterBlocks: the bundle's olm.maxOpenShiftVersion is below the next
	// minor version, or malformed.
	ClusterBlocks ClusterStatus = "blocks"
	// ClusterUnknown: the installed bundle is not in the catalog, so its
	// olm.maxOpenShiftVersion is unknown.
	ClusterUnknown ClusterStatus = "unknown"
)

// ClusterCheck is the answer for one installed bundle: whether it lets the
// cluster move to the next minor version, and if not, the upgrade path to
// the nearest bundle that does.
type ClusterCheck struct {
	Package   string
	Semantics Semantics
	Channels  []string
	Installed Installed
	Next      OpenShiftVersion
	Status    ClusterStatus
	// Max and MaxErr are the installed bundle's olm.maxOpenShiftVersion
	// (both nil when it has none or is not in the catalog).
	Max    *OpenShiftVersion
	MaxErr error
	// Reason explains Status.
	Reason string
	// Path leads to Target, the nearest bundle (fewest upgrades, then
	// lowest version) that does not block, when Status is not ok and one
	// is reachable under the semantics. Target is nil otherwise.
	Path   *Path
	Target *Node
	// Remove is set when the bundle blocks and no bundle that does not
	// block is reachable: the operator must be removed before the cluster
	// upgrade.
	Remove bool
	// Advice says what to do, in a sentence.
	Advice string
	// Unreachable lists, when no Target is found, the bundles of the
	// channels that do not block but that the semantics never reaches from
	// the installed bundle (under V1, only those above it).
	Unreachable []*Node
	// InOtherChannels is set when the installed bundle is an entry of none
	// of Channels but of other channels of the package: it lists them;
	// ChannelNote says so in a sentence.
	InOtherChannels []string
	ChannelNote     string
}

// CheckClusterUpgrade reports whether in blocks a cluster upgrade to the
// minor version next and, when it does (or when its bundle is unknown), the
// path within its channels to the nearest bundle that does not. Channels
// are chosen as for [PackageGraph.Path]; under Classic exactly one. The
// walk stops with ctx's error once ctx is done.
func (p *PackageGraph) CheckClusterUpgrade(ctx context.Context, in Installed, next OpenShiftVersion, sem Semantics, channels []string) (*ClusterCheck, error) {
	opts := PathOptions{Semantics: sem, Channels: channels, Context: ctx}
	if sem == Classic && len(channels) > 1 {
		return nil, fmt.Errorf("package %q: OLM classic follows one channel, got %d (%s)", p.Name, len(channels), strings.Join(channels, ", "))
	}
	walk, err := p.Path(in, opts)
	if err != nil {
		return nil, err
	}
	chk := &ClusterCheck{Package: p.Name, Semantics: sem, Channels: walk[0].Channels, Installed: in, Next: next,
		InOtherChannels: walk[0].InOtherChannels}
	if len(chk.InOtherChannels) > 0 {
		chk.ChannelNote = notInChannelsNote(walk[0])
	}
	cur := stepNode(p, in)
	chk.Max, chk.MaxErr = cur.MaxOpenShift, cur.MaxOpenShiftErr
	switch blocks, known := cur.Blocks(next); {
	case !known:
		chk.Status = ClusterUnknown
		chk.Reason = "the installed bundle is not in the catalog, so its olm.maxOpenShiftVersion is unknown"
	case !blocks:
		chk.Status = ClusterOK
		if cur.MaxOpenShift == nil {
			chk.Reason = "the installed bundle sets no olm.maxOpenShiftVersion"
		} else {
			chk.Reason = fmt.Sprintf("the installed bundle's olm.maxOpenShiftVersion %s allows %s", cur.MaxOpenShift, next)
		}
		return chk, nil
	case cur.MaxOpenShiftErr != nil:
		chk.Status = ClusterBlocks
		chk.Reason = fmt.Sprintf("the installed bundle's olm.maxOpenShiftVersion is malformed (%v), which OLM treats as blocking", cur.MaxOpenShiftErr)
	default:
		chk.Status = ClusterBlocks
		chk.Reason = fmt.Sprintf("the installed bundle's olm.maxOpenShiftVersion %s is below the cluster's next minor version %s", cur.MaxOpenShift, next)
	}

	// The candidates: the bundles of the channels that do not block, by
	// OLM v1 order (then name). OLM v1 never moves down, so it only
	// considers those above the installed version.
	var cands []*Node
	seen := map[string]bool{}
	chans, _ := p.selectChannels(walk[0].Channels)
	for _, c := range chans {
		for _, e := range c.Entries {
			n := p.Nodes[e.Name]
			if seen[n.Name] || n.Name == in.Name || !n.HasBundle {
				continue
			}
			seen[n.Name] = true
			if b, _ := n.Blocks(next); b || (sem == V1 && !isHigher(n, cur)) {
				continue
			}
			cands = append(cands, n)
		}
	}
	sortNodes(cands)

	// The nearest one: fewest steps, then the lowest version, walked to as
	// `path --to` does. OLM classic's walk is fixed, so the nearest is the
	// first that its walk visits; OLM v1 is bounded by each candidate in
	// turn.
	var best *Path
	var bestNode *Node
	reached := map[string]bool{}
	if sem == Classic {
		for i, st := range walk[0].Steps {
			reached[st.To.Name] = true
			if b, _ := st.To.Blocks(next); best == nil && !b && st.To.HasBundle {
				cp := *walk[0]
				cp.Steps = walk[0].Steps[:i+1]
				cp.Reached = true
				best, bestNode = &cp, st.To
			}
		}
	} else {
		for _, n := range cands {
			v := n.Version
			o := opts
			o.To, o.ToRelease = &v, n.Release
			paths, err := p.Path(in, o)
			if err != nil {
				return nil, err
			}
			r := paths[0]
			if !r.Reached || len(r.Steps) == 0 || r.End().Name != n.Name {
				continue
			}
			reached[n.Name] = true
			// Candidates come in increasing order: a later one only wins
			// with fewer steps, and none has fewer than one.
			if best == nil || len(r.Steps) < len(best.Steps) {
				best, bestNode = r, n
			}
			if len(best.Steps) == 1 {
				break
			}
		}
	}
	if best == nil {
		for _, n := range cands {
			if !reached[n.Name] {
				chk.Unreachable = append(chk.Unreachable, n)
			}
		}
	}
	sortNodes(chk.Unreachable)
	where := fmt.Sprintf("channel %q", chk.Channels[0])
	if len(chk.Channels) > 1 {
		where = "channels " + strings.Join(chk.Channels, ", ")
	}
	if best != nil {
		chk.Path, chk.Target = best, bestNode
		best.Reason = fmt.Sprintf("%s %s", bestNode.Label(), bestNode.allowsText(next))
		how := fmt.Sprintf("%s in %s under OLM %s", plural(len(best.Steps), "step"), where, sem)
		if sem == V1 && !visits(walk[0], bestNode) {
			// OLM v1 left alone walks past it: bound spec.version.
			how += fmt.Sprintf(", with spec.version bounded to \"<=%s\"", bestNode.Version)
		}
		if chk.Status == ClusterUnknown {
			chk.Advice = fmt.Sprintf("check the installed bundle, or upgrade to %s (%s), which allows %s", bestNode.Label(), how, next)
		} else {
			chk.Advice = fmt.Sprintf("upgrade to %s (%s) before upgrading the cluster", bestNode.Label(), how)
		}
		return chk, nil
	}
	if chk.Status == ClusterUnknown {
		chk.Advice = fmt.Sprintf("check the installed bundle: no bundle of %s that allows %s is reachable from it under OLM %s", where, next, sem)
		return chk, nil
	}
	chk.Remove = true
	chk.Advice = fmt.Sprintf("no bundle of %s that allows %s is reachable under OLM %s: remove the operator before upgrading the cluster", where, next, sem)
	return chk, nil
}

// notInChannelsNote says that the installed bundle of walk is in none of
// its channels, whether it has an upgrade there anyway, and which other
// channels have it.
func notInChannelsNote(walk *Path) string {
	where := fmt.Sprintf("channel %q", walk.Channels[0])
	if len(walk.Channels) > 1 {
		where = "channels " + strings.Join(walk.Channels, ", ")
	}
	s := fmt.Sprintf("%s is not in %s", walk.From.Label(), where)
	if len(walk.Steps) == 0 {
		s += ", so it has no upgrade there"
	}
	if len(walk.InOtherChannels) == 1 {
		return s + fmt.Sprintf("; channel %q has it", walk.InOtherChannels[0])
	}
	return s + fmt.Sprintf("; channels %s have it", strings.Join(walk.InOtherChannels, ", "))
}

// visits reports whether the path steps onto n.
func visits(p *Path, n *Node) bool {
	for _, s := range p.Steps {
		if s.To.Name == n.Name {
			return true
		}
	}
	return false
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
