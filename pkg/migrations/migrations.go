// Package migrations holds the FBC migrations `opm render --migrate-level`
// applies, in upstream's order: none, then bundle-object-to-csv-metadata.
// The hidden level "all" (and `--migrate`) runs every migration.
package migrations

import (
	"fmt"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/property"
)

// Level names.
const (
	LevelNone                      = "none"
	LevelBundleObjectToCSVMetadata = "bundle-object-to-csv-metadata"
	LevelAll                       = "all"
)

// Migration is one named step.
type Migration struct {
	Name string
	Help string
	run  func(*declcfg.DeclarativeConfig) error
}

// Migrations lists every migration in the order they run.
var Migrations = []Migration{
	{Name: LevelNone, Help: "do nothing", run: func(*declcfg.DeclarativeConfig) error { return nil }},
	{
		Name: LevelBundleObjectToCSVMetadata,
		Help: `migrates bundles' "olm.bundle.object" to "olm.csv.metadata"`,
		run:  bundleObjectToCSVMetadata,
	},
}

// Check reports whether level names a migration ("" means none, "all" every
// one).
func Check(level string) error {
	_, err := upTo(level)
	return err
}

// upTo returns the migrations to run for level.
func upTo(level string) ([]Migration, error) {
	switch level {
	case "":
		return nil, nil
	case LevelAll:
		return Migrations, nil
	}
	for i, m := range Migrations {
		if m.Name == level {
			return Migrations[:i+1], nil
		}
	}
	return nil, fmt.Errorf("unknown migration level %q", level)
}

// Migrate applies every migration up to and including level to cfg.
func Migrate(cfg *declcfg.DeclarativeConfig, level string) error {
	ms, err := upTo(level)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if err := m.run(cfg); err != nil {
			return fmt.Errorf("migration %q: %w", m.Name, err)
		}
	}
	return nil
}

// bundleObjectToCSVMetadata replaces the olm.bundle.object properties of
// every bundle that has an image and a CSV with one olm.csv.metadata built
// from the typed CSV. Bundles that already have olm.csv.metadata are left
// alone.
func bundleObjectToCSVMetadata(cfg *declcfg.DeclarativeConfig) error {
	for i := range cfg.Bundles {
		b := &cfg.Bundles[i]
		if b.Image != "" && b.CsvJSON == "" {
			// Bundles loaded from a catalog: upstream's loader sets
			// CsvJSON from the olm.bundle.object properties (YAML ones
			// converted to JSON). The error names the bundle.
			if err := b.LoadObjects(); err != nil {
				return err
			}
		}
		if b.Image == "" || b.CsvJSON == "" {
			continue
		}
		if hasType(b.Properties, property.TypeCSVMetadata) {
			continue
		}
		meta, err := CSVMetadata([]byte(b.CsvJSON))
		if err != nil {
			return fmt.Errorf("bundle %q: %w", b.Name, err)
		}
		props := make([]property.Property, 0, len(b.Properties)+1)
		for _, p := range b.Properties {
			if p.Type != property.TypeBundleObject {
				props = append(props, p)
			}
		}
		b.Properties = append(props, meta)
	}
	return nil
}

func hasType(props []property.Property, typ string) bool {
	for _, p := range props {
		if p.Type == typ {
			return true
		}
	}
	return false
}
