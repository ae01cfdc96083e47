// Package shell analyses shell commands statically with mvdan.cc/sh: it finds
// every simple command (through pipelines, lists, subshells, substitutions,
// wrappers and nested `bash -c` strings), classifies what each does, and
// reports the paths it writes and reads. It runs nothing.
package shell

import (
	"encoding/json"
	"fmt"
	"strings"
)

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

// ClassByName returns the class with the given name ("read", "git-write",
// ...) and whether it exists.
func ClassByName(name string) (Class, bool) {
	for _, cn := range classNames {
		if cn.name == name {
			return cn.c, true
		}
	}
	return 0, false
}

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
	// Negated is true for commands in a `! cmd` statement: the line's exit
	// status is the inverse of theirs.
	Negated bool `json:"negated,omitempty"`

	// Words is the simple command's complete argv as written, wrappers
	// included (`timeout 60 pytest -x` gives three words before pytest's
	// own). Use it, through HasPrefix, for allowed_commands matching.
	Words []Word `json:"words,omitempty"`
	// Assigns lists the NAME=value prefixes of the simple command, as
	// written (`FOO=1 make` gives ["FOO=1"]).
	Assigns []string `json:"assigns,omitempty"`
	// Subcommand is the first operand of programs that have verbs (git,
	// npm, cargo, go, statewright, ...), after their global options; "" if
	// none or dynamic.
	Subcommand string `json:"subcommand,omitempty"`
	// Source is the source text of the simple command this Command came
	// from (for a nested command, the text inside the nested string).
	Source string `json:"source,omitempty"`
	// Dir is the directory an earlier `cd` of the line moved the command
	// to (absolute, or relative to the call's working directory; "" for
	// none); DirUnknown is true when a cd could not be followed.
	Dir        string `json:"-"`
	DirUnknown bool   `json:"-"`

	// namesOnly: a search that lists names without reading what it finds
	// (find without -exec): its roots are not read recursively.
	namesOnly bool
	// links are the links the command makes (ln), followed by later
	// commands' targets.
	links []link
}

// Word is one word of a simple command. Literal is false when the word
// depends on expansion (a variable, a substitution, a glob, brace
// expansion); Text then holds the source text.
type Word struct {
	Text    string `json:"text"`
	Literal bool   `json:"literal"`
}

// HasPrefix reports whether the command's words, as written, start with
// prefix, word by word. A non-literal word never matches, so `cargo test
// $(x)` does not match "cargo test $(x)". Assignment prefixes are not words:
// policy that must refuse `LD_PRELOAD=x pytest` checks Assigns.
func (c *Command) HasPrefix(prefix []string) bool {
	if len(prefix) == 0 || len(prefix) > len(c.Words) {
		return false
	}
	for i, p := range prefix {
		if !c.Words[i].Literal || c.Words[i].Text != p {
			return false
		}
	}
	return true
}

// MarshalJSON adds the class names ("classes") to the JSON form.
func (c Command) MarshalJSON() ([]byte, error) {
	type plain Command
	return json.Marshal(struct {
		plain
		Classes []string `json:"classes"`
	}{plain(c), nonNil(c.Classes.Names())})
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
	// IndirectEnv is true when the line reads variables whose names are
	// computed (${!X}, ${!prefix*}): any variable may be read.
	IndirectEnv bool `json:"indirect_env,omitempty"`
}

// MarshalJSON adds the class names ("classes") to the JSON form.
func (a Analysis) MarshalJSON() ([]byte, error) {
	type plain Analysis
	return json.Marshal(struct {
		plain
		Classes []string `json:"classes"`
	}{plain(a), nonNil(a.Classes.Names())})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ParseError reports a command line that does not parse. Policy denies it.
type ParseError struct {
	Line, Col int
	Msg       string
}

// Error formats the error with its line and column.
func (e *ParseError) Error() string {
	return fmt.Sprintf("shell parse error at %d:%d: %s", e.Line, e.Col, e.Msg)
}
