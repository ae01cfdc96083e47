package shell

import (
	"errors"
	"path"
	"sort"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// Bounds of the analysis.
const (
	// MaxInputSize is the largest command line Analyze accepts (1 MiB).
	MaxInputSize = 1 << 20
	// MaxNesting is how many `bash -c`/`eval` strings deep Analyze follows.
	// Deeper strings are not parsed; their command is classified exec and
	// unknown.
	MaxNesting = 8
	// maxParenDepth bounds how deeply brackets may nest in the source
	// (counted without regard to quoting); the parser's time grows quickly
	// with nesting, so deeper input is refused before parsing.
	maxParenDepth = 128
	// maxKeywordDepth bounds compound keywords (if, while, for, ...) left
	// open in the source. It is generous because here-document bodies (a
	// Python file written with cat <<EOF) hold such words without fi/done.
	maxKeywordDepth = 1000
	// maxStructDepth bounds the walk of nested compound commands and
	// substitutions; deeper code is classified exec and unknown.
	maxStructDepth = 200
)

var parserPool = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangBash))
}}

var commentParserPool = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true))
}}

// parse parses src as bash with a pooled parser.
func parse(src string) (*syntax.File, error) {
	if (strings.Contains(src, "\\\n") || strings.Contains(src, "\\\r\n")) && strings.Contains(src, "#") {
		src = bashComments(src)
	}
	p := parserPool.Get().(*syntax.Parser)
	defer parserPool.Put(p)
	f, err := p.Parse(strings.NewReader(src), "")
	if err != nil {
		return nil, toParseError(err)
	}
	return f, nil
}

// bashComments makes comments end where bash ends them. mvdan.cc/sh joins
// the next line into a comment that ends in a backslash (a line
// continuation); bash ends every comment at the newline, so the next line
// runs. The backslashes that end comments are replaced by spaces (inert in
// a comment) until the parser sees the same comments bash does. Offsets
// and line numbers are unchanged.
func bashComments(src string) string {
	p := commentParserPool.Get().(*syntax.Parser)
	defer commentParserPool.Put(p)
	for round := 0; round < 64; round++ {
		f, err := p.Parse(strings.NewReader(src), "")
		if err != nil {
			return src
		}
		b := []byte(nil)
		syntax.Walk(f, func(n syntax.Node) bool {
			c, ok := n.(*syntax.Comment)
			if !ok || !strings.Contains(c.Text, "\n") {
				return true
			}
			start := int(c.Pos().Offset())
			if start < 0 || start >= len(src) {
				return true
			}
			// the first newline after the # ends the comment in bash
			nl := strings.IndexByte(src[start:], '\n')
			if nl > 0 && src[start+nl-1] == '\r' {
				nl-- // \ CR LF: mvdan.cc/sh continues the line too
			}
			if nl <= 0 || src[start+nl-1] != '\\' {
				return true
			}
			if b == nil {
				b = []byte(src)
			}
			b[start+nl-1] = ' '
			return true
		})
		if b == nil {
			return src
		}
		src = string(b)
	}
	return src
}

func toParseError(err error) *ParseError {
	var pe syntax.ParseError
	if errors.As(err, &pe) {
		return &ParseError{Line: int(pe.Pos.Line()), Col: int(pe.Pos.Col()), Msg: pe.Text}
	}
	var le syntax.LangError
	if errors.As(err, &le) {
		return &ParseError{Line: int(le.Pos.Line()), Col: int(le.Pos.Col()), Msg: le.Feature + " is not supported in bash"}
	}
	return &ParseError{Line: 1, Col: 1, Msg: err.Error()}
}

// Analyze parses src as bash and classifies every command in it. A line that
// does not parse returns a *ParseError; callers must deny it. Input larger
// than MaxInputSize is refused with a *ParseError too. Analyze is pure: it
// reads no files, no environment and runs nothing.
func Analyze(src string) (*Analysis, error) {
	if len(src) > MaxInputSize {
		return nil, &ParseError{Line: 1, Col: 1, Msg: "command is larger than 1 MiB"}
	}
	if i := strings.IndexByte(src, 0); i >= 0 {
		line := 1 + strings.Count(src[:i], "\n")
		return nil, &ParseError{Line: line, Col: i - strings.LastIndexByte(src[:i], '\n'), Msg: "NUL byte in command"}
	}
	if line, col, deep := tooNested(src); deep {
		return nil, &ParseError{Line: line, Col: col, Msg: "brackets or compound commands nested too deeply"}
	}
	f, err := parse(src)
	if err != nil {
		return nil, err
	}
	a := &Analysis{Commands: []Command{}}
	w := &walker{a: a, src: src, file: f, env: map[string]struct{}{}, funcs: map[string]bool{}, ev: &evalState{assigned: map[string]bool{}}}
	w.a.Commands = make([]Command, 0, min(len(src)/24+2, 4096)) // about one command per 24 bytes
	w.stmts(f.Stmts)
	w.finish()
	return a, nil
}

