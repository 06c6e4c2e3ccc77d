package render

import (
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/migrations"
)

// checkMigrationLevel rejects unknown --migrate-level values.
func checkMigrationLevel(level string) error {
	return migrations.Check(level)
}

// migrate applies the migrations up to level.
func migrate(cfg *declcfg.DeclarativeConfig, level string) error {
	return migrations.Migrate(cfg, level)
}
