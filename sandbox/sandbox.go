// Package sandbox runs one command under a phase's operating-system profile
// with bubblewrap: the tree readable, secrets hidden, protected trees
// read-only, writes only where the profile allows, no network unless
// granted, its own PID namespace, no_new_privs, and killed with its parent.
//
// Profiles are plain data (see Profile); policy.SandboxProfile derives one
// from a run's current phase. This package does the I/O: it checks that
// bubblewrap works here (Detect), turns a profile into bubblewrap's argument
// list (Args) and runs commands (Command). It imports only the standard
// library. Why bubblewrap and not Landlock: docs/sandbox.md.
package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Profile is what one command may see and do. Paths are absolute. The
// zero value is the narrowest profile: everything read-only, nothing
// hidden, no network.
type Profile struct {
	// Phase names the run's phase the profile was derived from, for
	// messages ("" outside a run).
	Phase string `json:"phase,omitempty"`
	// Writable are trees the command may write (the phase's write scope,
	// per-session caches, the call's own directory). A path that does not
	// exist is skipped: nothing is created in the user's tree.
	Writable []string `json:"writable,omitempty"`
	// ReadOnly are trees kept read-only even inside a writable tree (the
	// protected trees: harness settings, git config and hooks, shell rc
	// files). A deeper Writable path inside one is writable again, so the
	// caller leaves out writable paths inside protected trees (as
	// policy.SandboxProfile does). Missing paths are skipped.
	ReadOnly []string `json:"read_only,omitempty"`
	// Hidden are paths the command must not see: a directory becomes an
	// empty read-only tmpfs, a file reads as empty (/dev/null). Applied
	// last, so they win over Writable and ReadOnly.
	Hidden []string `json:"hidden,omitempty"`
	// Network lets the command use the host's network. Without it the
	// command gets a network namespace with only loopback.
	Network bool `json:"network,omitempty"`
	// Proxy, without Network, gives the command the hosts the policy
	// allows through statewright's proxy (netproxy.go): its namespace
	// still has only loopback, where a forwarder passes HTTP(S)_PROXY
	// connections to the proxy on the host, which checks every one.
	Proxy *NetPolicy `json:"proxy,omitempty"`
	// Tmp is the directory mounted at /tmp (per session, so nothing the
	// command leaves there reaches other sessions or the host's /tmp).
	// Empty: a fresh tmpfs.
	Tmp string `json:"tmp,omitempty"`
	// Visible are host trees under /tmp that stay visible (read-only unless
	// Writable says otherwise) over the /tmp mount: the project, when it
	// lives in /tmp.
	Visible []string `json:"visible,omitempty"`
	// Env are variables set for the command on top of the stripped
	// environment (TMPDIR, GOCACHE, ... pointing at per-session dirs).
	Env []string `json:"env,omitempty"`
	// Watch is the command line (an absolute path first) of a process the
	// phase's sandbox server runs beside it, outside the sandbox, for as
	// long as it lives: `statewright sandbox watch`, which stops the server
	// when the run leaves Phase, whoever moved it (a person, serve, the
	// TUI). A launcher that runs a command with a bubblewrap of its own
	// runs it beside that command too (followPhase). It changes nothing
	// inside the sandbox.
	Watch []string `json:"watch,omitempty"`
}

// EnvPhase is set in every sandboxed command's environment to the
// profile's phase ("-" outside a run): statewright run inside the sandbox
// says the store is hidden there instead of "no store". Not a credential:
// a command outside could set it, and it only changes a message.
const EnvPhase = "STATEWRIGHT_SANDBOX_PHASE"

// ErrUnavailable is returned (wrapped) by Command when no sandbox can run
// here; Availability.Why says why.
var ErrUnavailable = errors.New("no OS sandbox is available")

// Availability says whether commands can run sandboxed here.
type Availability struct {
	// Bwrap is bubblewrap's absolute path; "" when unavailable.
	Bwrap string `json:"bwrap,omitempty"`
	// Why says why there is no sandbox ("" when there is one).
	Why string `json:"why,omitempty"`
}

// OK reports whether a sandbox is available.
func (a Availability) OK() bool { return a.Bwrap != "" && a.Why == "" }

// String is "bubblewrap (/usr/bin/bwrap)" or "none: <why>".
func (a Availability) String() string {
	if a.OK() {
		return "bubblewrap (" + a.Bwrap + ")"
	}
	return "none: " + a.Why
}

var (
	detectOnce sync.Once
	detected   Availability
)

