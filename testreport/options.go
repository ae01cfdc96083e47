package testreport

import (
	"strconv"
	"strings"

	"github.com/statewright-go/statewright/shell"
)

// This file reads a runner's arguments with the shell package's option
// grammar for that runner (shell/grammars.go): the same parse the shell
// analysis makes, and the one the runner's own parser makes (go's flag
// package, argparse's clustered short options, yargs' camelCase and
// kebab-case spellings, getopt's "--opt=value"). A narrowing cannot hide
// in a spelling an ad-hoc scan would miss (-kfoo, -vk foo, --test.run,
// --test-name-pattern=x, --testNamePattern x).

// parseArgs parses args, the words after the runner (and its
// subcommand), with the named grammar.
func parseArgs(grammar string, args []string) *shell.ParsedArgs {
	p, ok := shell.ParseOptions(grammar, args)
	if !ok {
		panic("testreport: no option grammar " + grammar)
	}
	return p
}

// optionArg returns the value kind of the grammar's option with canonical
// name name.
func optionArg(grammar, name string) shell.ArgKind {
	g, ok := shell.GrammarFor(grammar)
	if !ok {
		return shell.NoArg
	}
	kind := shell.NoArg
	for _, o := range g.Opts {
		if len(o.Names) > 0 && o.Names[0] == name && o.Arg > kind {
			kind = o.Arg
		}
	}
	return kind
}

// spelled is how a message names an option: as written, without its
// attached value ("--testNamePattern", "-t", "-run").
func spelled(o shell.ParsedOption) string {
	if strings.HasPrefix(o.As, "--") || len(o.Name) != 1 || !o.Known {
		if s, _, ok := strings.Cut(o.As, "="); ok {
			return s
		}
		if !strings.HasPrefix(o.As, "--") && len(o.As) > 2 && len(o.Name) == 1 {
			return "-" + o.Name // a cluster or a glued value: -kfoo, -vk
		}
		return o.As
	}
	return "-" + o.Name
}

// unknownOption records an option the runner's grammar does not know. The
// runner may read it as a test filter (a plugin's option, a test binary's
// own flag), so the run counts as narrowed: fail closed.
func (p *Plan) unknownOption(where string, o shell.ParsedOption) {
	p.narrow("%s %s (an option statewright does not know; it may select tests)", where, o.As)
}

// optionalValueTaken records an option with an optional value that took
// the next word as its value (jest's --bail 3): when the word is not a
// number or a boolean, the runner may have read it as a test path
// instead, so the run counts as narrowed.
func (p *Plan) optionalValueTaken(grammar, where string, o shell.ParsedOption) {
	if !o.Known || !o.HasValue || o.Value.Index == o.Index || optionArg(grammar, o.Name) != shell.OptionalArg {
		return
	}
	v := o.Value.Value
	if _, err := strconv.ParseFloat(v, 64); err == nil || v == "true" || v == "false" {
		return
	}
	p.narrow("%s %s %s (the runner may read %s as a test path)", where, spelled(o), quoteArg(v), quoteArg(v))
}

// flagOn reports whether a boolean option is set: given without a value,
// or with one other than false/0.
func flagOn(o shell.ParsedOption) bool {
	return !o.HasValue || (o.Value.Value != "false" && o.Value.Value != "0")
}

// operands returns the values of the parsed operands.
func operands(p *shell.ParsedArgs) []string {
	out := make([]string, len(p.Operands))
	for i, a := range p.Operands {
		out[i] = a.Value
	}
	return out
}

// literalWords makes args words for a grammar's Parse.
func literalWords(args []string) []shell.Word {
	out := make([]shell.Word, len(args))
	for i, a := range args {
		out[i] = shell.Word{Text: a, Literal: true}
	}
	return out
}
