//go:build !race

package gencatalog

const raceEnabled = false