// walker walks one parsed source; nested `bash -c` strings get their own
// walker sharing the Analysis.
type walker struct {
	a      *Analysis
	src    string
	file   *syntax.File
	outer  *walker         // the walker of the line a nested script came from
	fds    map[string]bool // descriptors the source opens (3>f), built on first use
	nested bool
	level  int // bash -c nesting level
	depth  int // structural depth
	env    map[string]struct{}
	funcs  map[string]bool
	cwd    string // directory prefix after a literal cd ("" = unchanged)
	cwdDyn bool   // a cd we cannot follow happened
	cond   int    // > 0 inside a conditional or loop body
	ev     *evalState

	nestedCwd    string // the directory a nested script ended in
	nestedCwdDyn bool

	// exportedTestPath: PYTHONPATH (or NODE_PATH, ...) was set for the
	// commands that follow
	exportedTestPath bool
	// pipeWords are the words a literal echo or printf writes into the
	// pipe the next command reads (xargs makes them arguments)
	pipeWords []string
}

// evalState records, across a script and its nested scripts, whether
// variables hold data the script does not spell out (command output, read,
// positional parameters) and whether bash evaluates a variable's value as
// code: arithmetic and subscripts expand $(...) inside values
// (x='a[$(rm f)]'; echo $((x)) runs rm), as do ${x@P} and ${!x}.
type evalState struct {
	tainted, evaluates bool
	// assigned are the variables the line assigns; a variable evaluated
	// as code that the line does not assign may hold anything an earlier
	// command left in a persistent shell (export x='a[$(cmd)]').
	assigned map[string]bool
}

// specialVars are set by bash itself, never to text that runs code.
var specialVars = map[string]bool{
	"RANDOM": true, "SRANDOM": true, "SECONDS": true, "LINENO": true, "BASHPID": true, "EPOCHSECONDS": true,
	"EPOCHREALTIME": true, "PPID": true, "UID": true, "EUID": true, "COLUMNS": true, "LINES": true, "OPTIND": true,
	"HISTCMD": true, "BASH_SUBSHELL": true, "SHLVL": true,
}

// outsideVar records that a variable the line did not assign is evaluated
// as code.
func (w *walker) outsideVar(name string) {
	name, _, _ = strings.Cut(name, "[")
	if isName(name) && !w.ev.assigned[name] && !specialVars[name] {
		w.ev.tainted = true
	}
}

// injects reports whether s, evaluated as arithmetic, a subscript or a
// prompt, runs a command.
func injects(s string) bool {
	return strings.Contains(s, "$(") || strings.Contains(s, "`")
}

// evalExec records code that bash evaluates out of a string.
func (w *walker) evalExec(n syntax.Node) {
	w.a.Commands = append(w.a.Commands, Command{Argv: []string{}, Classes: ClassExec | ClassUnknown, Nested: w.nested, Source: w.text(n)})
}

// evalWord checks a word that bash evaluates as arithmetic or as a
// (subscripted) variable name.
func (w *walker) evalWord(wd *syntax.Word) {
	if wd == nil {
		return
	}
	v, lit := wordValue(wd)
	if lit {
		if injects(v) {
			w.evalExec(wd)
		} else if strings.Trim(v, "0123456789#+-*/%()<>=!&|^~?:, \t") != "" {
			w.ev.evaluates = true // a name: its value is evaluated in turn
			for _, f := range strings.FieldsFunc(v, func(r rune) bool {
				return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
			}) {
				if isName(f) {
					w.evalVar(f)
				}
			}
		}
		return
	}
	w.evalParams(wd)
	w.ev.evaluates = true
	if outsideData(wd) {
		w.ev.tainted = true
	}
}

// outsideData reports whether a word expands command output or positional
// parameters.
func outsideData(wd *syntax.Word) bool {
	found := false
	syntax.Walk(wd, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			found = true
		case *syntax.ParamExp:
			if x.Param != nil && !isName(x.Param.Value) {
				found = true
			}
		}
		return !found
	})
	return found
}

