package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/opmkit/opm/pkg/model"
	"github.com/opmkit/opm/pkg/olmv1"
)

// Formats lists the output formats of [Write]; "" is text.
var Formats = []string{"text", "json", "yaml", "github", "sarif"}

// Write renders res in format to w. Text goes to w as well; callers choose
// the stream (opm validate writes text to stderr, as upstream logs). Text
// summarises warnings (see WriteText).
func Write(w io.Writer, res *Result, format string, tool ToolInfo) error {
	switch format {
	case "", "text":
		return WriteText(w, res, false)
	case "json":
		return WriteJSON(w, res)
	case "yaml":
		return WriteYAML(w, res)
	case "github":
		return WriteGitHub(w, res)
	case "sarif":
		return WriteSARIF(w, res, tool)
	}
	return fmt.Errorf("unknown output format %q", format)
}

// upstreamResult is upstream's -o json/yaml shape plus our findings.
type upstreamResult struct {
	Passed   bool           `json:"passed"`
	Error    *upstreamError `json:"error,omitempty"`
	Findings []Finding      `json:"findings,omitempty"`
	OLMv1    *olmv1.Summary `json:"olmV1,omitempty"`
	Gate     *GateSummary   `json:"releaseGate,omitempty"`
}

type upstreamError struct {
	Message string `json:"message"`
}

func toUpstream(res *Result) upstreamResult {
	out := upstreamResult{Passed: res.Passed, Findings: res.Findings, OLMv1: res.OLMv1, Gate: res.Gate}
	if !res.Passed {
		out.Error = &upstreamError{Message: res.Message}
	}
	return out
}

