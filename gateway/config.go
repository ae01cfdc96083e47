package gateway

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"
)

// ConfigFile is where a project keeps its gateway configuration, below the
// project root.
var ConfigFile = filepath.Join(".statewright", "gateway.yaml")

// DefaultSeparator joins an upstream's namespace and a tool name:
// "fs" + "__" + "write_file".
const DefaultSeparator = "__"

// DefaultTimeout bounds one upstream call when neither the upstream nor the
// configuration says otherwise.
const DefaultTimeout = 60 * time.Second

// Config is the gateway's configuration: .statewright/gateway.yaml, plus
// upstreams given on the command line.
//
//	separator: "__"          # namespace separator (default "__")
//	timeout: 60s             # default per-call upstream timeout
//	upstreams:
//	  - name: fs             # required: [a-z0-9-], unique
//	    command: mcp-server-filesystem
//	    args: ["/srv/project"]
//	    env: {NODE_ENV: production}
//	    map: filesystem      # argument mapping preset (filesystem | none)
//	    timeout: 30s
//	  - name: docs
//	    url: http://127.0.0.1:9000/mcp   # streamable HTTP upstream
//	    headers: {Authorization: "Bearer ${DOCS_TOKEN}"}
//	    namespace: ""        # no prefix (tool names must not collide)
//	    tools:               # per-tool mapping, overrides the preset
//	      put_page: {as: Write, path: path, content: body}
type Config struct {
	// Separator joins a namespace and a tool name (default "__").
	Separator string `yaml:"separator"`
	// Timeout is the default per-call upstream timeout (default 60s).
	Timeout Duration `yaml:"timeout"`
	// Upstreams are the MCP servers behind the gateway.
	Upstreams []Upstream `yaml:"upstreams"`
}

// Upstream is one MCP server behind the gateway: a command spoken to over
// stdio, or a streamable-HTTP URL.
type Upstream struct {
	// Name identifies the upstream in messages and is its default namespace.
	Name string `yaml:"name"`
	// Command and Args start a stdio server; Env adds variables to the
	// gateway's environment ("${VAR}" expands from it); Dir is its working
	// directory (default the project root).
	Command string            `yaml:"command"`
	Args    []string          `yaml:"args"`
	Env     map[string]string `yaml:"env"`
	Dir     string            `yaml:"dir"`
	// URL is a streamable-HTTP endpoint; Headers are sent with every
	// request ("${VAR}" expands from the gateway's environment). A
	// redirect to another origin is refused (sameOrigin).
	URL     string            `yaml:"url"`
	Headers map[string]string `yaml:"headers"`
	// Namespace prefixes the upstream's tools and prompts (default Name;
	// "" with NoNamespace true for none).
	Namespace *string `yaml:"namespace"`
	// Map names an argument-mapping preset: "filesystem" maps the
	// reference filesystem server's tools onto Read, Write, Edit, LS,
	// Glob, so path scopes, edit limits and interrupts apply to them.
	// Empty: "filesystem" when the command or URL names server-filesystem,
	// else none.
	Map string `yaml:"map"`
	// Tools maps single tools (overrides the preset).
	Tools map[string]ToolMap `yaml:"tools"`
	// Timeout bounds one call (default Config.Timeout).
	Timeout Duration `yaml:"timeout"`
}

// ToolMap says how one upstream tool is decided: as the canonical tool As
// (Read, Write, Edit, MultiEdit, LS, Glob, Grep, Bash, WebFetch, or
// "none" to decide it by its namespaced name), with its path, paths,
// content, edits or command in the named arguments.
type ToolMap struct {
	As      string `yaml:"as"`
	Path    string `yaml:"path"`
	Paths   string `yaml:"paths"`
	Content string `yaml:"content"`
	Edits   string `yaml:"edits"`
	Command string `yaml:"command"`
	Pattern string `yaml:"pattern"`
}

// Duration is a time.Duration read from YAML as "30s", "2m".
type Duration time.Duration

// UnmarshalYAML parses a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return fmt.Errorf("line %d: want a duration such as 30s: %w", n.Line, err)
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("line %d: %q is not a duration such as 30s", n.Line, s)
	}
	*d = Duration(v)
	return nil
}

// upstreamName is compiled on first use, not at init: every statewright
// process (each hook call among them) links this package, and the bounded
// repetition compiles to a large program.
var upstreamName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`) })

// ParseConfig parses and checks a gateway.yaml. Unknown keys are errors (a
// typo must not silently drop a mapping).
func ParseConfig(data []byte) (*Config, error) {
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("gateway config: %w", err)
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Check validates the configuration and fills defaults.
func (c *Config) Check() error {
	if c.Separator == "" {
		c.Separator = DefaultSeparator
	}
	if strings.ContainsAny(c.Separator, " \t\n/") {
		return fmt.Errorf("gateway config: separator %q may not contain spaces or '/'", c.Separator)
	}
	if c.Timeout == 0 {
		c.Timeout = Duration(DefaultTimeout)
	}
	seen := map[string]bool{}
	for i := range c.Upstreams {
		u := &c.Upstreams[i]
		if !upstreamName().MatchString(u.Name) {
			return fmt.Errorf("gateway config: upstream %d: name %q must be 1-32 of [a-z0-9-]", i+1, u.Name)
		}
		if seen[u.Name] {
			return fmt.Errorf("gateway config: upstream %q is named twice", u.Name)
		}
		seen[u.Name] = true
		switch {
		case u.Command == "" && u.URL == "":
			return fmt.Errorf("gateway config: upstream %q needs a command (stdio) or a url (streamable HTTP)", u.Name)
		case u.Command != "" && u.URL != "":
			return fmt.Errorf("gateway config: upstream %q has both a command and a url", u.Name)
		case u.URL != "":
			p, err := url.Parse(u.URL)
			if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
				return fmt.Errorf("gateway config: upstream %q: url %q is not an http(s) URL", u.Name, u.URL)
			}
		}
		if u.Timeout == 0 {
			u.Timeout = c.Timeout
		}
		if u.Map == "" {
			if strings.Contains(u.Command+" "+strings.Join(u.Args, " ")+u.URL, "server-filesystem") {
				u.Map = PresetFilesystem
			} else {
				u.Map = PresetNone
			}
		}
		if _, ok := presets[u.Map]; !ok {
			return fmt.Errorf("gateway config: upstream %q: unknown map %q (want %s or %s)", u.Name, u.Map, PresetFilesystem, PresetNone)
		}
		for tool, m := range u.Tools {
			if _, ok := canonicalTools[m.As]; !ok {
				return fmt.Errorf("gateway config: upstream %q tool %q: as %q is not one of %s", u.Name, tool, m.As, canonicalList())
			}
		}
	}
	return nil
}

// Prefix returns the namespace prefix of u's tools ("fs__"), or "".
func (c *Config) Prefix(u *Upstream) string {
	ns := u.Name
	if u.Namespace != nil {
		ns = *u.Namespace
	}
	if ns == "" {
		return ""
	}
	return ns + c.Separator
}

// ConfigHash is the sha256 (hex) of a configuration file's bytes: what
// `statewright trust` records the operator's consent to.
func ConfigHash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// LoadConfigFile reads and parses path, returning the config and the hash
// of the bytes read.
func LoadConfigFile(path string) (*Config, string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("gateway config: %w", err)
	}
	c, err := ParseConfig(b)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	return c, ConfigHash(b), nil
}

// expandEnv expands ${VAR} and $VAR from the gateway's environment.
func expandEnv(s string) string { return os.ExpandEnv(s) }