// assignEval checks an assignment: a literal value that injects is exec,
// a computed value taints.
func (w *walker) assignEval(as *syntax.Assign) {
	if as.Name != nil {
		w.ev.assigned[as.Name.Value] = true
	}
	if as.Index != nil {
		w.arithScan(as.Index)
	}
	vals := []*syntax.Word{as.Value}
	if as.Array != nil {
		for _, e := range as.Array.Elems {
			vals = append(vals, e.Value)
			if e.Index != nil {
				w.arithScan(e.Index)
			}
		}
	}
	for _, v := range vals {
		if v == nil {
			continue
		}
		if s, lit := wordValue(v); lit {
			if injects(s) {
				w.evalExec(v)
			}
		} else {
			w.ev.tainted = true
		}
	}
}

// arithScan checks every operand of an arithmetic expression.
func (w *walker) arithScan(x syntax.ArithmExpr) { arithWords(x, w.evalWord) }

// arithWords calls leaf for every word operand of an arithmetic expression.
func arithWords(x syntax.ArithmExpr, leaf func(*syntax.Word)) {
	switch t := x.(type) {
	case *syntax.BinaryArithm:
		arithWords(t.X, leaf)
		arithWords(t.Y, leaf)
	case *syntax.UnaryArithm:
		arithWords(t.X, leaf)
	case *syntax.ParenArithm:
		arithWords(t.X, leaf)
	case *syntax.FlagsArithm:
		arithWords(t.X, leaf)
	case *syntax.Word:
		leaf(t)
	}
}

func (w *walker) finish() {
	a := w.a
	if w.ev.tainted && w.ev.evaluates {
		w.a.Commands = append(w.a.Commands, Command{Argv: []string{}, Classes: ClassExec | ClassUnknown, Source: w.src})
	}
	followLinks(a.Commands)
	var seenW, seenR map[Target]bool
	for i := range a.Commands {
		c := &a.Commands[i]
		a.Classes |= c.Classes
		for _, t := range c.Writes {
			a.Writes, seenW = addTarget(a.Writes, seenW, t)
		}
		recursive := c.Classes&ClassSearch != 0 && !c.namesOnly || recursiveReaders[c.Program] || c.Program == "git" && c.Subcommand == "grep"
		for _, t := range c.Reads {
			a.Reads, seenR = addTarget(a.Reads, seenR, t)
			if ReadsEnvironment(t.Path) || recursive && ReadsEnvironmentTree(t.Path) {
				a.DumpsEnv = true
			}
		}
	}
	for k := range w.env {
		a.EnvRefs = append(a.EnvRefs, k)
	}
	sort.Strings(a.EnvRefs)
}

// addTarget appends t unless present; it scans short lists and switches to
// a set for long ones.
func addTarget(list []Target, seen map[Target]bool, t Target) ([]Target, map[Target]bool) {
	if seen == nil && len(list) < 16 {
		for _, x := range list {
			if x == t {
				return list, nil
			}
		}
		return append(list, t), nil
	}
	if seen == nil {
		seen = make(map[Target]bool, 2*len(list))
		for _, x := range list {
			seen[x] = true
		}
	}
	if seen[t] {
		return list, seen
	}
	seen[t] = true
	return append(list, t), seen
}

// recursiveReaders read whole trees given as operands.
var recursiveReaders = map[string]bool{"tar": true, "cp": true, "zip": true, "rsync": true, "cpio": true, "7z": true, "scp": true}

func (w *walker) text(n syntax.Node) string {
	s, e := int(n.Pos().Offset()), int(n.End().Offset())
	if s < 0 || e > len(w.src) || s > e {
		return ""
	}
	return w.src[s:e]
}

func (w *walker) stmts(list []*syntax.Stmt) {
	for _, s := range list {
		w.stmt(s)
	}
}

// sub walks statements in a subshell context: a cd inside does not leak.
func (w *walker) sub(list []*syntax.Stmt) {
	cwd, dyn := w.cwd, w.cwdDyn
	w.stmts(list)
	w.cwd, w.cwdDyn = cwd, dyn
}

func (w *walker) tooDeep(n syntax.Node) bool {
	if w.depth < maxStructDepth {
		return false
	}
	w.a.Commands = append(w.a.Commands, Command{
		Argv: []string{}, Classes: ClassExec | ClassUnknown, Nested: w.nested, Source: w.text(n),
	})
	return true
}

