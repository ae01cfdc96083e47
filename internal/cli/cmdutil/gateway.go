package cmdutil

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/gateway"
	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/policy"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/sandbox"
)

// GatewayFlags are the upstream-proxy flags `statewright mcp` and
// `statewright serve` share.
type GatewayFlags struct {
	config        string
	upstreams     []string
	timeout       time.Duration
	separator     string
	Elicit        bool
	webhook       string
	notifyCmd     string
	Poll          time.Duration
	PageSize      int
	noConfig      bool
	trustFileFlag string
	sandbox       bool
	requireSB     bool
}

func (f *GatewayFlags) Add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.config, "gateway-config", "", "the gateway configuration (default PROJECT/.statewright/gateway.yaml when it exists); its upstreams start only once statewright trust recorded consent to its exact bytes")
	fl.BoolVar(&f.noConfig, "no-gateway-config", false, "ignore the project's .statewright/gateway.yaml")
	fl.StringArrayVar(&f.upstreams, "upstream", nil, "an upstream MCP server, NAME=COMMAND [ARGS...] (stdio; split on spaces) or NAME=http(s)://URL (streamable HTTP); repeatable")
	fl.DurationVar(&f.timeout, "upstream-timeout", gateway.DefaultTimeout, "how long one upstream call may take (per upstream in the config file)")
	fl.StringVar(&f.separator, "namespace-separator", "", "joins an upstream's name and its tool names (default \"__\": fs__write_file)")
	fl.BoolVar(&f.Elicit, "approve-by-elicitation", false, "ask the MCP client's person, through elicitation, to grant transitions that need approval (only where the client shows it to a person)")
	fl.StringVar(&f.webhook, "notify-webhook", "", "POST a JSON notice of each transition parked for approval to this URL")
	fl.StringVar(&f.notifyCmd, "notify-command", "", "run this command (split on spaces; e.g. notify-send) for each transition parked for approval, with the notice as JSON on stdin and a one-line summary as its last argument")
	fl.DurationVar(&f.Poll, "poll", gateway.DefaultPollInterval, "how often a session re-reads its run to notice changes made elsewhere")
	fl.IntVar(&f.PageSize, "page-size", 0, "tools/list page size (0: one page)")
	fl.StringVar(&f.trustFileFlag, "trust-file", "", "the trust records (default $XDG_CONFIG_HOME/statewright/trusted-gateways.json)")
	fl.BoolVar(&f.sandbox, "sandbox", false, "run stdio upstream servers under the OS sandbox: one process per client session under its phase's profile, restarted when the phase changes (docs/sandbox.md); where none is available they run as without it and a warning says why")
	fl.BoolVar(&f.requireSB, "require-sandbox", false, "as --sandbox, but refuse to start stdio upstream servers where no OS sandbox is available")
}

// Sandbox puts m's stdio upstreams under the OS sandbox when --sandbox or
// --require-sandbox asks for it (before m.Start): the profiles come from
// rt for the project and the store file (harness.HostEnv). Where no sandbox
// is available it warns on logger and returns nil (they run as without
// it), or fails with --require-sandbox.
func (f *GatewayFlags) Sandbox(ctx context.Context, m *gateway.Manager, rt *runtime.Service, projectDir, storeFile string, logger *slog.Logger) error {
	if m == nil || !(f.sandbox || f.requireSB) {
		return nil
	}
	a := sandbox.Detect()
	sb := &gateway.Sandbox{Avail: a, Env: harness.HostEnv(projectDir, storeFile), Profile: rt.SandboxProfile}
	if !a.OK() {
		if f.requireSB {
			return Failure("no OS sandbox is available here (" + a.Why + "), and --require-sandbox refuses to start the upstream servers without one (statewright sandbox status)")
		}
		logger.Warn("no OS sandbox is available: upstream servers run unsandboxed (statewright sandbox status)", "why", a.Why)
		m.SetSandbox(sb)
		return nil
	}
	root, err := sandbox.DefaultRoot()
	if err != nil {
		return Failure(err.Error())
	}
	sb.Root = root
	dormant, err := rt.SandboxProfile(ctx, "", sb.Env)
	if err != nil {
		return Failure("gateway sandbox: " + err.Error())
	}
	sb.Listing = gateway.ListingProfile(dormant)
	m.SetSandbox(sb)
	return nil
}

// TrustFile opens the trust records.
func TrustFile(path string) (*gateway.TrustFile, error) {
	if path == "" {
		p, err := gateway.DefaultTrustPath()
		if err != nil {
			return nil, Failure(err.Error())
		}
		path = p
	}
	return gateway.OpenTrust(path), nil
}

// configPath returns the gateway configuration file to read ("" for none).
func (f *GatewayFlags) configPath(projectDir string) (string, error) {
	if f.config != "" {
		return f.config, nil
	}
	if f.noConfig || projectDir == "" {
		return "", nil
	}
	p := filepath.Join(projectDir, gateway.ConfigFile)
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("gateway config: %w", err)
	}
	return p, nil
}

