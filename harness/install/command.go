package install

import (
	"regexp"
	"strings"
)

// Shq quotes s for a POSIX shell.
func Shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// HookArgs returns the flags every hook command carries: the store, its
// id, the deadline and the operator's choices.
func (p *Plan) HookArgs() []string {
	args := []string{"--store", p.Store, "--store-id", p.StoreID, "--deadline", p.Deadline.String()}
	if p.RequireWorkflow {
		args = append(args, "--require-workflow")
	}
	if p.DefaultWorkflow != "" {
		args = append(args, "--default-workflow", p.DefaultWorkflow)
	}
	if p.AuditOnly {
		args = append(args, "--audit-only")
	}
	if p.RequireSandbox {
		args = append(args, "--require-sandbox")
	} else if p.Sandbox {
		args = append(args, "--sandbox")
	}
	if p.ScopeToProject {
		args = append(args, "--project", p.Project)
	}
	return args
}

// HookCommand returns the shell command line of the hook for event (its
// command-line spelling): the thin client (HookBinary) by absolute path,
// "hook HARNESS EVENT", the flags. A gate (an event whose hook can block the call) ends
// in a wrapper that turns whatever makes the hook fail (exit 127 for a
// missing binary, a signal, a crash) into exit 2, the harness's deny; a
// deny the hook gave itself passes through without a second message.
// Other events have no wrapper: exit 2 would erase a prompt or keep a Stop
// looping, so they fail open. label names the event in the wrapper's
// message.
func (p *Plan) HookCommand(event string, gate bool, label string) string {
	var b strings.Builder
	b.WriteString(Shq(p.hookBinary()) + " hook " + p.Harness + " " + event)
	b.WriteString(" --store " + Shq(p.Store) + " --store-id " + Shq(p.StoreID) + " --deadline " + p.Deadline.String())
	if p.RequireWorkflow {
		b.WriteString(" --require-workflow")
	}
	if p.DefaultWorkflow != "" {
		b.WriteString(" --default-workflow " + Shq(p.DefaultWorkflow))
	}
	if p.AuditOnly {
		b.WriteString(" --audit-only")
	}
	if p.RequireSandbox {
		b.WriteString(" --require-sandbox")
	} else if p.Sandbox {
		b.WriteString(" --sandbox")
	}
	if p.ScopeToProject {
		b.WriteString(" --project " + Shq(p.Project))
	}
	if gate {
		b.WriteString(` || { c=$?; [ "$c" -eq 2 ] || echo "statewright: the ` + label +
			` hook failed (exit $c: missing binary, crash or signal); the call is denied (fail closed)" >&2; exit 2; }`)
	}
	return b.String()
}

// IsOurHook reports whether a hook command line is one init wrote for
// this harness (by any binary path or name): the quoted binary, then
// "hook HARNESS EVENT".
func (p *Plan) IsOurHook(command string) bool { return IsHookOf(p.Harness, command) }

// IsHookOf reports whether a hook command line is one init wrote for the
// named harness.
func IsHookOf(harness, command string) bool {
	re := regexp.MustCompile(`^'[^']*' hook ` + regexp.QuoteMeta(harness) + ` [a-z-]+( |$)`)
	return re.MatchString(command)
}

// hookBinary is what hook commands run: HookBinary, else Binary.
func (p *Plan) hookBinary() string {
	if p.HookBinary != "" {
		return p.HookBinary
	}
	return p.Binary
}

// HookArgv returns the argv prefix of a hook run by a plugin: the thin
// client (or the binary), "hook", the harness.
func (p *Plan) HookArgv() []string { return []string{p.hookBinary(), "hook", p.Harness} }