// Detect reports, once per process, whether bubblewrap is installed and the
// kernel lets it create the namespaces every profile uses (unprivileged
// user namespaces may be disabled, limited to 0, or forbidden by a
// container).
func Detect() Availability {
	detectOnce.Do(func() { detected = Probe(context.Background()) })
	return detected
}

// Probe checks availability now, without the cache Detect keeps: it runs
// `true` under the narrowest profile.
func Probe(ctx context.Context) Availability {
	if why := Unsupported(runtime.GOOS); why != "" {
		return Availability{Why: why}
	}
	bw, err := exec.LookPath("bwrap")
	if err != nil {
		return Availability{Why: "bubblewrap (bwrap) is not installed (Debian: apt-get install bubblewrap)"}
	}
	if abs, err := filepath.Abs(bw); err == nil {
		bw = abs
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	args, err := Args(&Profile{}, "/", []string{"/bin/sh", "-c", "exit 0"})
	if err != nil {
		return Availability{Why: err.Error()}
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bw, args...)
	cmd.Stderr = &stderr
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return Availability{Why: "bubblewrap cannot create its namespaces here (" + msg + ")"}
	}
	return Availability{Bwrap: bw}
}

// base are the arguments every sandboxed command gets: the host's root
// read-only, a fresh /dev and /proc, every namespace unshared (user, PID,
// IPC, UTS, cgroup), no nested user namespaces, killed with its parent, in
// a session of its own (no terminal injection), with no capabilities even
// when statewright runs as root (inside its own user namespace a root
// process could otherwise unmount the read-only binds). bubblewrap sets
// no_new_privs. The command itself is PID 1 of its namespace
// (--as-pid-1: no reaper process, one fork less per command,
// bench/sandbox.txt): when it exits, the kernel kills whatever it left
// behind in the namespace.
var base = []string{
	"--ro-bind", "/", "/",
	"--dev", "/dev",
	"--proc", "/proc",
	"--unshare-user", "--unshare-pid", "--as-pid-1", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
	"--disable-userns", "--cap-drop", "ALL",
	"--die-with-parent", "--new-session",
}

// Args returns bubblewrap's arguments (without the program name) that run
// argv in dir under p. It resolves symlinks in the profile's paths, since a
// bind follows them anyway and an unresolved path would protect the link,
// not its target; paths that do not exist are left out.
func Args(p *Profile, dir string, argv []string) ([]string, error) {
	return args(p, dir, argv, nil)
}

// args is Args with extra read-only binds (host path, path inside) made
// after /tmp is in place (the network proxy's socket and forwarder).
func args(p *Profile, dir string, argv []string, extra [][2]string) ([]string, error) {
	if len(argv) == 0 {
		return nil, errors.New("sandbox: no command")
	}
	args, err := mounts(p)
	if err != nil {
		return nil, err
	}
	args = appendExtra(args, extra)
	if dir != "" {
		args = append(args, "--chdir", dir)
	}
	args = append(args, "--")
	return append(args, argv...), nil
}

// mounts returns the arguments for everything but the working directory
// and the command: base, the network, /tmp, the binds and the hidden paths.
func mounts(p *Profile) ([]string, error) {
	args := append(make([]string, 0, 64), base...)
	if !p.Network {
		args = append(args, "--unshare-net")
	}
	// The binds, in the order bubblewrap makes them (the deeper one wins):
	// /tmp, the visible trees under it, then the writable and read-only
	// trees shallowest first (for the same path read-only wins).
	if p.Tmp != "" {
		t, ok := existing(p.Tmp)
		if !ok {
			return nil, fmt.Errorf("sandbox: the per-session tmp %s does not exist", p.Tmp)
		}
		args = append(args, "--bind", t, "/tmp")
	} else {
		args = append(args, "--tmpfs", "/tmp")
	}
	binds := []bind{{path: "/", ro: true}, {path: "/tmp", moved: true}}
	for _, v := range resolveAll(p.Visible) {
		if v == "/tmp" || strings.HasPrefix(v, "/tmp/") {
			binds = append(binds, bind{path: v, ro: true})
		}
	}
	ro := resolveAll(p.ReadOnly)
	isRO := make(map[string]bool, len(ro))
	for _, r := range ro {
		isRO[r] = true
	}
	tree := ro
	for _, w := range resolveAll(p.Writable) {
		if !isRO[w] {
			tree = append(tree, w)
		}
	}
	pinned := pins(tree, ro, isRO)
	isPin := make(map[string]bool, len(pinned))
	for _, d := range pinned {
		isPin[d] = true
	}
	tree = append(tree, pinned...)
	sort.SliceStable(tree, func(i, j int) bool { return depth(tree[i]) < depth(tree[j]) })
	for _, b := range tree {
		binds = append(binds, bind{path: b, ro: isRO[b], pin: isPin[b]})
	}
	for i, b := range binds {
		if i < 2 || redundant(binds, i) {
			continue
		}
		if b.ro {
			args = append(args, "--ro-bind", b.path, b.path)
		} else {
			args = append(args, "--bind", b.path, b.path)
		}
	}
	var hiddenDirs []string
	for _, h := range resolveAll(append(append([]string(nil), p.Hidden...), serverDirs(p)...)) {
		fi, err := os.Stat(h)
		if err != nil || slices.ContainsFunc(hiddenDirs, func(d string) bool { return within(h, d) }) {
			// Missing, or inside a hidden directory already (an empty
			// read-only tmpfs: no mount point can be made in it).
			continue
		}
		if fi.IsDir() {
			hiddenDirs = append(hiddenDirs, h)
			args = append(args, "--tmpfs", h, "--remount-ro", h)
		} else {
			args = append(args, "--ro-bind", "/dev/null", h)
		}
	}
	return args, nil
}