// manager builds the upstream manager: the trusted configuration file's
// upstreams, then the command line's. It returns nil when there are none.
func (f *GatewayFlags) Manager(projectDir string, logger *slog.Logger) (*gateway.Manager, error) {
	cfg := &gateway.Config{}
	var hints map[string]policy.ToolHints
	path, err := f.configPath(projectDir)
	if err != nil {
		return nil, Failure(err.Error())
	}
	if path != "" {
		c, hash, err := gateway.LoadConfigFile(path)
		if err != nil {
			return nil, Failure(err.Error())
		}
		if len(c.Upstreams) > 0 {
			tf, err := TrustFile(f.trustFileFlag)
			if err != nil {
				return nil, err
			}
			if err := tf.Check(path, hash); err != nil {
				return nil, Failure("refusing to start the upstreams of " + path + ": " + err.Error())
			}
			// The tools' annotations as they were when trusted: only
			// these servers' hints are read (docs/permissions.md).
			if hints, err = tf.Hints(path, hash); err != nil {
				return nil, Failure(err.Error())
			}
		}
		cfg = c
	}
	if f.separator != "" {
		cfg.Separator = f.separator
	}
	if f.timeout > 0 && path == "" {
		cfg.Timeout = gateway.Duration(f.timeout)
	}
	for _, spec := range f.upstreams {
		u, err := parseUpstreamFlag(spec)
		if err != nil {
			return nil, Usagef("--upstream %q: %v", spec, err)
		}
		u.Timeout = gateway.Duration(f.timeout)
		cfg.Upstreams = append(cfg.Upstreams, u)
	}
	if len(cfg.Upstreams) == 0 {
		return nil, nil
	}
	if err := cfg.Check(); err != nil {
		return nil, Usagef("%v", err)
	}
	m := gateway.NewManager(cfg, projectDir, logger)
	m.SetHints(hints)
	return m, nil
}

// parseUpstreamFlag parses NAME=COMMAND [ARGS...] or NAME=URL.
func parseUpstreamFlag(spec string) (gateway.Upstream, error) {
	name, rest, ok := strings.Cut(spec, "=")
	rest = strings.TrimSpace(rest)
	if !ok || name == "" || rest == "" {
		return gateway.Upstream{}, errors.New("want NAME=COMMAND [ARGS...] or NAME=http(s)://URL")
	}
	if strings.HasPrefix(rest, "http://") || strings.HasPrefix(rest, "https://") {
		return gateway.Upstream{Name: name, URL: rest}, nil
	}
	words := strings.Fields(rest)
	return gateway.Upstream{Name: name, Command: words[0], Args: words[1:]}, nil
}

// notifier returns the OnPending of the --notify-webhook and
// --notify-command flags (nil when neither is set).
func (f *GatewayFlags) Notifier(logger *slog.Logger) func(context.Context, gateway.Pending) {
	var fns []func(context.Context, gateway.Pending)
	if n := webhookNotifier(f.webhook, logger); n != nil {
		fns = append(fns, n)
	}
	if n := commandNotifier(f.notifyCmd, logger); n != nil {
		fns = append(fns, n)
	}
	if len(fns) == 0 {
		return nil
	}
	return func(ctx context.Context, p gateway.Pending) {
		for _, fn := range fns {
			fn(ctx, p)
		}
	}
}

// commandNotifier runs cmdline for each pending approval (a desktop
// notification: notify-send, osascript), in the background, at most 10 s:
// the notice as JSON on stdin, a summary as the last argument.
func commandNotifier(cmdline string, logger *slog.Logger) func(context.Context, gateway.Pending) {
	words := strings.Fields(cmdline)
	if len(words) == 0 {
		return nil
	}
	return func(_ context.Context, p gateway.Pending) {
		body, err := json.Marshal(map[string]any{"type": "statewright.approval.pending", "approval": p})
		if err != nil {
			return
		}
		summary := fmt.Sprintf("statewright: %s asks to move from %s to %s; approve with: %s", p.Session, p.From, p.To, p.Approve)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, words[0], append(words[1:], summary)...)
			cmd.Stdin = bytes.NewReader(append(body, '\n'))
			if out, err := cmd.CombinedOutput(); err != nil {
				logger.Warn("approval notify command", "err", err, "output", strings.TrimSpace(string(out)))
			}
		}()
	}
}

// webhookNotifier posts each pending approval to url, in the background,
// with a short timeout; a failure is logged, never fatal.
func webhookNotifier(url string, logger *slog.Logger) func(context.Context, gateway.Pending) {
	if url == "" {
		return nil
	}
	client := &http.Client{Timeout: 5 * time.Second}
	return func(_ context.Context, p gateway.Pending) {
		body, err := json.Marshal(map[string]any{"type": "statewright.approval.pending", "approval": p})
		if err != nil {
			return
		}
		go func() {
			resp, err := client.Post(url, "application/json", bytes.NewReader(body))
			if err != nil {
				logger.Warn("approval webhook", "err", err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode >= 300 {
				logger.Warn("approval webhook", "status", resp.Status)
			}
		}()
	}
}

// StderrLogger logs warnings to stderr (stdout carries JSON-RPC in stdio mode).
func StderrLogger(cmd *cobra.Command) *slog.Logger {
	return slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}