func (w *walker) stmt(s *syntax.Stmt) {
	if w.tooDeep(s) {
		return
	}
	w.depth++
	defer func() { w.depth-- }()
	start := len(w.a.Commands)
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		w.call(c, s)
	case nil:
		w.redirOnly(s)
	default:
		w.compound(s.Cmd)
		w.applyRedirs(s, start, len(w.a.Commands))
	}
	if s.Background || s.Coprocess || s.Disown {
		for i := start; i < len(w.a.Commands); i++ {
			w.a.Commands[i].Classes |= ClassBackground
		}
	}
	if s.Negated {
		for i := start; i < len(w.a.Commands); i++ {
			w.a.Commands[i].Negated = true
		}
	}
}

// redirOnly handles a statement without a command (`> f`).
func (w *walker) redirOnly(s *syntax.Stmt) {
	i := len(w.a.Commands)
	w.a.Commands = append(w.a.Commands, Command{Argv: []string{}, Nested: w.nested, Source: w.text(s)})
	w.applyRedirs(s, i, i+1)
}

func (w *walker) compound(cmd syntax.Command) {
	switch c := cmd.(type) {
	case *syntax.Subshell:
		w.sub(c.Stmts)
	case *syntax.Block:
		w.stmts(c.Stmts)
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.Pipe, syntax.PipeAll:
			w.sub([]*syntax.Stmt{c.X})
			prev := w.pipeWords
			w.pipeWords = echoedWords(c.X)
			w.sub([]*syntax.Stmt{c.Y})
			w.pipeWords = prev
		case syntax.AndStmt:
			w.stmt(c.X)
			w.stmt(c.Y)
		default: // ||
			w.stmt(c.X)
			w.cond++
			w.stmt(c.Y)
			w.cond--
		}
	case *syntax.IfClause:
		w.cond++
		for ic := c; ic != nil; ic = ic.Else {
			w.stmts(ic.Cond)
			w.stmts(ic.Then)
		}
		w.cond--
	case *syntax.WhileClause:
		w.cond++
		w.stmts(c.Cond)
		w.stmts(c.Do)
		w.cond--
	case *syntax.ForClause:
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			if l.Name != nil {
				w.ev.assigned[l.Name.Value] = true
			}
			for _, wd := range l.Items {
				w.word(wd)
				if !plainWord(wd) {
					w.ev.tainted = true
				}
			}
		case *syntax.CStyleLoop:
			w.arithAssigns(l.Init)
			w.arith(l.Init)
			w.arith(l.Cond)
			w.arith(l.Post)
		}
		w.cond++
		w.stmts(c.Do)
		w.cond--
	case *syntax.CaseClause:
		w.word(c.Word)
		w.cond++
		for _, it := range c.Items {
			for _, p := range it.Patterns {
				w.word(p)
			}
			w.stmts(it.Stmts)
		}
		w.cond--
	case *syntax.FuncDecl:
		if c.Name != nil {
			w.funcs[c.Name.Value] = true
			w.shadows(c.Name.Value, c)
		}
		for _, n := range c.Names {
			w.funcs[n.Value] = true
			w.shadows(n.Value, c)
		}
		if c.Body != nil {
			w.cond++
			w.sub([]*syntax.Stmt{c.Body})
			w.cond--
		}
	case *syntax.ArithmCmd:
		w.arithAssigns(c.X)
		w.arithScan(c.X)
		w.arith(c.X)
	case *syntax.LetClause:
		for _, x := range c.Exprs {
			w.arithAssigns(x)
			w.arithScan(x)
			w.arith(x)
		}
	case *syntax.TestClause:
		w.test(c.X)
	case *syntax.DeclClause:
		w.decl(c)
	case *syntax.TimeClause:
		start := len(w.a.Commands)
		if c.Stmt != nil {
			w.stmt(c.Stmt)
		}
		for i := start; i < len(w.a.Commands); i++ {
			w.a.Commands[i].Wrappers = append([]string{"time"}, w.a.Commands[i].Wrappers...)
		}
	case *syntax.CoprocClause:
		start := len(w.a.Commands)
		if c.Stmt != nil {
			w.sub([]*syntax.Stmt{c.Stmt})
		}
		for i := start; i < len(w.a.Commands); i++ {
			w.a.Commands[i].Classes |= ClassBackground
		}
	case *syntax.TestDecl:
		if c.Body != nil {
			w.sub([]*syntax.Stmt{c.Body})
		}
	default:
		w.a.Commands = append(w.a.Commands, Command{Argv: []string{}, Classes: ClassExec | ClassUnknown, Nested: w.nested, Source: w.text(cmd)})
	}
}