// serverDirs are the directories of sandbox servers' sockets a profile
// hides (ServerDir: the default root's, and the root of the profile's
// session): no sandboxed command may reach a server, its own or another
// profile's.
func serverDirs(p *Profile) []string {
	var out []string
	if root, err := DefaultRoot(); err == nil {
		out = append(out, ServerDir(root))
	}
	if p.Tmp != "" {
		out = append(out, ServerDir(filepath.Dir(filepath.Dir(p.Tmp))))
	}
	return out
}

// appendExtra appends read-only binds (host path, path inside) to
// bubblewrap's arguments after the profile's mounts.
func appendExtra(args []string, extra [][2]string) []string {
	for _, b := range extra {
		args = append(args, "--ro-bind", b[0], b[1])
	}
	return args
}

// bind is one mount of a host path at the same path (moved: /tmp, whose
// content comes from elsewhere; pin: a directory bound onto itself to make
// it a mount point, see pins).
type bind struct {
	path       string
	ro         bool
	moved, pin bool
}

// redundant reports whether binds[i] changes nothing: a later bind of the
// same path replaces it, or the tree it sits in is already the same host
// tree with the same mode (a read-only file inside the read-only root, a
// cache inside a writable tree). Every mount costs the command time
// (bench/sandbox.txt), and a home directory holds a dozen protected files
// that the read-only root already covers.
func redundant(binds []bind, i int) bool {
	b := binds[i]
	if b.pin {
		return false
	}
	for _, later := range binds[i+1:] {
		if later.path == b.path {
			return true
		}
	}
	for j := i - 1; j >= 0; j-- {
		if within(b.path, binds[j].path) {
			return !binds[j].moved && binds[j].ro == b.ro
		}
	}
	return false
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// pins returns the directories between each read-only tree and the
// writable tree that holds it (.git between the project and .git/config),
// to be bound onto themselves: each becomes a mount point, which rename(2)
// and rmdir(2) refuse (EBUSY), so a command cannot move a protected
// tree's parent aside and put a directory of its own, with its own
// .git/config and hooks, in its place. The read-only trees are mount
// points already; binds and ro are resolved paths.
func pins(binds, ro []string, isRO map[string]bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range ro {
		enclosing := ""
		for _, b := range binds {
			if b != r && strings.HasPrefix(r, strings.TrimSuffix(b, "/")+"/") && len(b) > len(enclosing) {
				enclosing = b
			}
		}
		if enclosing == "" || isRO[enclosing] {
			continue
		}
		for d := filepath.Dir(r); d != enclosing && strings.HasPrefix(d, enclosing+"/"); d = filepath.Dir(d) {
			if seen[d] {
				break
			}
			seen[d] = true
			if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
				out = append(out, d)
			}
		}
	}
	return out
}

// existing resolves p's symlinks; ok is false when p does not exist.
func existing(p string) (string, bool) {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", false
	}
	return r, true
}

// resolveAll resolves and de-duplicates paths that exist, ordered so that a
// tree comes before the paths below it (bubblewrap mounts in order, so the
// deeper mount wins).
func resolveAll(paths []string) []string {
	seen := make(map[string]bool, len(paths))
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if p == "" || !filepath.IsAbs(p) {
			continue
		}
		r, ok := existing(p)
		if !ok || seen[r] {
			continue
		}
		seen[r] = true
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool { return depth(out[i]) < depth(out[j]) })
	return out
}

