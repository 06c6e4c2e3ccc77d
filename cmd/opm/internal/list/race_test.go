//go:build race

package list_test

const raceEnabled = true