// hookFuncs are functions bash itself calls.
var hookFuncs = map[string]bool{"command_not_found_handle": true, "command_not_found_handler": true}

// shadows records a function that takes the name of a program, a builtin
// or one of bash's hook functions. Where the harness keeps one shell for
// the session, the function outlives this command: a later call of that
// name, decided as the program it names, runs the body instead, in
// whatever phase it comes. So defining it is exec.
func (w *walker) shadows(name string, n syntax.Node) {
	_, known := programs()[lookupName(name)]
	_, wrapper := wrappers[name]
	if known || wrapper || hookFuncs[name] {
		w.a.Commands = append(w.a.Commands, Command{Argv: []string{name + "()"}, Program: name,
			Classes: ClassExec, Nested: w.nested, Source: w.text(n)})
	}
}

// test walks a [[ ]] expression for substitutions and variable references.
func (w *walker) test(x syntax.TestExpr) {
	switch t := x.(type) {
	case *syntax.BinaryTest:
		switch t.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			for _, o := range []syntax.TestExpr{t.X, t.Y} {
				if wd, ok := o.(*syntax.Word); ok {
					w.evalWord(wd)
				}
			}
		}
		w.test(t.X)
		w.test(t.Y)
	case *syntax.UnaryTest:
		if t.Op == syntax.TsVarSet {
			if wd, ok := t.X.(*syntax.Word); ok {
				w.evalWord(wd)
				if v, lit := wordValue(wd); lit {
					w.ref(strings.SplitN(v, "[", 2)[0])
				}
			}
		}
		w.test(t.X)
	case *syntax.ParenTest:
		w.test(t.X)
	case *syntax.Word:
		w.word(t)
	}
}

// arith walks an arithmetic expression; bare names in it are variable
// references.
func (w *walker) arith(x syntax.ArithmExpr) { arithWords(x, w.arithOperand) }

// arithOperand records a bare name in arithmetic as a variable reference and
// walks any other word.
func (w *walker) arithOperand(t *syntax.Word) {
	if len(t.Parts) == 1 {
		if l, ok := t.Parts[0].(*syntax.Lit); ok && isName(l.Value) {
			w.ref(l.Value)
			w.evalVar(l.Value)
			return
		}
	}
	w.word(t)
	w.evalParams(t)
}

// arithAssigns marks the variables an arithmetic expression assigns with
// a plain "=" (i=0 in for ((i=0; ...))): their values are the line's own.
func (w *walker) arithAssigns(x syntax.ArithmExpr) {
	switch t := x.(type) {
	case *syntax.BinaryArithm:
		if t.Op == syntax.Assgn {
			if wd, ok := t.X.(*syntax.Word); ok && len(wd.Parts) == 1 {
				if l, ok := wd.Parts[0].(*syntax.Lit); ok && isName(l.Value) && plainArith(t.Y) {
					w.ev.assigned[l.Value] = true
				}
			}
		}
		if t.Op == syntax.Comma {
			w.arithAssigns(t.X)
			w.arithAssigns(t.Y)
		}
	case *syntax.ParenArithm:
		w.arithAssigns(t.X)
	}
}

// plainArith reports whether an arithmetic expression is a literal number.
func plainArith(x syntax.ArithmExpr) bool {
	wd, ok := x.(*syntax.Word)
	if !ok || len(wd.Parts) != 1 {
		return false
	}
	l, ok := wd.Parts[0].(*syntax.Lit)
	return ok && strings.Trim(l.Value, "0123456789") == ""
}

// evalVar records that bash evaluates the value of the named variable as
// arithmetic (whose subscripts run $(...)): a variable the line does not
// assign may hold what an earlier call left in a persistent shell.
func (w *walker) evalVar(name string) {
	if w.ev.assigned[name] || specialVars[name] {
		return
	}
	w.ev.evaluates = true
	w.outsideVar(name)
}

// evalParams applies evalVar to the variables a word evaluated as
// arithmetic expands ($x in $(( $x + 1 ))).
func (w *walker) evalParams(wd *syntax.Word) {
	syntax.Walk(wd, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return false
		case *syntax.ParamExp:
			if x.Param != nil && !x.Excl && x.Exp == nil && x.Repl == nil && x.Slice == nil && !x.Length {
				w.evalVar(x.Param.Value)
			}
		}
		return true
	})
}

