package sandbox

import (
	"fmt"
	"os"
	"strings"
)

// Unsupported says why there is no OS sandbox on goos, and what that
// means ("" on Linux, where bubblewrap may provide one): what doctor and
// the agent runner report on macOS and Windows (docs/threat-model.md, docs/release.md).
func Unsupported(goos string) string {
	if goos == "linux" {
		return ""
	}
	return "no OS sandbox on " + goos + ": statewright's sandbox needs Linux (bubblewrap, user namespaces). " +
		"The static law still decides every call, but code the agent runs is not contained: " +
		"approvals and tokens are not protected from it, and --require-sandbox makes shell calls deny instead"
}

// yamaScopeFile is where Linux's Yama module publishes its ptrace scope.
const yamaScopeFile = "/proc/sys/kernel/yama/ptrace_scope"

// FastPathRefusal says why this machine refuses the sandbox's fast path
// (docs/sandbox.md, "The fast path"), or "" when nothing known refuses it.
// The keeper takes the shell's stdio with pidfd_getfd, which needs the
// kernel's ptrace-attach check; Yama's ptrace_scope 1 or more refuses it to
// a keeper that is not the shell's ancestor, so every command takes the
// launcher's slower path instead (safe, not fast).
func FastPathRefusal() string {
	b, err := os.ReadFile(yamaScopeFile)
	if err != nil {
		return "" // no Yama (or not Linux): nothing refuses it
	}
	return yamaRefusal(string(b))
}

// yamaRefusal reads a ptrace_scope file's contents.
func yamaRefusal(scope string) string {
	scope = strings.TrimSpace(scope)
	if scope == "0" {
		return ""
	}
	return fmt.Sprintf("Yama's ptrace_scope is %s (%s), which refuses the keeper's pidfd_getfd: every sandboxed command takes the launcher's path, as safe and slower (bench/sandbox.txt)", scope, yamaScopeFile)
}
