package shell

import (
	"strconv"
	"strings"
)

// This file parses awk programs (POSIX awk with gawk's extensions) to find
// what they do besides printing: system() and indirect calls (@f(), which
// may name system), pipes to and from commands, output redirections,
// getline from files, /inet special files, ENVIRON, ARGV changes,
// @include and @load. The lexer is driven by the parser, as awk's own is:
// a "/" where an operand may start begins a regular expression, anywhere
// else it divides. A program that does not parse runs nothing in awk, but
// the analysis cannot know what it meant: it is exec and unknown.

// awkEffects is what an awk program does besides printing.
type awkEffects struct {
	exec     bool
	inplace  bool // @include "inplace"
	unknown  bool // @include of another file: code not seen; or a parse failure
	network  bool // a /inet/ special file
	lost     bool // the program does not parse
	reads    []Target
	writes   []Target
	envRefs  []string
	dumpsEnv bool
}

// scanAwk parses an awk program and returns its effects. A program the
// parser cannot read is exec and unknown.
func scanAwk(src string) awkEffects {
	p := &awkParser{src: src}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(awkError); !ok {
					panic(r)
				}
				p.fx.lost = true
			}
		}()
		p.program()
	}()
	if p.fx.lost {
		p.fx.exec, p.fx.unknown = true, true
	}
	return p.fx
}

type awkError struct{}

// awk token kinds.
const (
	atEOF = iota
	atNewline
	atNumber
	atString
	atERE
	atName     // a variable or a function called with a space before "("
	atFuncName // NAME immediately followed by "("
	atBuiltin  // a built-in function
	atKeyword
	atPunct // operators and punctuation, text in tok.text
)

type awkToken struct {
	kind int
	text string // the name, keyword or operator; a string's value
	pos  int
}

var awkKeywordSet = map[string]bool{
	"BEGIN": true, "END": true, "BEGINFILE": true, "ENDFILE": true, "function": true, "func": true, "if": true,
	"else": true, "while": true, "for": true, "do": true, "break": true, "continue": true, "next": true,
	"nextfile": true, "exit": true, "return": true, "delete": true, "getline": true, "print": true, "printf": true,
	"in": true, "switch": true, "case": true, "default": true,
}

var awkBuiltins = map[string]bool{
	"length": true, "substr": true, "index": true, "split": true, "sub": true, "gsub": true, "match": true,
	"sprintf": true, "sin": true, "cos": true, "atan2": true, "exp": true, "log": true, "sqrt": true, "int": true,
	"rand": true, "srand": true, "tolower": true, "toupper": true, "system": true, "close": true, "fflush": true,
	"gensub": true, "patsplit": true, "asort": true, "asorti": true, "strftime": true, "systime": true,
	"mktime": true, "and": true, "or": true, "xor": true, "lshift": true, "rshift": true, "compl": true,
	"strtonum": true, "isarray": true, "typeof": true, "bindtextdomain": true, "dcgettext": true,
	"dcngettext": true, "mkbool": true,
}

// awkVal is what the parser knows of an expression's value: a constant
// string (folded through concatenation), or a plain variable name.
type awkVal struct {
	str   string
	konst bool
	name  string // a plain variable (or ENVIRON, ARGV) as an lvalue
	lval  bool
}

type awkParser struct {
	src    string
	pos    int
	tok    awkToken
	peeked bool
	fx     awkEffects
	depth  int
}

func (p *awkParser) fail() { panic(awkError{}) }

// next returns the next token (operand position decides nothing here:
// "/" is always an operator token; primary() re-reads it as a regular
// expression).
func (p *awkParser) peek() awkToken {
	if !p.peeked {
		p.tok = p.lex()
		p.peeked = true
	}
	return p.tok
}

func (p *awkParser) next() awkToken {
	t := p.peek()
	p.peeked = false
	return t
}

func (p *awkParser) is(text string) bool {
	t := p.peek()
	return (t.kind == atPunct || t.kind == atKeyword) && t.text == text
}

func (p *awkParser) accept(text string) bool {
	if p.is(text) {
		p.next()
		return true
	}
	return false
}

func (p *awkParser) expect(text string) {
	if !p.accept(text) {
		p.fail()
	}
}

// optNewlines skips newlines (allowed after {, &&, ||, ",", do, else, ...).
func (p *awkParser) optNewlines() {
	for p.peek().kind == atNewline {
		p.next()
	}
}