func isName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9') {
			continue
		}
		return false
	}
	return true
}

func (w *walker) ref(name string) {
	if isName(name) && name != "_" {
		w.env[name] = struct{}{}
	}
}

// word walks a word for command and process substitutions (which run
// commands) and parameter expansions (which reference variables).
func (w *walker) word(wd *syntax.Word) {
	if wd == nil || plainWord(wd) {
		return
	}
	w.node(wd)
}

// plainWord reports whether a word has no expansion of any kind, so walking
// it would find nothing.
func plainWord(wd *syntax.Word) bool {
	for _, p := range wd.Parts {
		switch x := p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		case *syntax.DblQuoted:
			for _, dp := range x.Parts {
				if _, ok := dp.(*syntax.Lit); !ok {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

func (w *walker) node(n syntax.Node) {
	syntax.Walk(n, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CmdSubst:
			if !w.tooDeep(x) {
				w.depth++
				w.sub(x.Stmts)
				w.depth--
			}
			return false
		case *syntax.ProcSubst:
			if !w.tooDeep(x) {
				w.depth++
				w.sub(x.Stmts)
				w.depth--
			}
			return false
		case *syntax.ArithmExp:
			w.arithScan(x.X)
			w.arith(x.X)
			return false
		case *syntax.ExtGlob:
			if x.Pattern != nil && strings.ContainsAny(x.Pattern.Value, "$`<>") {
				// the parser keeps an extglob's pattern as raw text, but
				// bash (shopt -s extglob) expands $(...) inside it
				w.evalExec(x)
			}
			return false
		case *syntax.ParamExp:
			w.param(x)
		}
		return true
	})
}

func (w *walker) param(p *syntax.ParamExp) {
	if p.Excl || p.Names != 0 {
		w.a.IndirectEnv = true
	}
	if p.Param != nil {
		w.ref(p.Param.Value)
	}
	if p.Index != nil {
		arithNames(p.Index, func(n string) { // substitutions inside are walked by node
			w.ref(n)
			w.evalVar(n) // an indexed array's subscript is arithmetic
		})
		w.arithScan(p.Index)
	}
	if p.Slice != nil {
		w.arithScan(p.Slice.Offset)
		w.arithScan(p.Slice.Length)
	}
	if p.Excl || p.Exp != nil && p.Exp.Op == syntax.OtherParamOps && p.Exp.Word != nil && strings.Contains(p.Exp.Word.Lit(), "P") {
		w.ev.evaluates = true // ${!x} expands the name in x, ${x@P} its prompt escapes
		if p.Param != nil {
			w.outsideVar(p.Param.Value)
		}
	}
}

// arithNames calls fn for every bare name in an arithmetic expression.
func arithNames(x syntax.ArithmExpr, fn func(string)) {
	switch t := x.(type) {
	case *syntax.BinaryArithm:
		arithNames(t.X, fn)
		arithNames(t.Y, fn)
	case *syntax.UnaryArithm:
		arithNames(t.X, fn)
	case *syntax.ParenArithm:
		arithNames(t.X, fn)
	case *syntax.Word:
		if len(t.Parts) == 1 {
			if l, ok := t.Parts[0].(*syntax.Lit); ok && isName(l.Value) {
				fn(l.Value)
			}
		}
	}
}

// applyRedirs classifies the redirections of s and applies them to the
// commands in [from, to).
func (w *walker) applyRedirs(s *syntax.Stmt, from, to int) {
	if len(s.Redirs) == 0 {
		return
	}
	if from == to {
		w.a.Commands = append(w.a.Commands, Command{Argv: []string{}, Nested: w.nested, Source: w.text(s)})
		to++
	}
	var cls Class
	var writes, reads []Target
	for _, r := range s.Redirs {
		c, wt, rt := w.redir(r)
		cls |= c
		writes = append(writes, wt...)
		reads = append(reads, rt...)
	}
	for i := from; i < to; i++ {
		c := &w.a.Commands[i]
		c.Classes |= cls
		c.Writes = append(c.Writes, writes...)
		c.Reads = append(c.Reads, reads...)
	}
	for _, r := range s.Redirs {
		w.word(r.Word)
		if r.Hdoc != nil {
			w.word(r.Hdoc)
		}
	}
}

// harmlessDevice reports whether writing to p writes no file.
func harmlessDevice(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/1", "/dev/fd/2":
		return true
	}
	// Not /dev/stdin nor /dev/fd/0 or /dev/fd/3+: Linux reopens the file
	// behind the descriptor for writing (`echo x < f > /dev/stdin`
	// overwrites f).
	return false
}

// redir classifies one redirection: the classes it adds and its targets.
func (w *walker) redir(r *syntax.Redirect) (Class, []Target, []Target) {
	if r.Word == nil {
		return 0, nil, nil
	}
	if len(r.Word.Parts) == 1 {
		if _, ok := r.Word.Parts[0].(*syntax.ProcSubst); ok {
			return 0, nil, nil // > >(cmd): a pipe to cmd, walked as code
		}
	}
	if v, lit := wordValue(r.Word); lit && (strings.HasPrefix(v, "/dev/tcp/") || strings.HasPrefix(v, "/dev/udp/")) {
		return ClassNetwork, nil, nil // bash opens a socket
	}
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob,
		syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob:
		t := w.target(r.Word)
		if !t.Dynamic && harmlessDevice(t.Path) {
			return 0, nil, nil
		}
		return ClassWrite, []Target{t}, nil
	case syntax.RdrInOut:
		t := w.target(r.Word)
		if !t.Dynamic && harmlessDevice(t.Path) {
			return 0, nil, nil
		}
		return ClassWrite | ClassRead, []Target{t}, []Target{t}
	case syntax.DplOut, syntax.DplIn:
		v, lit := wordValue(r.Word)
		if r.Op == syntax.DplIn && stdOutFd(r) {
			return ClassWrite, []Target{{Path: w.text(r.Word), Dynamic: true}}, nil // 1<&3: /dev/stdout now reopens fd 3's file
		}
		if lit && (v == "-" || strings.Trim(strings.TrimSuffix(v, "-"), "0123456789") == "" && v != "") {
			if fd := strings.TrimSuffix(v, "-"); fd != "" && fd != "0" && fd != "1" && fd != "2" && !w.opens(fd) {
				// >&3 with no 3> in the line: a persistent shell may hold a
				// file (or socket) an earlier call opened on it
				t := Target{Path: "descriptor " + fd + " opened by an earlier call", Dynamic: true}
				if r.Op == syntax.DplIn {
					return ClassRead, nil, []Target{t}
				}
				return ClassWrite, []Target{t}, nil
			}
			return 0, nil, nil // fd duplication or close
		}
		if r.Op == syntax.DplIn {
			return ClassRead, nil, []Target{w.target(r.Word)}
		}
		t := w.target(r.Word)
		if !t.Dynamic && harmlessDevice(t.Path) {
			return 0, nil, nil
		}
		return ClassWrite, []Target{t}, nil
	case syntax.RdrIn:
		t := w.target(r.Word)
		if !t.Dynamic && harmlessDevice(t.Path) {
			return 0, nil, nil
		}
		if stdOutFd(r) {
			return ClassWrite | ClassRead, []Target{t}, []Target{t} // 1<f: a write to /dev/stdout reopens f for writing
		}
		return ClassRead, nil, []Target{t}
	}
	return 0, nil, nil // here-documents and here-strings
}

