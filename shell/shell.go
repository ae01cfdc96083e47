// Package shell analyses shell commands statically with mvdan.cc/sh: it finds
// every simple command (through pipelines, lists, subshells, substitutions,
// wrappers and nested `bash -c` strings), classifies what each does, and
// reports the paths it writes and reads. It runs nothing.
package shell

import "strings"

// Class is one kind of operation a command performs.
type Class uint32

// Operation classes. A command may have several.
const (
	ClassRead           Class = 1 << iota // reads files or prints (cat, ls, head)
	ClassSearch                           // searches (grep, rg, find without actions)
	ClassWrite                            // creates or overwrites files (redirects, cp, tee)
	ClassModify                           // edits files in place (sed -i, chmod, mv)
	ClassDelete                           // deletes or destroys (rm, shred, dd, truncate)
	ClassNetwork                          // talks to the network (curl, wget, ssh)
	ClassGitRead                          // git status/log/diff/show/blame
	ClassGitWrite                         // git commit/push/reset/checkout ...
	ClassExec                             // runs code: interpreters, scripts, eval, source, unknown or dynamic programs
	ClassPrivilege                        // sudo, su, doas, chown root ...
	ClassProcess                          // process control: kill, pkill
	ClassPackageInstall                   // npm install, pip install, apt-get install ...
	ClassTest                             // a known test runner (pytest, go test, cargo test, npm test)
	ClassBackground                       // work that outlives the command: &, nohup, setsid, disown
	ClassNestedAgent                      // another coding agent: claude -p, codex exec, ...
	ClassUnknown                          // something the analysis cannot classify
)

var classNames = []struct {
	c    Class
	name string
}{
	{ClassRead, "read"}, {ClassSearch, "search"}, {ClassWrite, "write"}, {ClassModify, "modify"},
	{ClassDelete, "delete"}, {ClassNetwork, "network"}, {ClassGitRead, "git-read"},
	{ClassGitWrite, "git-write"}, {ClassExec, "exec"}, {ClassPrivilege, "privilege"},
	{ClassProcess, "process-control"}, {ClassPackageInstall, "package-install"}, {ClassTest, "test"},
	{ClassBackground, "background"}, {ClassNestedAgent, "nested-agent"}, {ClassUnknown, "unknown"},
}

// Has reports whether c contains every class in o.
func (c Class) Has(o Class) bool { return c&o == o }

// Names returns the class names in c, in declaration order.
func (c Class) Names() []string {
	var out []string
	for _, cn := range classNames {
		if c&cn.c != 0 {
			out = append(out, cn.name)
		}
	}
	return out
}

// String joins the class names with "|".
func (c Class) String() string { return strings.Join(c.Names(), "|") }

// Target is a path a command writes or reads. Dynamic is true when the path
// depends on expansion (a variable, a glob, a substitution) and cannot be
// known statically; Path then holds the source text.
type Target struct {
	Path    string `json:"path"`
	Dynamic bool   `json:"dynamic,omitempty"`
}

// Command is one simple command after unwrapping.
type Command struct {
	// Argv is the command's words after unwrapping wrappers (env, sudo,
	// timeout, ...). Words that are not literal keep their source text.
	Argv []string `json:"argv"`
	// Program is the base name of Argv[0], or "" when it is dynamic.
	Program string `json:"program"`
	// Wrappers lists the wrappers that were peeled off, outermost first.
	Wrappers []string `json:"wrappers,omitempty"`
	// Classes is what this command does.
	Classes Class `json:"-"`
	// Writes and Reads are the paths touched, including redirections.
	Writes []Target `json:"writes,omitempty"`
	Reads  []Target `json:"reads,omitempty"`
	// Dynamic is true when the program name itself is not a literal.
	Dynamic bool `json:"dynamic,omitempty"`
	// Nested is true for commands found inside a `bash -c`/`eval` string.
	Nested bool `json:"nested,omitempty"`
}

// Analysis is the result of analysing one command line.
type Analysis struct {
	// Commands lists every simple command found, in source order.
	Commands []Command `json:"commands"`
	// Classes is the union of every command's classes.
	Classes Class `json:"-"`
	// Writes and Reads are the union of the commands' targets.
	Writes []Target `json:"writes,omitempty"`
	Reads  []Target `json:"reads,omitempty"`
	// EnvRefs lists environment variables the line references ($X, ${X},
	// printenv X), sorted and without duplicates.
	EnvRefs []string `json:"env_refs,omitempty"`
	// DumpsEnv is true when the line prints the whole environment (env,
	// printenv, export -p, set, declare -x).
	DumpsEnv bool `json:"dumps_env,omitempty"`
}

// ParseError reports a command line that does not parse. Policy denies it.
type ParseError struct {
	Line, Col int
	Msg       string
}

func (e *ParseError) Error() string { return "shell parse error: " + e.Msg }