func (p *awkParser) lex() awkToken {
	s := p.src
	for p.pos < len(s) {
		c := s[p.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			p.pos++
		case c == '\\' && p.pos+1 < len(s) && s[p.pos+1] == '\n':
			p.pos += 2 // a continuation
		case c == '\\' && p.pos+2 < len(s) && s[p.pos+1] == '\r' && s[p.pos+2] == '\n':
			p.pos += 3
		case c == '#':
			for p.pos < len(s) && s[p.pos] != '\n' {
				p.pos++
			}
		default:
			goto tok
		}
	}
	return awkToken{kind: atEOF, pos: p.pos}
tok:
	start := p.pos
	c := s[p.pos]
	switch {
	case c == '\n':
		p.pos++
		return awkToken{kind: atNewline, pos: start}
	case c == '"':
		return awkToken{kind: atString, text: p.lexString(), pos: start}
	case c >= '0' && c <= '9' || c == '.' && p.pos+1 < len(s) && s[p.pos+1] >= '0' && s[p.pos+1] <= '9':
		j := p.pos
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' || s[j] == 'x' || s[j] == 'X' ||
			s[j] >= 'a' && s[j] <= 'f' || s[j] >= 'A' && s[j] <= 'F' ||
			(s[j] == '+' || s[j] == '-') && j > p.pos && (s[j-1] == 'e' || s[j-1] == 'E')) {
			j++
		}
		p.pos = j
		return awkToken{kind: atNumber, text: s[start:j], pos: start}
	case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		j := p.pos
		for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9' ||
			s[j] == ':' && j+1 < len(s) && s[j+1] == ':') {
			if s[j] == ':' {
				j++ // gawk namespaces: ns::name
			}
			j++
		}
		p.pos = j
		w := s[start:j]
		switch {
		case awkKeywordSet[w]:
			return awkToken{kind: atKeyword, text: w, pos: start}
		case awkBuiltins[w]:
			return awkToken{kind: atBuiltin, text: w, pos: start}
		case j < len(s) && s[j] == '(':
			return awkToken{kind: atFuncName, text: w, pos: start}
		}
		return awkToken{kind: atName, text: w, pos: start}
	}
	for _, op := range []string{"**=", "|&", "**", "^=", "+=", "-=", "*=", "/=", "%=", "==", "<=", ">=", "!=", "++",
		"--", "&&", "||", ">>", "!~"} {
		if strings.HasPrefix(s[p.pos:], op) {
			p.pos += len(op)
			return awkToken{kind: atPunct, text: op, pos: start}
		}
	}
	if strings.IndexByte("{}()[];,+-*/%^!><|?:~$=@", c) >= 0 {
		p.pos++
		return awkToken{kind: atPunct, text: string(c), pos: start}
	}
	p.fail()
	return awkToken{}
}

// lexString reads a string literal at p.pos (a '"') and returns its value.
func (p *awkParser) lexString() string {
	s := p.src
	var sb strings.Builder
	i := p.pos + 1
	for {
		if i >= len(s) || s[i] == '\n' {
			p.fail() // unterminated
		}
		c := s[i]
		if c == '"' {
			p.pos = i + 1
			return sb.String()
		}
		if c == '\\' && i+1 < len(s) {
			i++
			switch e := s[i]; e {
			case 'n':
				sb.WriteByte('\n')
			case 't':
				sb.WriteByte('\t')
			case 'r':
				sb.WriteByte('\r')
			case '\\', '"', '/':
				sb.WriteByte(e)
			case '\n':
			case '0', '1', '2', '3', '4', '5', '6', '7':
				j := i
				for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
					j++
				}
				n, _ := strconv.ParseUint(s[i:j], 8, 8)
				sb.WriteByte(byte(n))
				i = j - 1
			default:
				sb.WriteByte('\\')
				sb.WriteByte(e)
			}
			i++
			continue
		}
		sb.WriteByte(c)
		i++
	}
}

