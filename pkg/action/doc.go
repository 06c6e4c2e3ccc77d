// Package action is the home of opm's action layer: one package per
// command, pkg/action/<verb>, each with an Options struct in and a result
// out, as upstream opm's alpha/action and go-containerregistry's pkg/crane
// do. An action package holds what a command does, not how it is invoked:
// no cobra, no os.Exit, no writes to the process streams (an io.Writer in
// Options where output is streamed). Library callers and tests call it
// directly.
//
// An action returns a [UsageError] for options it cannot run with (a bad
// value, a refused combination); the commands exit 2 for it, and 1 for any
// other error.
//
// The domain packages it builds on stay beside it under pkg/ (declcfg,
// property, model, graph, versionrange, bundle, image, render, migrations,
// validate, ...). The cobra commands under cmd/opm/internal/<verb> bind
// flags into an action's Options, call it once and print its result.
package action
