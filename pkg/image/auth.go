package image

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/docker/cli/cli/config"
	"github.com/docker/cli/cli/config/configfile"
	"github.com/docker/cli/cli/config/types"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
)

// authFiles lists the credential files consulted, in order:
// $REGISTRY_AUTH_FILE, the docker config ($DOCKER_CONFIG/config.json or
// ~/.docker/config.json), then podman's ${XDG_RUNTIME_DIR}/containers/auth.json
// and $XDG_CONFIG_HOME/containers/auth.json (~/.config by default).
func authFiles() []string {
	var files []string
	if f := os.Getenv("REGISTRY_AUTH_FILE"); f != "" {
		files = append(files, f)
	}
	home, _ := os.UserHomeDir()
	if d := os.Getenv("DOCKER_CONFIG"); d != "" {
		files = append(files, filepath.Join(d, "config.json"))
	} else if home != "" {
		files = append(files, filepath.Join(home, ".docker", "config.json"))
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		files = append(files, filepath.Join(d, "containers", "auth.json"))
	}
	cfgDir := os.Getenv("XDG_CONFIG_HOME")
	if cfgDir == "" && home != "" {
		cfgDir = filepath.Join(home, ".config")
	}
	if cfgDir != "" {
		files = append(files, filepath.Join(cfgDir, "containers", "auth.json"))
	}
	var out []string
	seen := map[string]bool{}
	for _, f := range files {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// fileKeychain resolves credentials from the first auth file that has an
// entry (or a credential helper) for the repository or its registry. It
// remembers which files it read, for error messages.
type fileKeychain struct {
	files []string
}

// DefaultKeychain returns the keychain [Open] uses by default.
func DefaultKeychain() authn.Keychain { return &fileKeychain{files: authFiles()} }

func (k *fileKeychain) Resolve(target authn.Resource) (authn.Authenticator, error) {
	return k.ResolveContext(context.Background(), target)
}

func (k *fileKeychain) ResolveContext(_ context.Context, target authn.Resource) (authn.Authenticator, error) {
	for _, f := range k.files {
		cf, err := loadAuthFile(f)
		if err != nil {
			return nil, err
		}
		if cf == nil {
			continue
		}
		for _, key := range authKeys(target) {
			ac, err := cf.GetAuthConfig(key)
			if err != nil {
				return nil, fmt.Errorf("reading credentials for %s from %s: %w", key, f, err)
			}
			ac.ServerAddress = ""
			if ac == (types.AuthConfig{}) {
				continue
			}
			return authn.FromConfig(authn.AuthConfig{
				Username:      ac.Username,
				Password:      ac.Password,
				Auth:          ac.Auth,
				IdentityToken: ac.IdentityToken,
				RegistryToken: ac.RegistryToken,
			}), nil
		}
	}
	return authn.Anonymous, nil
}

// describe names the files consulted, for authentication errors.
func (k *fileKeychain) describe() string {
	var found []string
	for _, f := range k.files {
		if _, err := os.Stat(f); err == nil {
			found = append(found, f)
		}
	}
	if len(found) == 0 {
		return "no credential file found (looked for " + strings.Join(k.files, ", ") + ")"
	}
	return "credentials looked up in " + strings.Join(found, ", ")
}

func authKeys(target authn.Resource) []string {
	keys := []string{target.String(), target.RegistryStr()}
	for i, k := range keys {
		if k == name.DefaultRegistry {
			keys[i] = authn.DefaultAuthKey
		}
	}
	return keys
}

func loadAuthFile(path string) (*configfile.ConfigFile, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading credentials: %w", err)
	}
	defer f.Close()
	cf, err := config.LoadFromReader(f)
	if err != nil {
		return nil, fmt.Errorf("reading credentials from %s: %w", path, err)
	}
	cf.Filename = path
	return cf, nil
}