// regexAt reads a regular expression literal starting at the "/" at pos.
func (p *awkParser) regexAt(pos int) {
	s := p.src
	i := pos + 1
	inClass := false
	for {
		if i >= len(s) || s[i] == '\n' {
			p.fail()
		}
		c := s[i]
		switch {
		case c == '\\':
			i++
		case c == '[' && !inClass:
			inClass = true
			if i+1 < len(s) && s[i+1] == '^' {
				i++
			}
			if i+1 < len(s) && s[i+1] == ']' {
				i++ // []...] : a ] first in a class is a member
			}
		case c == ']' && inClass:
			inClass = false
		case c == '/' && !inClass:
			p.pos = i + 1
			p.peeked = false
			return
		}
		i++
	}
}

func (p *awkParser) enter() {
	p.depth++
	if p.depth > 200 {
		p.fail()
	}
}

func (p *awkParser) leave() { p.depth-- }

// program: items separated by newlines or semicolons.
func (p *awkParser) program() {
	for {
		for p.peek().kind == atNewline || p.is(";") {
			p.next()
		}
		if p.peek().kind == atEOF {
			return
		}
		p.item()
	}
}

func (p *awkParser) item() {
	t := p.peek()
	switch {
	case t.kind == atPunct && t.text == "@":
		p.directive()
		return
	case t.kind == atKeyword && (t.text == "function" || t.text == "func"):
		p.next()
		n := p.next()
		if n.kind != atName && n.kind != atFuncName && n.kind != atBuiltin {
			p.fail()
		}
		p.expect("(")
		for !p.accept(")") {
			if p.next().kind != atName {
				p.fail()
			}
			p.optNewlines()
			if !p.is(")") {
				p.expect(",")
				p.optNewlines()
			}
		}
		p.optNewlines()
		p.block()
		return
	case t.kind == atKeyword && (t.text == "BEGIN" || t.text == "END" || t.text == "BEGINFILE" || t.text == "ENDFILE"):
		p.next()
		p.optNewlines()
		p.block()
		return
	case t.kind == atPunct && t.text == "{":
		p.block()
		return
	}
	// pattern [, pattern] [action]
	p.expr(false)
	if p.accept(",") {
		p.optNewlines()
		p.expr(false)
	}
	if p.is("{") {
		p.block()
	}
}

// directive reads @include, @load and @namespace at the top level.
func (p *awkParser) directive() {
	p.next() // @
	n := p.next()
	switch n.text {
	case "include":
		f := p.next()
		if f.kind != atString {
			p.fail()
		}
		if f.text == "inplace" || f.text == "inplace.awk" {
			p.fx.inplace = true
		} else {
			p.fx.exec, p.fx.unknown = true, true // code nobody sees
		}
	case "load":
		p.fx.exec = true // a shared object
		if p.next().kind != atString {
			p.fail()
		}
	case "namespace":
		if p.next().kind != atString {
			p.fail()
		}
	default:
		p.fail()
	}
}

func (p *awkParser) block() {
	p.enter()
	defer p.leave()
	p.expect("{")
	for {
		for p.peek().kind == atNewline || p.is(";") {
			p.next()
		}
		if p.accept("}") {
			return
		}
		if p.peek().kind == atEOF {
			p.fail()
		}
		p.stmt()
	}
}

// simpleEnd ends a simple statement: a newline, ";", or before "}" or EOF.
func (p *awkParser) simpleEnd() {
	t := p.peek()
	switch {
	case t.kind == atNewline || t.kind == atEOF:
		if t.kind == atNewline {
			p.next()
		}
	case t.kind == atPunct && t.text == ";":
		p.next()
	case t.kind == atPunct && t.text == "}":
	default:
		p.fail()
	}
}

// body reads the statement of if/while/for: newlines may come first.
func (p *awkParser) body() {
	p.optNewlines()
	if p.accept(";") {
		return // an empty statement
	}
	p.stmt()
}