// WriteJSON writes upstream's -o json form (2-space indent, HTML escaped,
// trailing newline) with a findings array beside passed and error.
func WriteJSON(w io.Writer, res *Result) error {
	b, err := json.MarshalIndent(toUpstream(res), "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteYAML writes upstream's -o yaml form (sorted keys, then a blank
// line) with findings.
func WriteYAML(w io.Writer, res *Result) error {
	b, err := yaml.Marshal(toUpstream(res))
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteText writes the human form: upstream's error tree (or first error)
// with each leaf followed by its position, then every other error as
// "file:line:col: error: message [code]" with its help, then the warnings:
// all of them likewise when verbose, else one per rule (the first, and
// how many more there are), each with its help; then the OLM v1 summary,
// when there is one, and what the release gate checked, when it ran.
// Nothing else is written for a clean catalog.
func WriteText(w io.Writer, res *Result, verbose bool) error {
	var buf bytes.Buffer
	if res.Tree != nil {
		buf.WriteString(res.Tree.Format(func(err error) string {
			var re *model.RuleError
			if errors.As(err, &re) && re.Pos.IsValid() {
				return re.Message + " (" + re.Pos.String() + ")"
			}
			return err.Error()
		}))
		buf.WriteByte('\n')
	}
	line := func(f Finding, suffix string) {
		if p := f.Pos(); p.IsValid() {
			buf.WriteString(p.String() + ": ")
		}
		fmt.Fprintf(&buf, "%s: %s [%s]%s%s\n", f.Severity, f.Message, f.Code, channelsNote(f), suffix)
	}
	perRule := map[string]int{}
	for _, f := range res.Findings {
		if f.Severity == SeverityWarning {
			perRule[f.Code]++
		}
	}
	for _, f := range res.Findings {
		if f.inTree {
			continue
		}
		if f.Severity == SeverityWarning && !verbose {
			n := perRule[f.Code]
			if n == 0 {
				continue // summarised already
			}
			perRule[f.Code] = 0
			suffix := ""
			if n > 1 {
				suffix = fmt.Sprintf(" (and %d more; -v lists them)", n-1)
			}
			line(f, suffix)
		} else {
			line(f, "")
		}
		if f.Help != "" {
			buf.WriteString("    help: " + f.Help + "\n")
		}
	}
	if res.OLMv1 != nil {
		if err := res.OLMv1.WriteText(&buf); err != nil {
			return err
		}
	}
	if res.Gate != nil {
		buf.WriteString(res.Gate.Text() + "\n")
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// channelsNote names the channels a finding was seen in, when several.
func channelsNote(f Finding) string {
	if len(f.Channels) < 2 {
		return ""
	}
	return " (channels " + quoteList(f.Channels) + ")"
}

// WriteGitHub writes one GitHub Actions workflow command per finding
// (::error or ::warning with file, line, col and the rule code as title).
func WriteGitHub(w io.Writer, res *Result) error {
	var buf bytes.Buffer
	for _, f := range res.Findings {
		var props []string
		if f.File != "" {
			props = append(props, "file="+ghProperty(f.File))
			if f.Line > 0 {
				props = append(props, "line="+strconv.Itoa(f.Line))
			}
			if f.Column > 0 {
				props = append(props, "col="+strconv.Itoa(f.Column))
			}
		}
		props = append(props, "title="+ghProperty("opm validate: "+f.Code))
		msg := f.Message + channelsNote(f)
		if f.Help != "" {
			msg += "\n" + f.Help
		}
		fmt.Fprintf(&buf, "::%s %s::%s\n", f.Severity, strings.Join(props, ","), ghData(msg))
	}
	if !res.Passed && len(res.Findings) == 0 {
		fmt.Fprintf(&buf, "::error title=opm validate::%s\n", ghData(res.Message))
	}
	_, err := w.Write(buf.Bytes())
	return err
}

func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func ghProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// ToolInfo names the tool in SARIF output.
type ToolInfo struct {
	Name           string
	Version        string
	InformationURI string
}

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations"`
	Results     []sarifResult     `json:"results"`
}

type sarifInvocation struct {
	ExecutionSuccessful bool `json:"executionSuccessful"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string        `json:"id"`
	ShortDescription     sarifText     `json:"shortDescription"`
	DefaultConfiguration sarifRuleConf `json:"defaultConfiguration"`
}

type sarifRuleConf struct {
	Level string `json:"level"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID     string            `json:"ruleId"`
	RuleIndex  int               `json:"ruleIndex"`
	Level      string            `json:"level"`
	Message    sarifText         `json:"message"`
	Locations  []sarifLocation   `json:"locations,omitempty"`
	Properties map[string]string `json:"properties,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

// WriteSARIF writes a SARIF 2.1.0 log with one run: every rule code that
// has a finding as a rule, and every finding as a result.
func WriteSARIF(w io.Writer, res *Result, tool ToolInfo) error {
	if tool.Name == "" {
		tool.Name = "opm"
	}
	run := sarifRun{
		Tool:        sarifTool{Driver: sarifDriver{Name: tool.Name, Version: tool.Version, InformationURI: tool.InformationURI, Rules: []sarifRule{}}},
		Invocations: []sarifInvocation{{ExecutionSuccessful: true}},
		Results:     []sarifResult{},
	}
	index := map[string]int{}
	for _, f := range res.Findings {
		i, ok := index[f.Code]
		if !ok {
			i = len(run.Tool.Driver.Rules)
			index[f.Code] = i
			r, _ := RuleByCode(f.Code)
			level := "warning"
			if r.Upstream || errorByDefault[f.Code] {
				level = "error"
			}
			desc := r.Summary
			if desc == "" {
				desc = f.Code
			}
			run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{ID: f.Code, ShortDescription: sarifText{desc}, DefaultConfiguration: sarifRuleConf{level}})
		}
		msg := f.Message + channelsNote(f)
		if f.Help != "" {
			msg += "\n" + f.Help
		}
		r := sarifResult{RuleID: f.Code, RuleIndex: i, Level: string(f.Severity), Message: sarifText{msg}}
		if f.File != "" {
			loc := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: f.File}}}
			if f.Line > 0 {
				loc.PhysicalLocation.Region = &sarifRegion{StartLine: f.Line, StartColumn: f.Column}
			}
			r.Locations = []sarifLocation{loc}
		}
		props := map[string]string{}
		channel := f.Channel
		if len(f.Channels) > 1 {
			channel = strings.Join(f.Channels, ", ")
		}
		for k, v := range map[string]string{"package": f.Package, "channel": channel, "bundle": f.Bundle, "path": f.Path} {
			if v != "" {
				props[k] = v
			}
		}
		if len(props) > 0 {
			r.Properties = props
		}
		run.Results = append(run.Results, r)
	}
	log := sarifLog{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0", Runs: []sarifRun{run}}
	b, err := json.MarshalIndent(log, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
