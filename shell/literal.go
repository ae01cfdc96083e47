package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// LiteralArgv returns the argument vector of src when src is one simple
// command that bash would run by executing a program with exactly these
// words: a single command, not in the background, negated, piped or
// timed, with no assignment and no redirection, whose words are all
// literal after quote removal (plain text, '…' and "…" without
// expansions or backslashes; no $, `, glob characters, braces, a tilde or
// a backslash outside quotes), and whose name is not a bash builtin or
// keyword. ok is false for anything else, and whenever it is unsure: the
// caller then runs src with bash (docs/sandbox.md, "Direct exec").
//
// Where bash finds the program (PATH, functions from the environment) is
// the caller's: LiteralArgv decides only what the words are.
func LiteralArgv(src string) (argv []string, ok bool) {
	// mvdan.cc/sh reads a carriage return as a blank; bash as a letter.
	if strings.ContainsAny(src, "\x00\r") {
		return nil, false
	}
	f, err := parse(src)
	if err != nil || len(f.Stmts) != 1 {
		return nil, false
	}
	return literalCall(f.Stmts[0])
}

// LiteralPipeline returns the argument vectors of src's elements when src
// is one pipeline (`a | b | c`, not `|&`) of two or more elements, each
// of which LiteralArgv would accept on its own: no negation, background,
// `time`, assignment or redirection anywhere, every word literal, no
// builtin or keyword. A src that LiteralArgv accepts gives its one
// vector. ok is false for anything else, and whenever it is unsure: the
// caller then runs src with bash (docs/sandbox.md, "Direct exec of
// literal pipelines").
func LiteralPipeline(src string) (elems [][]string, ok bool) {
	if strings.ContainsAny(src, "\x00\r") {
		return nil, false
	}
	f, err := parse(src)
	if err != nil || len(f.Stmts) != 1 {
		return nil, false
	}
	return literalPipe(f.Stmts[0], nil)
}

// literalPipe appends the elements of the pipeline s to elems.
func literalPipe(s *syntax.Stmt, elems [][]string) ([][]string, bool) {
	if b, isBin := s.Cmd.(*syntax.BinaryCmd); isBin {
		if b.Op != syntax.Pipe || s.Negated || s.Background || s.Coprocess || s.Disown || len(s.Redirs) > 0 {
			return nil, false
		}
		elems, ok := literalPipe(b.X, elems)
		if !ok {
			return nil, false
		}
		return literalPipe(b.Y, elems)
	}
	argv, ok := literalCall(s)
	if !ok {
		return nil, false
	}
	return append(elems, argv), true
}

// literalCall is LiteralArgv's test of one statement.
func literalCall(s *syntax.Stmt) (argv []string, ok bool) {
	if s.Negated || s.Background || s.Coprocess || s.Disown || len(s.Redirs) > 0 {
		return nil, false
	}
	call, isCall := s.Cmd.(*syntax.CallExpr)
	if !isCall || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return nil, false
	}
	argv = make([]string, 0, len(call.Args))
	for _, w := range call.Args {
		v, ok := LiteralWord(w)
		if !ok {
			return nil, false
		}
		argv = append(argv, v)
	}
	if bashBuiltins[argv[0]] || bashKeywords[argv[0]] {
		return nil, false
	}
	return argv, true
}

// LiteralWord returns the word after quote removal when nothing in it
// expands: plain text and quotes only, no glob, brace, tilde, parameter,
// command or arithmetic expansion, no ANSI-C or locale quoting.
func LiteralWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			// Unquoted: glob characters, brace expansion, tildes (also
			// after = and :), backslashes and a lone $ are bash's.
			if strings.ContainsAny(p.Value, "*?[]{}~\\$`!\n") {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, q := range p.Parts {
				l, isLit := q.(*syntax.Lit)
				if !isLit || strings.ContainsAny(l.Value, "\\$`") {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}
