package olmv1

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Summary counts what OLM v1 does with a catalog: the one-screen answer.
type Summary struct {
	// Release and Gates are the operator-controller release and feature
	// gates the verdicts assume.
	Release string `json:"release"`
	Gates   string `json:"featureGates"`

	// Packages counts the packages; PackagesInstallable those whose
	// pick (a ClusterExtension naming only the package) is installable.
	Packages            int `json:"packages"`
	PackagesInstallable int `json:"packagesInstallable"`
	// DefaultChannels counts the packages with a default channel;
	// DefaultChannelsInstallable those whose default channel's pick is.
	DefaultChannels            int `json:"defaultChannels"`
	DefaultChannelsInstallable int `json:"defaultChannelsInstallable"`
	// Channels counts the channels; ChannelsInstallable those whose pick
	// (their newest bundle) is installable.
	Channels            int `json:"channels"`
	ChannelsInstallable int `json:"channelsInstallable"`

	// Bundles counts the bundles; BundlesInstallable those OLM v1
	// installs, of which Webhooks have webhooks (they need the certificate
	// provider) and WatchNamespace need a watchNamespace config.
	Bundles            int `json:"bundles"`
	BundlesInstallable int `json:"bundlesInstallable"`
	Webhooks           int `json:"webhooks"`
	WatchNamespace     int `json:"watchNamespace"`
	// ManifestsNotRead counts the bundles whose manifests were not known
	// (their verdicts rest on their properties alone).
	ManifestsNotRead int `json:"manifestsNotRead"`
	// Migration counts the installable bundles with migration warnings.
	Migration int `json:"migrationWarnings"`

	// Reasons counts, per refusing rule, the bundles it refuses; most
	// first.
	Reasons []ReasonCount `json:"reasons"`

	// UpgradesDiffer counts the (channel, installed bundle) pairs from
	// which OLM v1 upgrades to another bundle than OLM classic;
	// UpgradesRefused those from which OLM v1's upgrade goes to a bundle
	// it refuses.
	UpgradesDiffer  int `json:"upgradesDiffer"`
	UpgradesRefused int `json:"upgradesRefused"`

	reasons map[string]int
}

// ReasonCount is how many bundles one rule refuses.
type ReasonCount struct {
	Code    string `json:"code"`
	Bundles int    `json:"bundles"`
}

// NewSummary returns an empty summary under gates g.
func NewSummary(g Gates) *Summary {
	return &Summary{Release: Release, Gates: g.String(), Reasons: []ReasonCount{}, reasons: map[string]int{}}
}

// Add counts one package.
func (s *Summary) Add(r *PackageReport) {
	s.Packages++
	if r.Installable(r.Pick) {
		s.PackagesInstallable++
	}
	for _, c := range r.Channels {
		s.Channels++
		if r.Installable(c.Pick) {
			s.ChannelsInstallable++
		}
		if c.Name == r.DefaultChannel {
			s.DefaultChannels++
			if r.Installable(c.Pick) {
				s.DefaultChannelsInstallable++
			}
		}
		for _, u := range c.Upgrades {
			if u.Differs() {
				s.UpgradesDiffer++
			}
			if u.Refused {
				s.UpgradesRefused++
			}
		}
	}
	for _, v := range r.Verdicts {
		s.AddBundle(v)
	}
}

// AddBundle counts one bundle's verdict.
func (s *Summary) AddBundle(v *Verdict) {
	s.Bundles++
	if !v.ManifestsRead {
		s.ManifestsNotRead++
	}
	if v.Installable {
		s.BundlesInstallable++
		if v.Webhooks > 0 {
			s.Webhooks++
		}
		if len(v.Codes(Conditional)) > 0 && v.Watch != WatchNone && v.Watch != WatchOptional {
			s.WatchNamespace++
		}
		if len(v.Codes(Migration)) > 0 {
			s.Migration++
		}
	}
	for _, c := range v.Codes(Refused) {
		s.reasons[c]++
	}
	s.sortReasons()
}

