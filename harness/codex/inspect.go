package codex

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/statewright-go/statewright/harness"
	"github.com/statewright-go/statewright/harness/install"
	"github.com/statewright-go/statewright/harness/internal/wire"
)

// UserConfig returns the config.toml Codex reads for every session of the
// user: $CODEX_HOME/config.toml, else ~/.codex/config.toml.
func UserConfig() string {
	home := os.Getenv("CODEX_HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		home = filepath.Join(h, ".codex")
	}
	return filepath.Join(home, "config.toml")
}

// configHooks is the part of a config.toml doctor reads.
type configHooks struct {
	Hooks map[string]any `toml:"hooks"`
}

// Inspect implements harness.Inspector: statewright's hooks in the
// project's .codex/config.toml and in the user's config.toml, whether the
// user-level ones are scoped to this project, whether Codex loads and
// trusts them (asked of Codex itself: `codex app-server`, hooks/list), and
// the PreToolUse gate with an apply_patch of .codex/config.toml as canary.
func (adapter) Inspect(ctx context.Context, q harness.InspectQuery) ([]*harness.Install, error) {
	var installs []*harness.Install
	for _, f := range []struct{ scope, path string }{
		{"project", filepath.Join(q.Project, ".codex", "config.toml")},
		{"user", UserConfig()},
	} {
		if f.path == "" {
			continue
		}
		in, err := configInstall(q.Project, f.scope, f.path)
		if err != nil {
			installs = append(installs, &harness.Install{Scope: f.scope, File: f.path, Findings: []harness.Finding{harness.Failed("config", err.Error())}})
			continue
		}
		if in != nil {
			installs = append(installs, in)
		}
	}
	var gated []*harness.Install
	for _, in := range installs {
		if in.Gate != nil {
			gated = append(gated, in)
		}
	}
	if len(gated) == 0 {
		return installs, nil
	}
	listed, err := ListHooks(ctx, q.Binary, q.Project)
	for _, in := range gated {
		in.Findings = append(in.Findings, trustFindings(in.Scope, in.File, listed, err)...)
	}
	return installs, nil
}

// configInstall reads statewright's hooks in one config.toml: nil when it
// has none.
func configInstall(project, scope, path string) (*harness.Install, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var cfg configHooks
	if _, err := toml.Decode(string(b), &cfg); err != nil {
		return nil, fmt.Errorf("%s is not valid TOML: %v (Codex refuses to start)", path, err)
	}
	in := &harness.Install{Scope: scope, File: path}
	seen := map[Event]bool{}
	var gate string
	for name, raw := range cfg.Hooks {
		ev, err := ParseEvent(name)
		if err != nil {
			continue // hooks.state and events statewright does not register
		}
		groups, _ := raw.([]map[string]any)
		for _, g := range groups {
			list, _ := g["hooks"].([]map[string]any)
			for _, h := range list {
				cmd, _ := h["command"].(string)
				if h["type"] != "command" || !install.IsHookOf("codex", cmd) {
					continue
				}
				seen[ev] = true
				if ev == PreToolUse && gate == "" {
					gate = cmd
					if t, ok := h["timeout"].(int64); ok {
						in.Timeout = time.Duration(t) * time.Second
					}
				}
			}
		}
	}
	if len(seen) == 0 {
		return nil, nil
	}
	harness.SetEvents(in, Events, seen)
	if gate == "" {
		return in, nil
	}
	in.Hook = install.SplitCommand(gate)
	flags := install.HookFlags(in.Hook)
	if scope == "user" {
		p, scoped := flags["project"]
		switch {
		case !scoped:
			in.Findings = append(in.Findings, harness.Warned("scope", "the hooks in "+path+" have no --project: they decide every Codex session of this user, "+
				"in every directory, with this one store (run `statewright init codex --user` in the project again to scope them)"))
		case !install.Within(project, p):
			// Another project's install: it passes sessions here.
			return &harness.Install{Scope: scope, File: path, Findings: []harness.Finding{harness.Passed("scope",
				"the hooks in "+path+" are scoped to "+p+" (--project) and pass sessions in this project: not an install for it")}}, nil
		default:
			in.Findings = append(in.Findings, harness.Passed("scope", "the hooks decide only sessions working in "+p+" (--project); elsewhere they pass"))
		}
	}
	in.FailClosed = install.WrapsFailClosed(gate)
	if !in.FailClosed {
		in.FailOpen = "PreToolUse has no `|| exit 2` wrapper: a crash or a missing binary lets calls through"
	}
	patch := "*** Begin Patch\n*** Update File: " + filepath.Join(project, ".codex", "config.toml") + "\n@@\n-a\n+b\n*** End Patch\n"
	input, _ := json.Marshal(map[string]any{
		"session_id": "statewright-doctor", "turn_id": "doctor", "transcript_path": nil, "cwd": project, "model": "doctor",
		"permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "apply_patch",
		"tool_input": map[string]any{"command": patch}, "tool_use_id": fmt.Sprintf("doctor-canary-%d", time.Now().UnixNano()),
	})
	in.Gate = &harness.Gate{Shell: gate, Input: input, Blocked: wire.HookBlocked}
	return in, nil
}

