package harness

import (
	"os"
	"path/filepath"

	"github.com/statewright-go/statewright/policy"
)

// HostEnv says where a sandbox profile's paths are on this host, for a
// project and a store file ("" or a URL for none): the home directory,
// statewright's configuration directory (operator token, tokens file,
// pinned ids: hidden whole), the user's Go module cache and proxy. The
// session and call directories are the caller's.
func HostEnv(projectDir, store string) policy.SandboxEnv {
	env := policy.SandboxEnv{ProjectDir: projectDir, Store: store, GoProxy: os.Getenv("GOPROXY")}
	home, _ := os.UserHomeDir()
	env.Home = home
	if dir := os.Getenv("XDG_CONFIG_HOME"); dir != "" && filepath.IsAbs(dir) {
		env.Secrets = append(env.Secrets, filepath.Join(dir, "statewright"))
	}
	// Sockets of services that start programs outside the sandbox (the
	// user's D-Bus session bus and systemd --user, Wayland, gpg-agent and
	// ssh-agent in the runtime directory; Docker, Podman, containerd and
	// the system bus): a sandboxed command must not reach them, since a
	// program started there runs unconfined (systemd-run --user, docker
	// run -v /:/host). A read-only mount does not stop connect(2), so they
	// are hidden.
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" && filepath.IsAbs(dir) {
		env.Secrets = append(env.Secrets, dir)
	}
	env.Secrets = append(env.Secrets, serviceSockets...)
	env.GoModCache = os.Getenv("GOMODCACHE")
	if env.GoModCache == "" {
		gopath := os.Getenv("GOPATH")
		if gopath == "" && home != "" {
			gopath = filepath.Join(home, "go")
		}
		if gopath != "" {
			env.GoModCache = filepath.Join(filepath.SplitList(gopath)[0], "pkg", "mod")
		}
	}
	return env
}

// serviceSockets are the system's service sockets and runtime directories
// hidden from sandboxed commands (HostEnv).
var serviceSockets = []string{
	"/run/user", "/run/dbus", "/var/run/dbus", "/run/docker.sock", "/var/run/docker.sock",
	"/run/podman", "/run/containerd", "/run/snapd.socket", "/run/systemd/private",
}
