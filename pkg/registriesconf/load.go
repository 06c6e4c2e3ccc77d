package registriesconf

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/opmkit/opm/internal/safefs"
)

// EnvVar names the file to use instead of the default locations.
const EnvVar = "CONTAINERS_REGISTRIES_CONF"

// Default locations.
const (
	SystemFile = "/etc/containers/registries.conf"
	SystemDir  = "/etc/containers/registries.conf.d"
	userFile   = ".config/containers/registries.conf"
	userDir    = ".config/containers/registries.conf.d"
)

// Env is what [Locate] looks at: the environment and the home directory.
type Env struct {
	Getenv func(string) string
	Home   string
	// Stat reports whether a file exists (os.Stat by default).
	Exists func(string) bool
	// SystemFile and SystemDir override the /etc/containers defaults
	// (tests).
	SystemFile, SystemDir string
}

// Locations are the files [LoadFiles] reads.
type Locations struct {
	// File is the main file; Required says it was named by EnvVar (so it
	// must exist).
	File     string
	Required bool
	// Dirs hold drop-in *.conf files, read in name order after File, each
	// directory in turn; missing directories are skipped.
	Dirs []string
}

// Locate returns the files containers/image would read: the file named by
// $CONTAINERS_REGISTRIES_CONF, else $HOME/.config/containers/registries.conf
// when it exists (with its drop-in directory only), else
// /etc/containers/registries.conf; then the drop-in directories.
func Locate(env Env) Locations {
	getenv := env.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	exists := env.Exists
	if exists == nil {
		exists = func(p string) bool { _, err := os.Stat(p); return err == nil }
	}
	sysFile, sysDir := env.SystemFile, env.SystemDir
	if sysFile == "" {
		sysFile = SystemFile
	}
	if sysDir == "" {
		sysDir = SystemDir
	}
	var uFile, uDir string
	if env.Home != "" {
		uFile, uDir = filepath.Join(env.Home, userFile), filepath.Join(env.Home, userDir)
	}
	if f := getenv(EnvVar); f != "" {
		return Locations{File: f, Required: true, Dirs: nonEmpty(sysDir, uDir)}
	}
	if uFile != "" && exists(uFile) {
		return Locations{File: uFile, Dirs: nonEmpty(uDir)}
	}
	return Locations{File: sysFile, Dirs: nonEmpty(sysDir, uDir)}
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// readFile reads a registries.conf file or drop-in, within MaxFileSize.
func readFile(name string) ([]byte, error) {
	data, err := safefs.ReadRegular(nil, name, MaxFileSize)
	return data, safefs.LimitFor(err, "registries.conf files (fixed: --max-file-size does not apply to them)")
}

// Load reads the registries.conf files of the process environment. A
// missing default file means an empty configuration.
func Load() (*Config, error) {
	home, _ := os.UserHomeDir()
	return LoadFiles(Locate(Env{Home: home}))
}

// LoadFiles reads and merges the files of loc.
func LoadFiles(loc Locations) (*Config, error) {
	cfg := &Config{}
	data, err := readFile(loc.File)
	switch {
	case err == nil:
		c, err := Parse(data, loc.File)
		if err != nil {
			return nil, err
		}
		cfg = c
	case errors.Is(err, fs.ErrNotExist) && !loc.Required:
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s names %s: %w", EnvVar, loc.File, fs.ErrNotExist)
	default:
		return nil, err
	}
	for _, dir := range loc.Dirs {
		ents, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
		for _, e := range ents {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".conf") {
				continue
			}
			p := filepath.Join(dir, e.Name())
			data, err := readFile(p)
			if err != nil {
				return nil, err
			}
			d, err := Parse(data, p)
			if err != nil {
				return nil, err
			}
			cfg.merge(d)
		}
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}