// ListedHook is one hook as Codex lists it (app-server hooks/list): where
// it comes from, its key and hash in Codex's trust records, and whether
// Codex trusts it.
type ListedHook struct {
	Key         string `json:"key"`
	EventName   string `json:"eventName"`
	Command     string `json:"command"`
	SourcePath  string `json:"sourcePath"`
	Source      string `json:"source"`
	Enabled     bool   `json:"enabled"`
	IsManaged   bool   `json:"isManaged"`
	CurrentHash string `json:"currentHash"`
	TrustStatus string `json:"trustStatus"`
}

// ListHooks asks Codex which hooks a session in project runs, and whether
// each is trusted: `codex app-server` (binary, else codex on $PATH),
// initialize, then hooks/list for the project.
func ListHooks(ctx context.Context, binary, project string) ([]ListedHook, error) {
	if binary == "" {
		p, err := exec.LookPath("codex")
		if err != nil {
			return nil, errors.New("codex is not on $PATH (--codex PATH)")
		}
		binary = p
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "app-server")
	cmd.Dir = project
	cmd.Env = append(os.Environ(), "RUST_LOG=error")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s app-server: %w", binary, err)
	}
	defer func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	}()
	send := func(v any) {
		b, _ := json.Marshal(v)
		stdin.Write(append(b, '\n'))
	}
	send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{"clientInfo": map[string]any{"name": "statewright-doctor", "version": "1"}}})
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var msg struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.ID == nil {
			continue
		}
		if msg.Error != nil {
			return nil, fmt.Errorf("codex app-server: %s", msg.Error.Message)
		}
		switch *msg.ID {
		case 1:
			send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
			send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": map[string]any{"cwds": []string{project}}})
		case 2:
			var res struct {
				Data []struct {
					Hooks  []ListedHook `json:"hooks"`
					Errors []struct {
						Message string `json:"message"`
					} `json:"errors"`
				} `json:"data"`
			}
			if err := json.Unmarshal(msg.Result, &res); err != nil {
				return nil, fmt.Errorf("codex app-server hooks/list: %w", err)
			}
			var (
				out  []ListedHook
				errs []string
			)
			for _, d := range res.Data {
				out = append(out, d.Hooks...)
				for _, e := range d.Errors {
					errs = append(errs, e.Message)
				}
			}
			if len(out) == 0 && len(errs) > 0 {
				return nil, fmt.Errorf("Codex cannot load its configuration for this project: %s", strings.Join(errs, "; "))
			}
			return out, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("codex app-server did not list its hooks: %w", err)
	}
	return nil, fmt.Errorf("codex app-server ended without listing its hooks: %s", lastLine(stderr.String()))
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// trustFindings says whether Codex loads and trusts the statewright hooks
// of file, from its own hook list; the fix, when it does not, names the
// exact trust records a person adds after reviewing the hooks.
func trustFindings(scope, file string, listed []ListedHook, err error) []harness.Finding {
	if err != nil {
		return []harness.Finding{harness.Warned("trust", "cannot ask Codex whether it trusts the hooks ("+err.Error()+
			"); Codex skips untrusted hooks silently, so check /hooks in Codex")}
	}
	var ours, untrusted []ListedHook
	for _, h := range listed {
		if h.SourcePath != file || !install.IsHookOf("codex", h.Command) {
			continue
		}
		ours = append(ours, h)
		if h.TrustStatus != "trusted" && h.TrustStatus != "managed" && !h.IsManaged {
			untrusted = append(untrusted, h)
		}
	}
	switch {
	case len(ours) == 0 && scope == "project":
		return []harness.Finding{harness.Failed("trust", "Codex does not load "+file+": it reads a project's .codex/config.toml only in a trusted project. "+
			"Fix: trust the project when Codex asks, or add to "+UserConfig()+":\n"+
			"            [projects."+tomlString(filepath.Dir(filepath.Dir(file)))+"]\n            trust_level = \"trusted\"\n"+
			"          or install with `statewright init codex --user`")}
	case len(ours) == 0:
		return []harness.Finding{harness.Failed("trust", "Codex lists none of statewright's hooks in "+file+" for a session here: they do not run")}
	case len(untrusted) > 0:
		var b strings.Builder
		for _, h := range untrusted {
			fmt.Fprintf(&b, "\n            [hooks.state.%s]\n            trusted_hash = %s", tomlString(h.Key), tomlString(h.CurrentHash))
		}
		return []harness.Finding{harness.Failed("trust", fmt.Sprintf("Codex does not trust %d of statewright's %d hooks (%s): it skips them silently, "+
			"so sessions run unguarded. Fix: run `codex` here, open /hooks, review and trust them; or, having reviewed them, add to %s:%s",
			len(untrusted), len(ours), untrusted[0].TrustStatus, UserConfig(), b.String()))}
	}
	return []harness.Finding{harness.Passed("trust", fmt.Sprintf("Codex loads and trusts statewright's %d hooks in %s", len(ours), file))}
}