func (p *awkParser) stmt() {
	p.enter()
	defer p.leave()
	t := p.peek()
	if t.kind == atPunct && t.text == "{" {
		p.block()
		return
	}
	if t.kind == atPunct && t.text == "@" {
		p.expr(false) // an indirect call
		p.simpleEnd()
		return
	}
	if t.kind != atKeyword {
		p.expr(false)
		p.simpleEnd()
		return
	}
	switch t.text {
	case "if":
		p.next()
		p.expect("(")
		p.optNewlines()
		p.expr(false)
		p.optNewlines()
		p.expect(")")
		p.body()
		// else may follow after newlines or a ";"
		save, saveTok, savePeeked := p.pos, p.tok, p.peeked
		for p.peek().kind == atNewline || p.is(";") {
			p.next()
		}
		if p.accept("else") {
			p.body()
		} else {
			p.pos, p.tok, p.peeked = save, saveTok, savePeeked
		}
	case "while":
		p.next()
		p.expect("(")
		p.expr(false)
		p.expect(")")
		if p.is(";") {
			p.next() // while (x);
			return
		}
		p.body()
	case "do":
		p.next()
		p.body()
		for p.peek().kind == atNewline || p.is(";") {
			p.next()
		}
		p.expect("while")
		p.expect("(")
		p.expr(false)
		p.expect(")")
		p.simpleEnd()
	case "for":
		p.next()
		p.expect("(")
		if p.forIn() {
			p.expect(")")
			p.body()
			return
		}
		if !p.is(";") {
			p.simpleOrExpr()
		}
		p.expect(";")
		p.optNewlines()
		if !p.is(";") {
			p.expr(false)
		}
		p.expect(";")
		p.optNewlines()
		if !p.is(")") {
			p.simpleOrExpr()
		}
		p.expect(")")
		if p.is(";") {
			p.next()
			return
		}
		p.body()
	case "switch":
		p.next()
		p.expect("(")
		p.expr(false)
		p.expect(")")
		p.optNewlines()
		p.expect("{")
		for {
			for p.peek().kind == atNewline || p.is(";") {
				p.next()
			}
			if p.accept("}") {
				return
			}
			switch {
			case p.accept("case"):
				if p.peek().kind == atPunct && (p.peek().text == "/" || p.peek().text == "/=") {
					p.regexAt(p.peek().pos)
				} else {
					p.accept("-")
					k := p.next()
					if k.kind != atNumber && k.kind != atString {
						p.fail()
					}
				}
				p.expect(":")
			case p.accept("default"):
				p.expect(":")
			default:
				p.stmt()
			}
		}
	case "break", "continue", "next", "nextfile":
		p.next()
		p.simpleEnd()
	case "exit", "return":
		p.next()
		if !p.stmtEnds() {
			p.expr(false)
		}
		p.simpleEnd()
	case "delete":
		p.next()
		n := p.next()
		if n.kind != atName {
			p.fail()
		}
		if n.text == "ENVIRON" {
			// deleting from ENVIRON changes what system() children see
		}
		if p.accept("[") {
			p.exprList()
			p.expect("]")
		}
		p.simpleEnd()
	case "print", "printf":
		p.next()
		p.printStmt()
		p.simpleEnd()
	case "getline":
		p.expr(false)
		p.simpleEnd()
	default:
		p.fail()
	}
}

// stmtEnds reports whether the next token ends a simple statement.
func (p *awkParser) stmtEnds() bool {
	t := p.peek()
	return t.kind == atNewline || t.kind == atEOF || t.kind == atPunct && (t.text == ";" || t.text == "}")
}

// simpleOrExpr reads the init or increment of a C-style for.
func (p *awkParser) simpleOrExpr() { p.expr(false) }

// forIn reads "NAME in ARRAY" or "(NAME, NAME) in ARRAY" if that is what
// follows, and reports whether it did.
func (p *awkParser) forIn() bool {
	save, saveTok, savePeeked := p.pos, p.tok, p.peeked
	ok := func() bool {
		if p.accept("(") {
			if p.next().kind != atName {
				return false
			}
			for p.accept(",") {
				if p.next().kind != atName {
					return false
				}
			}
			if !p.accept(")") {
				return false
			}
		} else if p.next().kind != atName {
			return false
		}
		if !p.accept("in") {
			return false
		}
		n := p.next()
		if n.kind != atName {
			return false
		}
		if n.text == "ENVIRON" {
			p.fx.dumpsEnv = true
		}
		return p.is(")")
	}()
	if !ok {
		p.pos, p.tok, p.peeked = save, saveTok, savePeeked
	}
	return ok
}

// printStmt reads print's or printf's arguments and its redirection.
func (p *awkParser) printStmt() {
	if !p.stmtEnds() && !p.is(">") && !p.is(">>") && !p.is("|") && !p.is("|&") {
		if !p.groupedPrintList() {
			p.exprListNoGT()
		}
	}
	switch {
	case p.accept(">"), p.accept(">>"):
		v := p.concatNoGT()
		p.output(v)
	case p.accept("|"), p.accept("|&"):
		p.concatNoGT()
		p.fx.exec = true // a pipe to a command (or a coprocess)
	}
}