func depth(p string) int { return strings.Count(filepath.Clean(p), "/") }

// Command returns a command that runs argv in dir under p, with env (the
// caller's environment, already stripped with StripEnv) plus p.Env. It
// fails with ErrUnavailable when a is not OK: the caller decides whether to
// run unsandboxed (and says so) or to refuse. A profile whose network goes
// through the proxy starts it, and it runs until ctx is done: the caller
// cancels ctx when the command has ended.
func Command(ctx context.Context, a Availability, p *Profile, dir string, argv []string, env []string) (*exec.Cmd, error) {
	if !a.OK() {
		return nil, fmt.Errorf("%w: %s", ErrUnavailable, a.Why)
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	binds, prefix, _, stop, err := netSetup(p, exe, nil)
	if err != nil {
		return nil, err
	}
	bargs, err := args(p, dir, append(prefix, argv...), binds)
	if err != nil {
		stop()
		return nil, err
	}
	if prefix != nil {
		// The proxy lives until ctx ends: callers cancel it when the
		// command is done.
		go func() { <-ctx.Done(); stop() }()
	}
	cmd := exec.CommandContext(ctx, a.Bwrap, bargs...)
	cmd.Env = MergeEnv(env, profileEnv(p))
	return cmd, nil
}

// profileEnv is p.Env plus EnvPhase, and the proxy's address when the
// profile's network goes through it.
func profileEnv(p *Profile) []string {
	phase := p.Phase
	if phase == "" {
		phase = "-"
	}
	env := append(append([]string{}, p.Env...), EnvPhase+"="+phase)
	if p.Proxy != nil && !p.Network {
		env = append(env, proxyEnv()...)
	}
	return env
}

// MergeEnv returns env with over's variables replacing or adding to it.
func MergeEnv(env, over []string) []string {
	if len(over) == 0 {
		return env
	}
	keys := make(map[string]bool, len(over))
	for _, kv := range over {
		k, _, _ := strings.Cut(kv, "=")
		keys[k] = true
	}
	out := make([]string, 0, len(env)+len(over))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !keys[k] {
			out = append(out, kv)
		}
	}
	return append(out, over...)
}

// strippedPrefixes and strippedNames are environment variables a sandboxed
// command never sees: statewright's own settings and credentials, and the
// credentials a harness hands its hooks.
var (
	strippedPrefixes = []string{"STATEWRIGHT_"}
	strippedNames    = map[string]bool{
		"CLAUDE_ENV_FILE": true,
	}
)

// StripEnv returns env without STATEWRIGHT_* variables and hook
// credentials.
func StripEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if strippedNames[k] || hasAnyPrefix(k, strippedPrefixes) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// availabilityCache is the file DetectCached keeps under its root.
type availabilityCache struct {
	BootID string       `json:"boot_id"`
	Bwrap  string       `json:"bwrap"`
	MTime  int64        `json:"bwrap_mtime"`
	Avail  Availability `json:"availability"`
}

// DetectCached is Detect for short-lived processes (hooks): it keeps the
// probe's answer in root/availability.json for as long as the kernel
// (boot id) and bubblewrap's binary stay the same, so that a hook does not
// start a probe sandbox on every call. Sandboxed commands cannot write
// root (it is read-only in every profile); a forged "available" would only
// make the launcher fail closed.
func DetectCached(root string) Availability {
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	bw, err := exec.LookPath("bwrap")
	if err != nil {
		return Detect()
	}
	fi, err := os.Stat(bw)
	if err != nil {
		return Detect()
	}
	key := availabilityCache{BootID: strings.TrimSpace(string(boot)), Bwrap: bw, MTime: fi.ModTime().UnixNano()}
	file := filepath.Join(root, "availability.json")
	if b, err := os.ReadFile(file); err == nil {
		var c availabilityCache
		if json.Unmarshal(b, &c) == nil && c.BootID == key.BootID && c.Bwrap == key.Bwrap && c.MTime == key.MTime && key.BootID != "" {
			return c.Avail
		}
	}
	key.Avail = Detect()
	if b, err := json.Marshal(key); err == nil && os.MkdirAll(root, 0o700) == nil {
		tmp := file + ".tmp"
		if os.WriteFile(tmp, b, 0o600) == nil {
			_ = os.Rename(tmp, file)
		}
	}
	return key.Avail
}