// opens reports whether the line (or the line a nested script came from)
// opens descriptor fd with a redirection (3>f, 3<f, 3>&1).
func (w *walker) opens(fd string) bool {
	for x := w; x != nil; x = x.outer {
		if x.fds == nil {
			x.fds = map[string]bool{}
			if x.file != nil {
				syntax.Walk(x.file, func(n syntax.Node) bool {
					if r, ok := n.(*syntax.Redirect); ok && r.N != nil {
						x.fds[r.N.Value] = true
					}
					return true
				})
			}
		}
		if x.fds[fd] {
			return true
		}
	}
	return false
}

// stdOutFd reports whether r redirects descriptor 1 or 2, which writes to
// /dev/stdout, /dev/stderr, /dev/fd/1 and /dev/fd/2 reopen.
func stdOutFd(r *syntax.Redirect) bool {
	return r.N != nil && (r.N.Value == "1" || r.N.Value == "2")
}

// target turns a word into a path target, relative to a followed cd.
func (w *walker) target(wd *syntax.Word) Target {
	v, lit := wordValue(wd)
	if !lit {
		return Target{Path: w.text(wd), Dynamic: true}
	}
	return w.pathTarget(v)
}

func (w *walker) pathTarget(v string) Target {
	if v == "" {
		return Target{Path: v, Dynamic: true}
	}
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~") || harmlessDevice(v) {
		return Target{Path: v}
	}
	if w.cwdDyn {
		return Target{Path: v, Dynamic: true}
	}
	if w.cwd != "" {
		return Target{Path: joinPath(w.cwd, v)}
	}
	return Target{Path: v}
}

