//go:build !race

package jsoncache

const raceEnabled = false
