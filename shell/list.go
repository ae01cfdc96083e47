package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// ListItem is one pipeline of a list LiteralList accepts.
type ListItem struct {
	// Op joins the item to what comes before it: "" for the first, ";"
	// (also a newline), "&&" or "||".
	Op string
	// Offset is the byte offset in the source where the item starts: the
	// rest of the list from there is src[Offset:] (what a runner that
	// cannot go on hands to bash).
	Offset int
	// Cmds are the pipeline's elements (one for a simple command).
	Cmds []ListCmd
}

// ListCmd is one simple command of a ListItem: a program (or the builtin
// true, false, : or cd) with literal words, and its redirections in
// bash's left-to-right order.
type ListCmd struct {
	Argv   []string
	Redirs []Redir
}

// Redir is one redirection with a literal target.
type Redir struct {
	// Fd is the descriptor redirected: 0, 1 or 2; for "&>" and "&>>"
	// both 1 and 2 (Fd is 1).
	Fd int
	// Op is "<", ">", ">>", ">&" (Target is "0", "1" or "2"), "&>" or
	// "&>>".
	Op string
	// Target is the file (or, for ">&", the descriptor duplicated).
	Target string
}

// ListBuiltins are the builtins a ListCmd may name: true, false and : as
// a pipeline of one (any literal arguments, which they ignore), and cd as
// a pipeline of one with exactly one operand and no redirection.
var ListBuiltins = map[string]bool{"true": true, "false": true, ":": true, "cd": true}

// LiteralList returns the items of src when src is a list of pipelines of
// literal simple commands joined by `&&`, `||`, `;` or newlines, each
// command a program of literal words (as LiteralArgv takes them) or one of
// ListBuiltins, with redirections among `<`, `>`, `>>`, `&>`, `&>>` to a
// literal file and `>&` to 0, 1 or 2, on descriptors 0 to 2. Nothing in
// the background, negated, timed or assigned; no `|&`; no redirection
// target under /dev but /dev/null (bash's own /dev/fd, /dev/tcp …); no
// line continuation. ok is false for anything else, and whenever it is
// unsure: the caller then runs src with bash (docs/sandbox.md, "Direct
// exec of literal lists").
func LiteralList(src string) (items []ListItem, ok bool) {
	// A carriage return is a blank to mvdan.cc/sh and a letter to bash;
	// parse rewrites a source with line continuations, so offsets would
	// not be src's.
	if strings.ContainsAny(src, "\x00\r") || strings.Contains(src, "\\\n") {
		return nil, false
	}
	f, err := parse(src)
	if err != nil || len(f.Stmts) == 0 {
		return nil, false
	}
	for i, s := range f.Stmts {
		op := ";"
		if i == 0 {
			op = ""
		}
		if items, ok = listItems(s, op, items); !ok {
			return nil, false
		}
	}
	return items, true
}

// listItems appends the items of the and-or list s (left-associative in
// bash, and so in the tree: `a && b || c` is `(a && b) || c`) to items,
// the first joined by op.
func listItems(s *syntax.Stmt, op string, items []ListItem) ([]ListItem, bool) {
	if s.Negated || s.Background || s.Coprocess || s.Disown {
		return nil, false
	}
	if b, isBin := s.Cmd.(*syntax.BinaryCmd); isBin && (b.Op == syntax.AndStmt || b.Op == syntax.OrStmt) {
		if len(s.Redirs) > 0 {
			return nil, false
		}
		items, ok := listItems(b.X, op, items)
		if !ok {
			return nil, false
		}
		next := "&&"
		if b.Op == syntax.OrStmt {
			next = "||"
		}
		return listItems(b.Y, next, items)
	}
	cmds, ok := listPipe(s, nil)
	if !ok {
		return nil, false
	}
	if len(cmds) > 1 {
		for _, c := range cmds {
			if ListBuiltins[c.Argv[0]] {
				return nil, false // a builtin in a pipeline runs in a subshell
			}
		}
	}
	if c := cmds[0]; c.Argv[0] == "cd" && (len(c.Argv) != 2 || c.Argv[1] == "" || c.Argv[1][0] == '-' || len(c.Redirs) > 0) {
		return nil, false
	}
	return append(items, ListItem{Op: op, Offset: int(s.Pos().Offset()), Cmds: cmds}), true
}

// listPipe appends the elements of the pipeline s to cmds.
func listPipe(s *syntax.Stmt, cmds []ListCmd) ([]ListCmd, bool) {
	if s.Negated || s.Background || s.Coprocess || s.Disown {
		return nil, false
	}
	if b, isBin := s.Cmd.(*syntax.BinaryCmd); isBin {
		if b.Op != syntax.Pipe || len(s.Redirs) > 0 {
			return nil, false
		}
		cmds, ok := listPipe(b.X, cmds)
		if !ok {
			return nil, false
		}
		return listPipe(b.Y, cmds)
	}
	call, isCall := s.Cmd.(*syntax.CallExpr)
	if !isCall || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return nil, false
	}
	c := ListCmd{Argv: make([]string, 0, len(call.Args))}
	for _, w := range call.Args {
		v, ok := LiteralWord(w)
		if !ok {
			return nil, false
		}
		c.Argv = append(c.Argv, v)
	}
	if name := c.Argv[0]; !ListBuiltins[name] && (bashBuiltins[name] || bashKeywords[name]) {
		return nil, false
	}
	for _, r := range s.Redirs {
		rd, ok := literalRedir(r)
		if !ok {
			return nil, false
		}
		c.Redirs = append(c.Redirs, rd)
	}
	return append(cmds, c), true
}

// literalRedir returns r when it is one LiteralList takes.
func literalRedir(r *syntax.Redirect) (Redir, bool) {
	if r.Hdoc != nil || r.Word == nil {
		return Redir{}, false
	}
	target, ok := LiteralWord(r.Word)
	if !ok || target == "" {
		return Redir{}, false
	}
	rd := Redir{Fd: 1, Target: target}
	switch r.Op {
	case syntax.RdrOut:
		rd.Op = ">"
	case syntax.AppOut:
		rd.Op = ">>"
	case syntax.RdrIn:
		rd.Op, rd.Fd = "<", 0
	case syntax.DplOut:
		rd.Op = ">&"
		if target != "0" && target != "1" && target != "2" {
			return Redir{}, false // >&- closes, >&file is &>file
		}
	case syntax.RdrAll:
		rd.Op = "&>"
	case syntax.AppAll:
		rd.Op = "&>>"
	default:
		return Redir{}, false
	}
	if r.N != nil {
		if rd.Op == "&>" || rd.Op == "&>>" {
			return Redir{}, false
		}
		switch r.N.Value {
		case "0", "1", "2":
			rd.Fd = int(r.N.Value[0] - '0')
		default:
			return Redir{}, false // {var}>f, 3>f
		}
	}
	if rd.Op != ">&" && strings.HasPrefix(target, "/dev/") && target != "/dev/null" {
		return Redir{}, false // bash's /dev/fd/N, /dev/stdin, /dev/tcp/…
	}
	return rd, true
}