func joinPath(dir, p string) string {
	j := path.Join(dir, p)
	if strings.HasSuffix(p, "/") && !strings.HasSuffix(j, "/") {
		j += "/"
	}
	return j
}

// cd follows a change of directory for later relative targets.
func (w *walker) cd(args []word) {
	var ops []word
	for _, a := range args {
		if a.lit && strings.HasPrefix(a.val, "-") && a.val != "-" && len(ops) == 0 {
			continue
		}
		ops = append(ops, a)
	}
	if len(ops) != 1 || !ops[0].lit || ops[0].val == "-" || strings.HasPrefix(ops[0].val, "~") || w.cond > 0 {
		w.cwdDyn = true
		return
	}
	d := ops[0].val
	if strings.HasPrefix(d, "/") {
		w.cwd, w.cwdDyn = path.Clean(d), false
		return
	}
	if w.cwd == "" {
		w.cwd = path.Clean(d)
	} else {
		w.cwd = path.Join(w.cwd, d)
	}
}

// nestedScript parses a literal script string (bash -c, eval, a here-doc fed
// to a shell) and walks it as nested code. It reports false when the string
// is not parsed (too deep or a parse error); the caller classifies exec.
func (w *walker) nestedScript(src string) bool {
	w.nestedCwd, w.nestedCwdDyn = w.cwd, w.cwdDyn
	if w.level+1 > MaxNesting {
		return false
	}
	if _, _, deep := tooNested(src); deep {
		return false
	}
	f, err := parse(src)
	if err != nil {
		return false
	}
	n := &walker{a: w.a, src: src, file: f, outer: w, nested: true, level: w.level + 1, depth: w.depth,
		env: w.env, funcs: w.funcs, cwd: w.cwd, cwdDyn: w.cwdDyn, cond: w.cond, ev: w.ev}
	n.exportedTestPath = w.exportedTestPath
	n.stmts(f.Stmts)
	w.nestedCwd, w.nestedCwdDyn = n.cwd, n.cwdDyn
	w.exportedTestPath = w.exportedTestPath || n.exportedTestPath
	return true
}

// tooNested reports whether brackets ((, [, {) in src nest deeper than
// maxParenDepth, or compound keywords (if, while, until, for, select, case)
// deeper than maxKeywordDepth, and where. Arithmetic, array indexes, parameter expansions and
// substitutions nest through brackets. Quotes are not considered, so the
// count can only be too high: a refusal, never a miss.
func tooNested(src string) (line, col int, deep bool) {
	brackets, keywords := 0, 0
	line, col = 1, 0
	for i := 0; i < len(src); i++ {
		col++
		c := src[i]
		switch c {
		case '\n':
			line, col = line+1, 0
		case '(', '[', '{':
			brackets++
			if brackets > maxParenDepth {
				return line, col, true
			}
		case ')', ']', '}':
			if brackets > 0 {
				brackets--
			}
		default:
			if c < 'a' || c > 'w' || i > 0 && isWordByte(src[i-1]) {
				continue
			}
			j := i
			for j < len(src) && isWordByte(src[j]) {
				j++
			}
			switch src[i:j] {
			case "if", "while", "until", "for", "select", "case":
				keywords++
				if keywords > maxKeywordDepth {
					return line, col, true
				}
			case "fi", "done", "esac":
				if keywords > 0 {
					keywords--
				}
			}
			col += j - i - 1
			i = j - 1
		}
	}
	return 0, 0, false
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// echoedWords returns the words a literal echo or printf statement
// prints, or nil.
func echoedWords(s *syntax.Stmt) []string {
	ce, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Args) < 2 {
		return nil
	}
	var out []string
	for i, a := range ce.Args {
		v, lit := wordValue(a)
		if !lit {
			return nil
		}
		if i == 0 {
			if v != "echo" && v != "printf" {
				return nil
			}
			continue
		}
		for _, f := range strings.FieldsFunc(strings.ReplaceAll(v, `\n`, "\n"), func(r rune) bool {
			return r == ' ' || r == '\t' || r == '\n'
		}) {
			if !strings.HasPrefix(f, "-") && !strings.Contains(f, "%") {
				out = append(out, f)
			}
		}
	}
	return out
}