// groupedPrintList reads print's parenthesized argument list, printf("%s",
// x) > f, when that is what follows; otherwise it reads nothing.
func (p *awkParser) groupedPrintList() bool {
	if !p.is("(") {
		return false
	}
	save, saveTok, savePeeked, saveFx := p.pos, p.tok, p.peeked, p.fx
	saveFx.reads = append([]Target(nil), p.fx.reads...)
	saveFx.writes = append([]Target(nil), p.fx.writes...)
	saveFx.envRefs = append([]string(nil), p.fx.envRefs...)
	ok := func() (ok bool) {
		defer func() {
			if r := recover(); r != nil {
				if _, isErr := r.(awkError); !isErr {
					panic(r)
				}
				ok = false
			}
		}()
		p.next()
		p.optNewlines()
		p.exprList()
		p.optNewlines()
		p.expect(")")
		return p.stmtEnds() || p.is(">") || p.is(">>") || p.is("|") || p.is("|&")
	}()
	if !ok {
		p.pos, p.tok, p.peeked, p.fx = save, saveTok, savePeeked, saveFx
	}
	return ok
}

// output records print's redirection target.
func (p *awkParser) output(v awkVal) {
	if !v.konst {
		p.fx.writes = append(p.fx.writes, Target{Path: "awk output", Dynamic: true})
		return
	}
	t := v.str
	switch {
	case awkInet(t):
		p.fx.network = true
	case harmlessDevice(t) || t == "/dev/stderr" || t == "-" || strings.HasPrefix(t, "/dev/fd/"):
	default:
		p.fx.writes = append(p.fx.writes, Target{Path: t})
	}
}

// awkInet reports gawk's network special files.
func awkInet(s string) bool {
	return strings.HasPrefix(s, "/inet/") || strings.HasPrefix(s, "/inet4/") || strings.HasPrefix(s, "/inet6/")
}

// input records a file getline reads.
func (p *awkParser) input(v awkVal) {
	if !v.konst {
		p.fx.reads = append(p.fx.reads, Target{Path: "awk getline file", Dynamic: true})
		return
	}
	if awkInet(v.str) {
		p.fx.network = true
		return
	}
	if v.str == "-" || v.str == "/dev/stdin" {
		return
	}
	p.fx.reads = append(p.fx.reads, Target{Path: v.str})
}

// exprListNoGT reads print's argument list, where an unparenthesized ">"
// starts the redirection.
func (p *awkParser) exprListNoGT() {
	for {
		p.exprNoGT()
		if !p.accept(",") {
			return
		}
		p.optNewlines()
	}
}

func (p *awkParser) exprList() {
	for {
		p.expr(false)
		p.optNewlines()
		if !p.accept(",") {
			return
		}
		p.optNewlines()
	}
}

func (p *awkParser) exprNoGT() awkVal { return p.expr(true) }

// expr reads an expression; noGT stops at ">" (print's redirection) and at
// "|" (print's pipe).
func (p *awkParser) expr(noGT bool) awkVal {
	p.enter()
	defer p.leave()
	return p.ternary(noGT)
}

func (p *awkParser) ternary(noGT bool) awkVal {
	v := p.orExpr(noGT)
	if p.accept("?") {
		p.optNewlines()
		p.ternary(noGT)
		p.optNewlines()
		p.expect(":")
		p.optNewlines()
		p.ternary(noGT)
		return awkVal{}
	}
	if t := p.peek(); t.kind == atPunct && v.lval {
		switch t.text {
		case "=", "+=", "-=", "*=", "/=", "%=", "^=", "**=":
			p.next()
			p.optNewlines()
			r := p.ternary(noGT)
			p.assign(v, r)
			return awkVal{}
		}
	}
	return v
}

// assign notes assignments that change what awk reads: ARGV's elements
// and ARGC name the input files.
func (p *awkParser) assign(l, r awkVal) {
	switch l.name {
	case "ARGV":
		if r.konst {
			p.input(r)
		} else {
			p.input(awkVal{})
		}
	case "ARGC":
		p.input(awkVal{})
	}
}

func (p *awkParser) orExpr(noGT bool) awkVal { return p.binary(noGT, p.andExpr, true, "||") }

