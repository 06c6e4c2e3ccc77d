package model

import (
	"errors"
	"strings"

	"github.com/opmkit/opm/pkg/declcfg"
)

// Issue is one problem found in a catalog: a rule code, upstream's message
// for it, the position of the blob it is about and the package, channel and
// bundle it concerns (empty when not applicable).
type Issue struct {
	Code    string
	Message string
	Pos     declcfg.Position
	Package string
	Channel string
	Bundle  string
}

// RuleError is an error that knows its rule code and position. Its Error()
// is the upstream message.
type RuleError struct {
	Issue
}

func (e *RuleError) Error() string { return e.Message }

// ValidationError is upstream's model validation error tree: Message is the
// node's text ("invalid index", `invalid package "p"`, ...) and SubErrors
// its children, either *ValidationError or *RuleError. Error() renders the
// tree with upstream's box-drawing prefixes.
type ValidationError struct {
	Message   string
	SubErrors []error
}

func (v *ValidationError) Error() string {
	return v.Format(nil)
}

// Format renders the tree as Error does, with the text of every leaf given
// by leaf (nil: the leaf's Error()), e.g. to append positions.
func (v *ValidationError) Format(leaf func(err error) string) string {
	if leaf == nil {
		leaf = func(err error) string { return err.Error() }
	}
	var sb strings.Builder
	v.write(&sb, "", "", leaf)
	return strings.TrimSpace(sb.String())
}

// write renders v: first is the prefix of v's own line, rest the prefix of
// the lines of its children.
func (v *ValidationError) write(sb *strings.Builder, first, rest string, leaf func(error) string) {
	sb.WriteString(first)
	sb.WriteString(v.Message)
	if len(v.SubErrors) > 0 {
		sb.WriteString(":")
	}
	sb.WriteString("\n")
	for i, sub := range v.SubErrors {
		last := i == len(v.SubErrors)-1
		branch, cont := "├── ", "│   "
		if last {
			branch, cont = "└── ", "    "
		}
		var ve *ValidationError
		if errors.As(sub, &ve) {
			ve.write(sb, rest+branch, rest+cont, leaf)
			continue
		}
		sb.WriteString(rest + branch + leaf(sub) + "\n")
	}
}

func (v *ValidationError) add(err error) {
	if err != nil {
		v.SubErrors = append(v.SubErrors, err)
	}
}

func (v *ValidationError) orNil() error {
	if len(v.SubErrors) == 0 {
		return nil
	}
	return v
}

// Issues flattens err into issues: every leaf of a *ValidationError tree,
// a *RuleError, or any other error as one issue with an empty code.
func Issues(err error) []Issue {
	if err == nil {
		return nil
	}
	var out []Issue
	var walk func(error)
	walk = func(e error) {
		var ve *ValidationError
		var re *RuleError
		switch {
		case errors.As(e, &ve):
			for _, s := range ve.SubErrors {
				walk(s)
			}
		case errors.As(e, &re):
			out = append(out, re.Issue)
		default:
			out = append(out, Issue{Message: e.Error()})
		}
	}
	walk(err)
	return out
}