// Merge adds o's counts to s.
func (s *Summary) Merge(o *Summary) {
	s.Packages += o.Packages
	s.PackagesInstallable += o.PackagesInstallable
	s.DefaultChannels += o.DefaultChannels
	s.DefaultChannelsInstallable += o.DefaultChannelsInstallable
	s.Channels += o.Channels
	s.ChannelsInstallable += o.ChannelsInstallable
	s.Bundles += o.Bundles
	s.BundlesInstallable += o.BundlesInstallable
	s.Webhooks += o.Webhooks
	s.WatchNamespace += o.WatchNamespace
	s.ManifestsNotRead += o.ManifestsNotRead
	s.Migration += o.Migration
	s.UpgradesDiffer += o.UpgradesDiffer
	s.UpgradesRefused += o.UpgradesRefused
	for c, n := range o.reasons {
		s.reasons[c] += n
	}
	s.sortReasons()
}

func (s *Summary) sortReasons() {
	s.Reasons = s.Reasons[:0]
	for c, n := range s.reasons {
		s.Reasons = append(s.Reasons, ReasonCount{c, n})
	}
	sort.Slice(s.Reasons, func(i, j int) bool {
		a, b := s.Reasons[i], s.Reasons[j]
		if a.Bundles != b.Bundles {
			return a.Bundles > b.Bundles
		}
		return a.Code < b.Code
	})
}

// WriteText writes the summary for people, a dozen lines at most.
func (s *Summary) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "OLM v1 (operator-controller %s; %s):\n", s.Release, s.Gates)
	fmt.Fprintf(&b, "  packages:  %d of %d install from a ClusterExtension naming only the package\n", s.PackagesInstallable, s.Packages)
	fmt.Fprintf(&b, "  channels:  %d of %d install from a ClusterExtension naming the channel (%d of %d default channels)\n",
		s.ChannelsInstallable, s.Channels, s.DefaultChannelsInstallable, s.DefaultChannels)
	fmt.Fprintf(&b, "  bundles:   %d of %d installable", s.BundlesInstallable, s.Bundles)
	if s.ManifestsNotRead > 0 {
		b.WriteString(" as far as checked")
	}
	var notes []string
	if s.Webhooks > 0 {
		notes = append(notes, fmt.Sprintf("%d with webhooks, given a certificate provider", s.Webhooks))
	}
	if s.WatchNamespace > 0 {
		notes = append(notes, fmt.Sprintf("%d only with a watchNamespace", s.WatchNamespace))
	}
	if s.Migration > 0 {
		notes = append(notes, fmt.Sprintf("%d with migration warnings", s.Migration))
	}
	if len(notes) > 0 {
		b.WriteString(" (" + strings.Join(notes, "; ") + ")")
	}
	b.WriteByte('\n')
	if s.ManifestsNotRead > 0 {
		fmt.Fprintf(&b, "  not read:  the manifests of %d bundles are not in the catalog: only their properties were checked (dependencies, and install modes and APIServices from olm.csv.metadata); --pull-bundles reads them\n", s.ManifestsNotRead)
	}
	if len(s.Reasons) > 0 {
		b.WriteString("  refused by:")
		for i, r := range s.Reasons {
			if i == 5 {
				fmt.Fprintf(&b, " and %d more rules", len(s.Reasons)-5)
				break
			}
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, " %s %d", r.Code, r.Bundles)
		}
		b.WriteString(" (bundles)\n")
	}
	if s.UpgradesDiffer > 0 || s.UpgradesRefused > 0 {
		fmt.Fprintf(&b, "  upgrades:  from %s OLM v1 upgrades elsewhere than OLM classic; %s to a bundle OLM v1 refuses\n",
			plural(s.UpgradesDiffer, "bundle", "bundles"), plural(s.UpgradesRefused, "upgrade goes", "upgrades go"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