func (p *awkParser) andExpr(noGT bool) awkVal { return p.binary(noGT, p.inExpr, true, "&&") }

func (p *awkParser) inExpr(noGT bool) awkVal {
	v := p.matchExpr(noGT)
	for p.accept("in") {
		n := p.next()
		if n.kind != atName {
			p.fail()
		}
		v = awkVal{}
	}
	return v
}

func (p *awkParser) matchExpr(noGT bool) awkVal { return p.binary(noGT, p.relExpr, false, "~", "!~") }

func (p *awkParser) relExpr(noGT bool) awkVal {
	v := p.concat(noGT)
	for {
		t := p.peek()
		if t.kind != atPunct {
			return v
		}
		switch t.text {
		case "<", "<=", "!=", "==", ">=":
		case ">":
			if noGT {
				return v
			}
		case "|", "|&":
			// expr | getline [var]
			save, saveTok, savePeeked := p.pos, p.tok, p.peeked
			p.next()
			if p.accept("getline") {
				p.fx.exec = true // a command's output (or a coprocess)
				if n := p.peek(); n.kind == atName || n.kind == atPunct && n.text == "$" {
					p.primaryLvalue()
				}
				v = awkVal{}
				continue
			}
			p.pos, p.tok, p.peeked = save, saveTok, savePeeked
			return v
		default:
			return v
		}
		p.next()
		p.concat(noGT)
		v = awkVal{}
	}
}

// concatNoGT reads a redirection target: a concatenation (gawk reads
// `print > "a" "b"` as the file "ab").
func (p *awkParser) concatNoGT() awkVal { return p.concat(true) }

// startsOperand reports whether t can start an operand of a concatenation.
func startsOperand(t awkToken) bool {
	switch t.kind {
	case atNumber, atString, atName, atFuncName, atBuiltin:
		return true
	case atPunct:
		return t.text == "$" || t.text == "(" || t.text == "!" || t.text == "@" || t.text == "-" || t.text == "+" ||
			t.text == "++" || t.text == "--"
	case atKeyword:
		return t.text == "getline"
	}
	return false
}

func (p *awkParser) concat(noGT bool) awkVal {
	v := p.additive(noGT)
	for {
		t := p.peek()
		if !startsOperand(t) || t.kind == atPunct && (t.text == "-" || t.text == "+" || t.text == "!" || t.text == "++" || t.text == "--") {
			return v
		}
		if t.kind == atKeyword && t.text == "getline" {
			return v
		}
		r := p.additive(noGT)
		if v.konst && r.konst {
			v = awkVal{str: v.str + r.str, konst: true}
		} else {
			v = awkVal{}
		}
	}
}

func (p *awkParser) additive(noGT bool) awkVal {
	return p.binary(noGT, p.multiplicative, false, "+", "-")
}

func (p *awkParser) multiplicative(noGT bool) awkVal {
	return p.binary(noGT, p.unary, false, "*", "/", "%")
}

// binary reads a left-associative level: operand (op operand)*; nl lets
// newlines follow the operator (&&, ||).
func (p *awkParser) binary(noGT bool, operand func(bool) awkVal, nl bool, ops ...string) awkVal {
	v := operand(noGT)
	for {
		found := false
		for _, op := range ops {
			if p.is(op) {
				found = true
				break
			}
		}
		if !found {
			return v
		}
		p.next()
		if nl {
			p.optNewlines()
		}
		operand(noGT)
		v = awkVal{}
	}
}

func (p *awkParser) unary(noGT bool) awkVal {
	if p.is("!") || p.is("-") || p.is("+") {
		p.next()
		p.unary(noGT)
		return awkVal{}
	}
	return p.power(noGT)
}

func (p *awkParser) power(noGT bool) awkVal {
	v := p.postfix(noGT)
	if p.is("^") || p.is("**") {
		p.next()
		p.unaryPow(noGT)
		return awkVal{}
	}
	return v
}

// unaryPow: the right operand of ^ may carry a sign (2^-1).
func (p *awkParser) unaryPow(noGT bool) {
	if p.is("-") || p.is("+") || p.is("!") {
		p.next()
		p.unaryPow(noGT)
		return
	}
	p.power(noGT)
}

