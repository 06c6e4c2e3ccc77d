// Command opm is a toolkit for Operator Lifecycle Manager file-based catalogs.
package main

import (
	"os"

	"github.com/opmkit/opm/cmd/opm/internal/root"
)

func main() {
	os.Exit(root.Main())
}
