package policy

import (
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// This file defines, in one place, the two sets the static law and the OS
// sandbox share (docs/threat-model.md, docs/sandbox.md):
//
//   - the protected set: the law itself (harness settings and hooks,
//     statewright's own files, shell rc files, git config and hooks). The
//     agent never changes it; the sandbox mounts it read-only.
//   - the secret set: operator credentials, statewright's token files and
//     signing key, and the default secrets (.env*, *.pem, ~/.ssh, ~/.aws,
//     ...) that a workflow may extend or switch off. The agent never reads
//     it; the sandbox hides it.
//
// Both are trees: a path protects (or hides) everything below it. The
// policy matches them on real paths (symlinks and ".." resolved by the
// runtime). HostFences lists them as absolute paths and patterns for a
// host, which is what the sandbox profile is derived from.

// Host says where the law and the secrets live on the agent's host. The
// runtime fills it (runtime.DiscoverHost) with absolute, symlink-resolved
// paths; empty fields are unknown and simply contribute nothing.
type Host struct {
	// Home is the user's home directory.
	Home string `json:"home,omitempty"`
	// ConfigHome is $XDG_CONFIG_HOME, else Home/.config.
	ConfigHome string `json:"config_home,omitempty"`
	// ProjectDir is the project root the harness runs in.
	ProjectDir string `json:"project_dir,omitempty"`
	// GitDirs are the project's git directories: .git, or for a worktree
	// its gitdir and the common directory.
	GitDirs []string `json:"git_dirs,omitempty"`
	// Store is the SQLite store file ("" for PostgreSQL); its side files
	// (-wal, -shm, -journal, .lock) are protected with it.
	Store string `json:"store,omitempty"`
	// Binary is the statewright binary the hooks run.
	Binary string `json:"binary,omitempty"`
	// EnvFile is Claude Code's CLAUDE_ENV_FILE (sourced before every
	// shell command the agent runs).
	EnvFile string `json:"env_file,omitempty"`
	// Workflows are workflow files the law was loaded from.
	Workflows []string `json:"workflows,omitempty"`
	// Protected are further protected paths (trees).
	Protected []string `json:"protected,omitempty"`
	// Secrets are further secret paths (trees): token files or a signing
	// key kept outside ConfigHome/statewright.
	Secrets []string `json:"secrets,omitempty"`
}

// Fence is one entry of the protected or the secret set.
type Fence struct {
	// Path is absolute and protects everything below it, unless Pattern is
	// set: then it is a doublestar pattern over absolute paths, or, when it
	// does not start with "/", over a path's last components at any depth
	// ("**/.env*" style: see Pattern).
	Path string `json:"path"`
	// Pattern marks Path as a pattern rather than a literal tree.
	Pattern bool `json:"pattern,omitempty"`
	// What names what the entry is, for messages ("Claude Code settings and hooks").
	What string `json:"what"`
}

// Fences are a host's protected and secret sets, as the sandbox needs them.
type Fences struct {
	// Protected is read-only for the agent: it never writes, moves,
	// deletes or links into these trees.
	Protected []Fence `json:"protected"`
	// Secret is never read by the agent: hidden (absent) in the sandbox.
	Secret []Fence `json:"secret"`
	// Hidden is what the sandbox hides: the secrets plus the store and its
	// side files (not a secret to read — it holds no secret — but hidden so
	// that code the agent runs cannot change it).
	Hidden []Fence `json:"hidden"`
	// NotSecret are base-name patterns that are never secrets, even where a
	// default secret pattern matches (".env.example").
	NotSecret []string `json:"not_secret"`
}

// SecretRules are a workflow's changes to the default secret set
// (workflow "secrets": {"defaults": false, "paths": [...]}).
type SecretRules struct {
	// NoDefaults drops the default secret set. statewright's own
	// credentials (its configuration directory, token files, signing key)
	// stay secret.
	NoDefaults bool
	// Paths are further secrets: absolute paths, "~/" paths, project-relative
	// doublestar patterns, or base-name patterns without "/" that match at
	// any depth (like .gitignore).
	Paths []string
}

// projectLaw are the law's paths relative to a project root (and, for the
// harness directories, to the home directory: their user-level twins).
var projectLaw = []struct{ rel, what string }{
	{".claude", "Claude Code settings and hooks"},
	{".codex", "Codex configuration"},
	{".cursor", "Cursor configuration and hooks"},
	{".opencode", "opencode plugins and configuration"},
	{".pi", "Pi extensions and settings"},
	{".mcp.json", "the MCP server configuration"},
	{"opencode.json", "opencode configuration"},
	{"opencode.jsonc", "opencode configuration"},
	{".statewright", "statewright's project directory"},
	{".envrc", "a direnv file (run by the shell)"},
	// VS Code runs a workspace's tasks on folder open and takes its
	// terminal environment and interpreters from its settings: code that
	// runs when the user opens the folder, before they run anything.
	{".vscode/tasks.json", "VS Code tasks (run on folder open)"},
	{".vscode/settings.json", "VS Code workspace settings (interpreters, terminal environment)"},
}

// homeLaw are the law's paths relative to the home directory besides the
// harness directories of projectLaw.
var homeLaw = []struct{ rel, what string }{
	{".claude.json", "Claude Code user configuration"},
	{".gitconfig", "git configuration (it can run programs)"},
	{".bashrc", "a shell rc file"}, {".bash_profile", "a shell rc file"}, {".bash_login", "a shell rc file"},
	{".bash_logout", "a shell rc file"}, {".profile", "a shell rc file"}, {".zshrc", "a shell rc file"},
	{".zshenv", "a shell rc file"}, {".zprofile", "a shell rc file"}, {".zlogin", "a shell rc file"},
	{".zlogout", "a shell rc file"},
	// Toolchain configuration outside the project that makes the user's
	// own later builds, installs and editors run code (issue 19 follow-up):
	// nothing the agent plants here may run in the user's unsandboxed
	// sessions. Project-level twins (.npmrc, .cargo/config.toml, ...) are
	// not protected: like package.json scripts, build.rs or a Makefile they
	// are the project's own code, which the user reviews in the diff.
	{".npmrc", "npm configuration (node-options, script-shell run programs)"},
	{".yarnrc", "yarn configuration (it can run programs)"},
	{".yarnrc.yml", "yarn configuration (yarnPath runs a script)"},
	{".cargo/config.toml", "cargo configuration (rustc-wrapper, runner, linker run programs)"},
	{".cargo/config", "cargo configuration (rustc-wrapper, runner, linker run programs)"},
	{".pip/pip.conf", "pip configuration (its index serves the code pip installs)"},
	{".gradle/init.d", "Gradle init scripts (run by every build)"},
	{".gradle/init.gradle", "a Gradle init script (run by every build)"},
	{".gradle/gradle.properties", "Gradle properties (JVM arguments of every build)"},
	{".m2/settings.xml", "Maven settings (repositories and plugins of every build)"},
	{".mavenrc", "mvn's rc file (sourced by every mvn)"},
	{".direnvrc", "direnv's rc file (sourced on every cd)"},
	{".docker/config.json", "Docker configuration (credential helpers run programs)"},
	{".curlrc", "curl configuration (a proxy or --resolve there sends curl elsewhere than its URL)"},
	{".config/.curlrc", "curl configuration (a proxy or --resolve there sends curl elsewhere than its URL)"},
	{".wgetrc", "wget configuration (a proxy there sends wget elsewhere than its URL)"},
	{".ssh", "SSH configuration and keys (ProxyCommand runs programs; authorized_keys lets others in)"},
	{".vimrc", "an editor rc file"}, {".vim", "editor plugins"}, {".emacs", "an editor rc file"}, {".emacs.d", "editor plugins"},
	{".local/bin", "a directory on the user's PATH"}, {"bin", "a directory on the user's PATH"},
	{"go/bin", "a directory on the user's PATH (go install)"}, {".cargo/bin", "a directory on the user's PATH (cargo install)"},
	// Files and directories the person's login, desktop, terminal
	// multiplexer, interpreters, debuggers and database shells run code
	// from, later and unconfined (docs/threat-model.md). The PATH
	// directories under home that are not listed here come from the
	// environment (runtime.DiscoverHost).
	{".bash_aliases", "a shell rc file (sourced by Debian's .bashrc)"}, {".bash_completion", "a shell rc file (sourced by bash-completion)"},
	{".local/share/bash-completion", "bash completions (sourced on tab)"},
	{".cshrc", "a shell rc file"}, {".tcshrc", "a shell rc file"}, {".login", "a shell rc file"}, {".logout", "a shell rc file"},
	{".kshrc", "a shell rc file"}, {".mkshrc", "a shell rc file"}, {".shrc", "a shell rc file"},
	{".oh-my-zsh", "zsh plugins (sourced by .zshrc)"},
	{".pam_environment", "the login environment"}, {".xprofile", "a login script"}, {".xinitrc", "a login script"},
	{".xsession", "a login script"}, {".xsessionrc", "a login script"},
	{".local/share/systemd", "systemd user units (started at login, by timers or by path watches)"},
	{".local/share/dbus-1", "D-Bus session services (started when a program asks for their name)"},
	{".local/share/applications", "desktop entries and MIME handlers (run when a file is opened)"},
	{".local/lib", "the user's Python site-packages (a .pth file or usercustomize runs in every python)"},
	{".tmux.conf", "tmux configuration (run-shell runs programs)"}, {".screenrc", "screen configuration (it runs programs)"},
	{".psqlrc", "psql's rc file (\\! runs programs)"}, {".sqliterc", "sqlite3's rc file (.shell runs programs)"},
	{".my.cnf", "the MySQL client's configuration (pager runs a program)"},
	{".mongoshrc.js", "mongosh's rc file (JavaScript)"}, {".mongorc.js", "the mongo shell's rc file (JavaScript)"},
	{".Rprofile", "R's profile (run by every R session)"}, {".Renviron", "R's environment (R_PROFILE_USER names code)"},
	{".irbrc", "irb's rc file (Ruby code)"}, {".pryrc", "pry's rc file (Ruby code)"}, {".perldb", "the Perl debugger's rc file (Perl code)"},
	{".pdbrc", "pdb's rc file (Python code)"}, {".ipython", "IPython profiles and startup scripts (Python code)"},
	{".jupyter", "Jupyter configuration (Python code)"}, {".julia/config", "Julia's startup file (Julia code)"},
	{".ghci", "GHCi's rc file (:! runs programs)"}, {".octaverc", "Octave's rc file (system runs programs)"},
	{".gdbinit", "gdb's rc file (shell commands)"}, {".lldbinit", "lldb's rc file (shell commands)"},
	{".mailcap", "MIME handlers (they run programs)"}, {".hgrc", "Mercurial configuration (hooks run programs)"},
	{".sbt", "sbt plugins and global settings (Scala code in every build)"},
	{".rustup/settings.toml", "rustup's settings (a linked toolchain runs as cargo and rustc)"},
	{".kube/config", "Kubernetes configuration (exec credential plugins run programs)"},
	{".aws/config", "AWS configuration (credential_process runs a program)"},
	{".gnupg/gpg-agent.conf", "gpg-agent configuration (pinentry-program runs a program)"},
	{".vscode/extensions", "VS Code extensions (code run by the editor)"},
}

// configLaw are the law's paths relative to the configuration directory
// (~/.config).
var configLaw = []struct{ rel, what string }{
	{"statewright", "statewright's configuration (operator token, tokens, store id)"},
	{"git", "git configuration (it can run programs)"},
	{"opencode", "opencode configuration and plugins"},
	{"fish", "a shell rc directory"},
	{"go/env", "the Go environment file (GOFLAGS=-toolexec, CC run programs in every go build)"},
	{"pip/pip.conf", "pip configuration (its index serves the code pip installs)"},
	{"direnv", "direnv configuration (sourced on every cd)"},
	{"nvim", "editor configuration and plugins"},
	{"Code/User", "VS Code user settings and tasks"},
	{"systemd", "systemd user units (started at login, by timers or by path watches)"},
	{"autostart", "desktop autostart entries (run at login)"},
	{"environment.d", "the login environment (PATH, LD_PRELOAD)"},
	{"mimeapps.list", "the default applications (run when a file is opened)"},
	{"tmux", "tmux configuration (run-shell runs programs)"},
	{"gdb", "gdb's configuration (shell commands)"},
	{"hg", "Mercurial configuration (hooks run programs)"},
	{"nix", "Nix configuration (post-build-hook runs a program)"},
	{"nixpkgs", "Nix configuration (Nix code)"},
	{"starship.toml", "the prompt's configuration (custom modules run on every prompt)"},
	{"emacs", "editor configuration and plugins"},
	{"i3", "a window manager's configuration (exec runs programs at login)"},
	{"sway", "a window manager's configuration (exec runs programs at login)"},
	{"hypr", "a window manager's configuration (exec runs programs at login)"},
	{"openbox", "a window manager's configuration (autostart runs programs at login)"},
}

// gitLaw are the law's paths inside a git directory.
var gitLaw = []struct{ rel, what string }{
	{"config", "git configuration (it can run programs)"},
	{"config.worktree", "git configuration (it can run programs)"},
	{"commondir", "git's common directory (its config and hooks are the repository's)"},
	{"hooks", "git hooks (they run on commit)"},
	{"modules", "submodule git directories (their config and hooks)"},
}

// protectedNames are doublestar patterns (over lower-cased paths without
// the leading "/") that protect a path wherever it is: in nested projects,
// in a home directory the runtime did not name, and when the runtime
// supplies no Host at all. They are matched case-insensitively because
// macOS and Windows file systems are.
var protectedNames = []string{
	"**/.claude", "**/.claude/**", "**/.claude.json",
	"**/.codex", "**/.codex/**",
	"**/.cursor", "**/.cursor/**",
	"**/.opencode", "**/.opencode/**", "**/.config/opencode", "**/.config/opencode/**",
	"**/.pi", "**/.pi/**",
	"**/.mcp.json", "**/opencode.json", "**/opencode.jsonc",
	"**/.statewright", "**/.statewright/**",
	"**/.config/statewright", "**/.config/statewright/**",
	"**/.bashrc", "**/.bash_profile", "**/.bash_login", "**/.bash_logout", "**/.profile",
	"**/.zshrc", "**/.zshenv", "**/.zprofile", "**/.zlogin", "**/.zlogout",
	"**/.config/fish", "**/.config/fish/**", "**/.envrc",
	"**/.gitconfig", "**/.config/git", "**/.config/git/**",
	"**/.git/config", "**/.git/config.worktree", "**/.git/commondir", "**/.git/hooks", "**/.git/hooks/**",
	"**/.git/modules", "**/.git/modules/**", "**/.git/worktrees/*/config.worktree",
	"**/.vscode/tasks.json", "**/.vscode/settings.json",
	"**/.config/go/env", "**/.config/pip/pip.conf", "**/.pip/pip.conf", "**/.config/direnv", "**/.config/direnv/**",
	"**/.gradle/init.d", "**/.gradle/init.d/**", "**/.gradle/init.gradle", "**/.m2/settings.xml", "**/.mavenrc",
	"**/.direnvrc", "**/.docker/config.json", "**/.curlrc", "**/.wgetrc",
	"**/.bash_aliases", "**/.pam_environment", "**/.xprofile", "**/.xsessionrc", "**/.tmux.conf", "**/.psqlrc",
	"**/.sqliterc", "**/.rprofile", "**/.irbrc", "**/.gdbinit", "**/.mailcap",
	"**/.config/systemd", "**/.config/systemd/**", "**/.local/share/systemd", "**/.local/share/systemd/**",
	"**/.config/autostart", "**/.config/autostart/**", "**/.config/environment.d", "**/.config/environment.d/**",
}

// protectedMarkers are lower-case substrings that mark a protected path in
// shell text that cannot be resolved statically (a dynamic redirect target,
// the arguments of a command that writes or runs code).
var protectedMarkers = []string{
	".statewright", ".config/statewright", "operator-token", "claude_env_file",
	".claude", ".mcp.json", ".codex", ".cursor", ".opencode", "opencode/", "opencode.json",
	".pi/", ".bashrc", ".bash_profile", ".bash_login", ".zshrc", ".zshenv", ".zprofile", ".zlogin",
	".profile", "config/fish", ".envrc", ".gitconfig", "config/git", ".git/config", ".git/hooks", ".git/modules", ".git/commondir",
	".vscode/tasks.json", ".vscode/settings.json", "config/go/env", "pip.conf", ".gradle/init", ".m2/settings.xml",
	".mavenrc", ".direnvrc", "config/direnv", ".docker/config.json", ".curlrc", ".wgetrc",
	".bash_aliases", ".pam_environment", ".xprofile", ".tmux.conf", ".psqlrc", ".sqliterc", ".rprofile", ".irbrc",
	".gdbinit", ".mailcap", "config/systemd", "share/systemd", "config/autostart", "environment.d",
}

// toolchainConfigWriters are commands that write a toolchain's user
// configuration (a protected file above) through the tool itself:
// program, the words that select the writing verb, and the file.
var toolchainConfigWriters = []struct {
	program string
	verbs   [][]string // any of these word sequences after the program
	file    string
}{
	{"go", [][]string{{"env", "-w"}, {"env", "-u"}}, "~/.config/go/env"},
	{"npm", [][]string{{"config", "set"}, {"config", "delete"}, {"config", "edit"}, {"set"}, {"config", "fix"}}, "~/.npmrc"},
	{"pnpm", [][]string{{"config", "set"}, {"config", "delete"}, {"set"}}, "~/.npmrc"},
	{"yarn", [][]string{{"config", "set"}, {"config", "delete"}, {"config", "unset"}}, "~/.yarnrc"},
	{"pip", [][]string{{"config", "set"}, {"config", "unset"}, {"config", "edit"}}, "~/.config/pip/pip.conf"},
	{"pip3", [][]string{{"config", "set"}, {"config", "unset"}, {"config", "edit"}}, "~/.config/pip/pip.conf"},
}

// ToolchainConfigWrite reports the protected configuration file a command
// (its argv, wrappers peeled) writes through its own tool ("go env -w",
// "npm config set"), or "".
func ToolchainConfigWrite(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	prog := path.Base(argv[0])
	for _, w := range toolchainConfigWriters {
		if w.program != prog {
			continue
		}
		for _, v := range w.verbs {
			if hasWords(argv[1:], v) {
				return w.file
			}
		}
	}
	return ""
}

// hasWords reports whether the operands of args (words not starting with
// "-", except the verb words themselves) start with want; a verb that is
// an option ("-w") may appear anywhere after the words before it.
func hasWords(args, want []string) bool {
	j := 0
	for _, a := range args {
		if j == len(want) {
			break
		}
		if a == want[j] || strings.HasPrefix(want[j], "-") && strings.HasPrefix(a, want[j]) {
			j++
			continue
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
		if !strings.HasPrefix(want[j], "-") {
			return false
		}
	}
	return j == len(want)
}

// ownSecretNames are statewright's own credentials wherever they are; a
// workflow cannot switch them off.
var ownSecretNames = []string{
	"**/.config/statewright", "**/.config/statewright/**",
	"**/statewright/operator-token", "**/statewright/tokens.json", "**/statewright/signing-key*",
}

// defaultSecrets are the default secret set (docs/sandbox.md, the hidden set):
// anchored to the home directory ("~/") or base-name patterns that match at
// any depth. A workflow may switch them off.
var defaultSecrets = []struct{ pat, what string }{
	{"~/.ssh", "SSH keys"},
	{"~/.aws", "AWS credentials"},
	{"~/.config/gcloud", "Google Cloud credentials"},
	{"~/.config/gh", "GitHub CLI credentials"},
	{"~/.netrc", "netrc credentials"},
	{"~/.git-credentials", "git credentials"},
	{"~/.claude/.credentials.json", "Claude Code credentials"},
	{"~/.claude/projects", "Claude Code transcripts"},
	{"~/.codex/auth.json", "Codex credentials"},
	{"~/.ssh/id_*", "SSH private keys"},
	// Tools' credential files in the home directory: tokens and
	// passwords a test or a build the agent wrote could print.
	{"~/.npmrc", "npm registry tokens"},
	{"~/.pypirc", "PyPI credentials"},
	{"~/.pgpass", "PostgreSQL passwords"},
	{"~/.docker/config.json", "Docker registry credentials"},
	{"~/.kube/config", "Kubernetes credentials"},
	{"~/.cargo/credentials.toml", "crates.io token"},
	{"~/.cargo/credentials", "crates.io token"},
	{"~/.gem/credentials", "RubyGems credentials"},
	{"~/.terraform.d/credentials.tfrc.json", "Terraform tokens"},
	{"~/.vault-token", "a Vault token"},
	{"~/.config/hub", "hub credentials"},
	{"~/.azure", "Azure credentials"},
	{"~/.gnupg", "GnuPG keys"},
	{"~/.password-store", "pass passwords"},
	{"~/.bash_history", "shell history (secrets typed on the command line)"},
	{"~/.zsh_history", "shell history (secrets typed on the command line)"},
	{".env*", "an environment file"},
	// PEM keys in the project and the home directory; never a system
	// certificate store (/etc/ssl/certs holds public certificates).
	{"**/*.pem", "a PEM key or certificate in the project"},
	{"~/**/*.pem", "a PEM key or certificate in the home directory"},
	{".netrc", "netrc credentials"},
}

// defaultSecretNames are defaultSecrets as patterns over lower-cased paths
// without the leading "/", for when no Host names the home directory.
var defaultSecretNames = []string{
	"**/.ssh", "**/.ssh/**", "**/.aws", "**/.aws/**", "**/.config/gcloud", "**/.config/gcloud/**",
	"**/.config/gh", "**/.config/gh/**", "**/.netrc", "**/.git-credentials",
	"**/.claude/.credentials.json", "**/.claude/projects", "**/.claude/projects/**", "**/.codex/auth.json",
	"**/.npmrc", "**/.pypirc", "**/.pgpass", "**/.docker/config.json", "**/.kube/config", "**/.cargo/credentials.toml",
	"**/.cargo/credentials", "**/.gem/credentials", "**/.terraform.d/credentials.tfrc.json", "**/.vault-token",
	"**/.config/hub", "**/.azure", "**/.azure/**", "**/.gnupg", "**/.gnupg/**", "**/.password-store", "**/.password-store/**",
	"**/.bash_history", "**/.zsh_history",
	"**/.env*", "**/*.pem",
}

// notSecret are base-name patterns that are never secrets (examples and
// templates of them).
var notSecret = []string{"*.example", "*.sample", "*.template"}

// storeSideFiles are the suffixes of SQLite's side files.
var storeSideFiles = []string{"", "-wal", "-shm", "-journal", ".lock"}

// HostFences returns the protected and secret sets for a host, with the
// workflow's secret rules applied: absolute trees for everything the host
// names, plus the name patterns that apply anywhere. The sandbox mounts
// Protected read-only and hides Hidden; the static law decides on the same
// sets (Law.Fences gives them with the law's own rules).
func HostFences(h *Host, rules SecretRules) Fences {
	var f Fences
	if h == nil {
		h = &Host{}
	}
	add := func(list *[]Fence, p, what string) {
		if p != "" {
			*list = append(*list, Fence{Path: path.Clean(p), What: what})
		}
	}
	for _, root := range []string{h.ProjectDir, h.Home} {
		if root == "" {
			continue
		}
		for _, e := range projectLaw {
			add(&f.Protected, path.Join(root, e.rel), e.what)
		}
	}
	if h.Home != "" {
		for _, e := range homeLaw {
			add(&f.Protected, path.Join(h.Home, e.rel), e.what)
		}
	}
	cfg := configHome(h)
	if cfg != "" {
		for _, e := range configLaw {
			add(&f.Protected, path.Join(cfg, e.rel), e.what)
		}
	}
	gitDirs := h.GitDirs
	if len(gitDirs) == 0 && h.ProjectDir != "" {
		gitDirs = []string{path.Join(h.ProjectDir, ".git")}
	}
	for _, g := range gitDirs {
		for _, e := range gitLaw {
			add(&f.Protected, path.Join(g, e.rel), e.what)
		}
	}
	if h.Store != "" {
		for _, s := range storeSideFiles {
			add(&f.Protected, h.Store+s, "the statewright store")
			add(&f.Hidden, h.Store+s, "the statewright store")
		}
	}
	add(&f.Protected, h.Binary, "the statewright binary")
	add(&f.Protected, h.EnvFile, "CLAUDE_ENV_FILE (sourced before every shell command)")
	for _, w := range h.Workflows {
		add(&f.Protected, w, "a workflow file")
	}
	for _, p := range h.Protected {
		add(&f.Protected, p, "a protected path")
	}
	for _, n := range protectedNames {
		f.Protected = append(f.Protected, Fence{Path: n, Pattern: true, What: "a protected path"})
	}

	if cfg != "" {
		add(&f.Secret, path.Join(cfg, "statewright"), "statewright's credentials (operator token, tokens, signing key)")
	}
	for _, s := range h.Secrets {
		add(&f.Secret, s, "a statewright credential")
	}
	for _, n := range ownSecretNames {
		f.Secret = append(f.Secret, Fence{Path: n, Pattern: true, What: "statewright's credentials"})
	}
	if !rules.NoDefaults {
		for _, d := range defaultSecrets {
			f.Secret = append(f.Secret, secretFence(h, d.pat, d.what))
		}
	}
	for _, p := range rules.Paths {
		f.Secret = append(f.Secret, secretFence(h, p, "a secret named by the workflow"))
	}
	f.Hidden = append(f.Hidden, f.Secret...)
	f.NotSecret = append([]string(nil), notSecret...)
	return f
}

// secretFence turns a secret pattern as written into a Fence: "~/x" under
// the home directory, a relative pattern with "/" under the project, a
// pattern without "/" as a base-name pattern at any depth.
func secretFence(h *Host, pat, what string) Fence {
	switch {
	case strings.HasPrefix(pat, "~/") && h.Home != "":
		return literalOrPattern(path.Join(h.Home, pat[2:]), what)
	case strings.HasPrefix(pat, "~/"):
		return Fence{Path: "**/" + pat[2:], Pattern: true, What: what}
	case strings.HasPrefix(pat, "/"):
		return literalOrPattern(pat, what)
	case !strings.Contains(strings.TrimSuffix(pat, "/"), "/"):
		return Fence{Path: strings.TrimSuffix(pat, "/"), Pattern: true, What: what}
	case h.ProjectDir != "":
		return literalOrPattern(path.Join(h.ProjectDir, pat), what)
	}
	return Fence{Path: "**/" + strings.TrimPrefix(pat, "./"), Pattern: true, What: what}
}

func literalOrPattern(p, what string) Fence {
	return Fence{Path: p, Pattern: strings.ContainsAny(p, "*?[{"), What: what}
}

func configHome(h *Host) string {
	if h.ConfigHome != "" {
		return h.ConfigHome
	}
	if h.Home != "" {
		return path.Join(h.Home, ".config")
	}
	return ""
}

// Match reports whether the fence covers p (an absolute, clean path): p is
// the fence's path or below it, or matches its pattern (a relative pattern
// matches p's trailing components at any depth, and everything below a
// match). Matching ignores case as a case-insensitive file system does
// (foldPath).
func (f Fence) Match(p string) bool {
	lp := foldPath(p)
	if !f.Pattern {
		return underOrEqual(lp, foldPath(f.Path))
	}
	pat := foldPath(f.Path)
	if strings.HasPrefix(pat, "/") {
		for q := lp; ; q = path.Dir(q) {
			if ok, _ := doublestar.Match(pat, q); ok {
				return true
			}
			if q == "/" || q == "." {
				return false
			}
		}
	}
	if !strings.HasPrefix(pat, "**/") {
		pat = "**/" + pat
	}
	return matchAnyDepth(pat, strings.TrimPrefix(lp, "/"))
}

// matchAnyDepth reports whether a "**/"-pattern matches the lower-cased
// relative path p or one of its ancestors.
func matchAnyDepth(pat, p string) bool {
	for q := p; q != "" && q != "."; q = path.Dir(q) {
		if ok, _ := doublestar.Match(pat, q); ok {
			return true
		}
		if !strings.Contains(q, "/") {
			break
		}
	}
	return false
}

// underOrEqual reports whether p is dir or lies below it (both clean).
func underOrEqual(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || len(p) > len(dir) && p[len(dir)] == '/' && p[:len(dir)] == dir
}

// properAncestor reports whether dir is a proper ancestor of p (both clean
// and absolute).
func properAncestor(dir, p string) bool {
	if dir == p {
		return false
	}
	return underOrEqual(p, dir)
}

// fenceSet is a compiled set of fences, matched on lower-cased paths.
type fenceSet struct {
	trees  []string // absolute literal trees
	seqs   []string // "/a/b": component sequences that match at any depth, tree-wise
	globs  []string // doublestar patterns: absolute, or "**/..." at any depth
	except []string // base-name patterns that globs never match
	// shown maps a lower-cased entry to the fence as written, so a lesson
	// names the path with its own case (only entries that differ).
	shown map[string]string
	// The fast matcher's tables (fencematch.go): allFast when every glob
	// and exception compiles to it.
	fast
}

func compileFences(fs []Fence, except []string) fenceSet {
	var s fenceSet
	s.except = except
	for _, f := range fs {
		p, w := foldPath(f.Path), f.Path
		// key is the entry as match names it; shown, as the fence wrote it.
		var key, shown string
		switch {
		case !f.Pattern:
			s.trees = append(s.trees, p)
			key, shown = p, w
		case strings.HasPrefix(p, "**/") && !strings.ContainsAny(p[3:], "*?[{\\"):
			s.seqs = append(s.seqs, "/"+p[3:])
			key, shown = p[3:], w[3:]
		case strings.HasPrefix(p, "**/") && strings.HasSuffix(p, "/**") && !strings.ContainsAny(p[3:len(p)-3], "*?[{\\"):
			s.seqs = append(s.seqs, "/"+p[3:len(p)-3])
			key, shown = p[3:len(p)-3], w[3:len(w)-3]
		case strings.HasPrefix(p, "/") || strings.HasPrefix(p, "**/"):
			s.globs = append(s.globs, p)
			key, shown = p, w
		default:
			s.globs = append(s.globs, "**/"+p)
			key, shown = "**/"+p, "**/"+w
		}
		if key != shown {
			if s.shown == nil {
				s.shown = map[string]string{}
			}
			if _, dup := s.shown[key]; !dup {
				s.shown[key] = shown
			}
		}
	}
	s.compileFast()
	return s
}

// match reports whether the absolute, clean path p is covered, and by what
// (the fence as written).
func (s *fenceSet) match(p string) (string, bool) {
	m, ok := s.matchLower(p)
	if ok && s.shown != nil {
		if w, found := s.shown[m]; found {
			m = w
		}
	}
	return m, ok
}

// matchLower is match, naming the fence lower-cased.
func (s *fenceSet) matchLower(p string) (string, bool) {
	if p == "" {
		return "", false
	}
	lp := p
	if s.allFast {
		m, ok, why := s.matchFast(lp)
		if why == fastUpper {
			lp = strings.ToLower(p)
			m, ok, why = s.matchFast(lp)
		}
		if why == fastDone {
			return m, ok
		}
	}
	return s.matchReference(foldPath(p))
}

func (s *fenceSet) excepted(base string) bool {
	for _, e := range s.except {
		if ok, _ := path.Match(e, base); ok {
			return true
		}
	}
	return false
}

// names returns the last component of every tree and sequence: the names
// a glob or a dynamic word must not be able to spell.
func (s *fenceSet) names() []string {
	var out []string
	for _, t := range s.trees {
		out = append(out, path.Base(t))
	}
	for _, q := range s.seqs {
		for _, c := range strings.Split(q[1:], "/") {
			out = append(out, c)
		}
	}
	return out
}

// hasSeq reports whether the path p holds the component sequence q
// ("/a/b"): "a/b" as whole components, at any depth.
func hasSeq(p, q string) bool {
	// A relative p may start with the sequence.
	if !strings.HasPrefix(p, "/") && strings.HasPrefix(p, q[1:]) && (len(p) == len(q)-1 || p[len(q)-1] == '/') {
		return true
	}
	for from := 0; from < len(p); {
		i := strings.Index(p[from:], q)
		if i < 0 {
			return false
		}
		end := from + i + len(q)
		if end == len(p) || p[end] == '/' {
			return true
		}
		from += i + 1
	}
	return false
}
