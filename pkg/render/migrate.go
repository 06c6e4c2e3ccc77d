package render

import (
	"fmt"

	"github.com/opmkit/opm/pkg/declcfg"
)

// checkMigrationLevel rejects unknown --migrate-level values.
func checkMigrationLevel(level string) error {
	switch level {
	case "", "none":
		return nil
	}
	return fmt.Errorf("unknown migration level %q", level)
}

// migrate applies the migrations up to level.
func migrate(cfg *declcfg.DeclarativeConfig, level string) error {
	return nil
}