func (p *awkParser) postfix(noGT bool) awkVal {
	if p.is("++") || p.is("--") {
		p.next()
		l := p.primaryLvalue()
		p.assign(l, awkVal{})
		return awkVal{}
	}
	v := p.primary(noGT)
	if v.lval && (p.is("++") || p.is("--")) {
		p.next()
		p.assign(v, awkVal{})
		return awkVal{}
	}
	return v
}

// primaryLvalue reads NAME, NAME[...] or $expr.
func (p *awkParser) primaryLvalue() awkVal {
	if p.accept("$") {
		p.postfixOperand()
		return awkVal{lval: true}
	}
	n := p.next()
	if n.kind != atName {
		p.fail()
	}
	return p.nameRest(n)
}

// postfixOperand reads the operand of $ (a primary with ++/--).
func (p *awkParser) postfixOperand() {
	if p.is("++") || p.is("--") || p.is("-") || p.is("+") || p.is("!") {
		p.next()
		p.postfixOperand()
		return
	}
	v := p.primary(false)
	if v.lval && (p.is("++") || p.is("--")) {
		p.next()
	}
}

// nameRest reads what follows a variable name: a subscript, and notes
// ENVIRON's use.
func (p *awkParser) nameRest(n awkToken) awkVal {
	name := n.text
	if p.accept("[") {
		p.optNewlines()
		var first awkVal
		count := 0
		for {
			v := p.expr(false)
			if count == 0 {
				first = v
			}
			count++
			p.optNewlines()
			if !p.accept(",") {
				break
			}
			p.optNewlines()
		}
		p.expect("]")
		if name == "ENVIRON" {
			if count == 1 && first.konst {
				p.fx.envRefs = append(p.fx.envRefs, first.str)
			} else {
				p.fx.dumpsEnv = true // a computed name: any variable
			}
		}
		return awkVal{name: name, lval: true}
	}
	if name == "ENVIRON" {
		p.fx.dumpsEnv = true // the whole array: passed, looped over, tested
	}
	return awkVal{name: name, lval: true}
}

func (p *awkParser) primary(noGT bool) awkVal {
	t := p.next()
	switch t.kind {
	case atNumber:
		return awkVal{}
	case atString:
		return awkVal{str: t.text, konst: true}
	case atName:
		return p.nameRest(t)
	case atFuncName:
		p.expect("(")
		p.callArgs()
		return awkVal{}
	case atBuiltin:
		name := t.text
		if name == "system" {
			p.fx.exec = true
		}
		if p.accept("(") {
			p.callArgs()
		} else if name != "length" {
			p.fail() // only length may go without parentheses
		}
		return awkVal{}
	case atKeyword:
		if t.text == "getline" {
			// getline [var] [< file]
			if n := p.peek(); n.kind == atName || n.kind == atPunct && n.text == "$" {
				p.primaryLvalue()
			}
			if p.accept("<") {
				v := p.getlineFile()
				p.input(v)
			}
			return awkVal{}
		}
		p.fail()
	case atPunct:
		switch t.text {
		case "(":
			p.optNewlines()
			v := p.expr(false)
			p.optNewlines()
			if p.accept(",") {
				// (a, b) in arr
				p.optNewlines()
				p.exprList()
				p.expect(")")
				if !p.is("in") {
					p.fail()
				}
				return awkVal{}
			}
			p.expect(")")
			return awkVal{str: v.str, konst: v.konst}
		case "$":
			p.postfixOperand()
			return awkVal{lval: true}
		case "/", "/=":
			p.regexAt(t.pos)
			return awkVal{}
		case "-", "+", "!":
			p.unary(noGT)
			return awkVal{}
		case "@":
			// @f(...): an indirect call, which may name any function,
			// system() included
			n := p.next()
			if n.kind != atFuncName && n.kind != atName {
				p.fail()
			}
			p.fx.exec = true
			p.expect("(")
			p.callArgs()
			return awkVal{}
		}
	}
	p.fail()
	return awkVal{}
}

// getlineFile reads getline's file operand: a primary, with concatenation
// only in parentheses (getline < "a" "b" reads "a").
func (p *awkParser) getlineFile() awkVal {
	v := p.primary(true)
	return v
}

func (p *awkParser) callArgs() {
	p.optNewlines()
	if p.accept(")") {
		return
	}
	p.exprList()
	p.optNewlines()
	p.expect(")")
}
