package validate

import (
	"testing"
)

func TestTargetFromDockerfile(t *testing.T) {
	tests := []struct {
		name, dockerfile, want, src string
	}{
		{"fbc label", "FROM registry.redhat.io/openshift4/ose-operator-registry-rhel9:v4.16\nLABEL com.redhat.fbc.openshift.version='[\"v4.18\",\"v4.19\"]'\n", "4.18", "LABEL com.redhat.fbc.openshift.version"},
		{"versions label, continued", "FROM scratch\nLABEL a=b \\\n      com.redhat.openshift.versions=\"=v4.17\"\n", "4.17", "LABEL com.redhat.openshift.versions"},
		{"old label form", "FROM scratch\nLABEL com.redhat.openshift.versions v4.15\n", "4.15", "LABEL com.redhat.openshift.versions"},
		{"last FROM", "FROM quay.io/x/builder:v1.0 AS build\n# a comment\nfrom --platform=linux/amd64 registry.redhat.io/openshift4/ose-operator-registry:v4.14\n", "4.14", "the tag of FROM registry.redhat.io/openshift4/ose-operator-registry:v4.14"},
		{"an ARG", "ARG OCP=v4.18\nFROM registry.redhat.io/openshift4/ose-operator-registry:${OCP}\n", "", ""},
		{"a tag that is no version", "FROM quay.io/operator-framework/opm:latest\n", "", ""},
		{"a digest", "FROM quay.io/operator-framework/opm@sha256:" + "a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2" + "\n", "", ""},
	}
	for _, tt := range tests {
		v, src, err := targetFromDockerfile([]byte(tt.dockerfile))
		got := ""
		if v != nil {
			got = v.String()
		}
		if err != nil || got != tt.want || src != tt.src {
			t.Errorf("%s: %q from %q, %v; want %q from %q", tt.name, got, src, err, tt.want, tt.src)
		}
	}
	if _, _, err := targetFromDockerfile([]byte("LABEL com.redhat.fbc.openshift.version=[]\n")); err == nil {
		t.Error("an empty list names no target")
	}
}

func FuzzTargetFromDockerfile(f *testing.F) {
	f.Add([]byte("FROM registry.redhat.io/openshift4/ose-operator-registry-rhel9:v4.16\nLABEL a=\"b c\" com.redhat.fbc.openshift.version='[\"v4.18\"]'\n"))
	f.Add([]byte("LABEL x \"y\"\nLABEL =\nLABEL a='\nFROM\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, _ = targetFromDockerfile(data)
		_ = parseLabels(string(data))
	})
}
