package shell

import (
	"sort"
	"strings"
	"sync"
)

// This file is the option-grammar engine: a program's options described as
// data (names, whether they take a value, what they do) and parsed the way
// that program's own option parser parses them: GNU getopt_long (clustered
// short flags, a value attached or in the next word, unique prefixes of long
// options, options after operands), Go's flag package (-flag and --flag,
// -flag=value, stop at the first operand), Python's argparse, and the
// JavaScript parsers (yargs, cac, node's own).

// ArgKind says whether an option takes a value.
type ArgKind uint8

// Option value kinds.
const (
	NoArg       ArgKind = iota // a flag
	RequiredArg                // -o VALUE, -oVALUE, --out VALUE, --out=VALUE
	OptionalArg                // GNU: only attached (-oVALUE, --out=VALUE); argparse: the next word unless it is an option
)

// Effect is what an option does beyond selecting behaviour.
type Effect uint16

// Option effects.
const (
	EffWrite    Effect = 1 << iota // its value (or Default) is a file written
	EffWriteDir                    // its value (or Default) is a directory files are written into
	EffRead                        // its value is a file read
	EffExec                        // it runs code: a program, a module, a script, a config that can name one
	EffNetwork                     // it talks to the network (an upload, a registry of the caller's choosing)
	EffDelete                      // it deletes files (its value, or files it does not name)
	EffModify                      // the program edits its operands in place
	EffEnv                         // it prints the environment
	EffFilter                      // it selects a subset of the tests (-run, -k, -t, --lf)
	EffPass                        // the words after it are passed on to another program (go test -args)
)

// effNames are the short codes of effects in grammar entries.
var effNames = map[string]Effect{
	"w": EffWrite, "wd": EffWriteDir, "r": EffRead, "x": EffExec, "n": EffNetwork,
	"d": EffDelete, "m": EffModify, "e": EffEnv, "f": EffFilter, "pass": EffPass,
}

// dangerous are the effects that make a grammar strict: an option it does
// not know may be one of them.
const dangerous = EffWrite | EffWriteDir | EffExec | EffNetwork | EffDelete | EffModify | EffEnv

// Opt is one option of a grammar.
type Opt struct {
	// Names are the option's spellings without dashes: one letter for a
	// short option (-o), longer for a long one (--output; -coverprofile in
	// the Go style). The first name is the canonical one.
	Names []string
	Arg   ArgKind
	Eff   Effect
	// Default is the file or directory an EffWrite/EffWriteDir option
	// writes when it is given without a value (gawk -p writes awkprof.out).
	Default string
	// Check, when set, decides the effect from the value (pytest
	// --cov-report html:DIR writes DIR, --cov-report term writes nothing);
	// it returns the effect and the path the effect applies to.
	Check func(val string) (Effect, string)

	neg bool // a negated spelling (--no-NAME) of another option: no effect, no value
}

// Style is how a program's option parser reads argv.
type Style uint8

// Option parser styles.
const (
	StyleGNU      Style = iota // getopt_long: -abc clusters, -oVAL, --long[=VAL], unique prefixes, permutation
	StyleGo                    // Go's flag package: -name or --name, -name=VAL or -name VAL, no clusters, stops at the first operand
	StyleArgparse              // Python argparse: like GNU, plus -o=VAL, optional values take the next non-option word
	StyleJS                    // yargs/cac/node: --name=VAL or --name VAL, --no-name, camelCase = kebab-case = snake_case
)

// Grammar is one program's option grammar.
type Grammar struct {
	// Name is the program (and subcommand) it describes: "sort", "go test".
	Name  string
	Style Style
	Opts  []Opt
	// Permute lets options follow operands (GNU getopt_long, argparse,
	// go test); without it the first operand ends the options.
	Permute bool
	// Abbrev accepts unique prefixes of long options (getopt_long,
	// argparse, Perl's Getopt::Long, nopt).
	Abbrev bool
	// Lenient: an unknown option is harmless. Grammars whose options write,
	// delete, run code or reach the network are strict unless they say so:
	// an option they do not know is treated as running code.
	Lenient bool
	// WLong: -W NAME[=VAL] is --NAME[=VAL] (gawk).
	WLong bool
	// FromFile is argparse's fromfile_prefix_chars: an operand starting
	// with it (pytest @args.txt) is read for more arguments nobody sees.
	FromFile byte
	// Colon: MSBuild-style values after a colon (--diag:FILE, -p:K=V,
	// /p:K=V) as well as after "=" or in the next word.
	Colon bool
	// Negate: --no-NAME turns any long option NAME off, and --NAME turns
	// off an option named no-NAME (git's parse-options, wget, rsync's
	// popt); the negated spellings take part in prefix matching, take no
	// value and do nothing.
	Negate bool
	// Num: a word of digits after a dash is an option (git log -5, git
	// grep -3).
	Num bool
	// EndOfOptions: --end-of-options ends the options as "--" does (git).
	EndOfOptions bool

	once  sync.Once
	short map[byte]*Opt
	long  map[string]*Opt
	longs []string // sorted long names, for prefix lookups
	risky bool
}

// Strict reports whether an option the grammar does not know counts as
// running code: the grammar has options that write, delete, run code or
// reach the network, and it is not marked lenient.
func (g *Grammar) Strict() bool {
	g.index()
	return g.risky && !g.Lenient
}

func (g *Grammar) index() {
	g.once.Do(func() {
		g.short = map[byte]*Opt{}
		g.long = map[string]*Opt{}
		for i := range g.Opts {
			o := &g.Opts[i]
			if o.Eff&dangerous != 0 || o.Check != nil {
				g.risky = true
			}
			for _, n := range o.Names {
				if len(n) == 1 && g.Style != StyleGo {
					g.short[n[0]] = o
					continue
				}
				k := n
				if g.Style == StyleJS {
					k = jsKey(n)
				}
				g.long[k] = o
				g.longs = append(g.longs, k)
			}
		}
		if g.Negate {
			g.addNegations()
		}
		sort.Strings(g.longs)
	})
}

// addNegations adds the negated spelling of every long option that has
// none of its own: --no-NAME, and NAME for an option named no-NAME.
func (g *Grammar) addNegations() {
	var forms []string
	for _, n := range g.longs {
		forms = append(forms, "no-"+n)
		if rest, ok := strings.CutPrefix(n, "no-"); ok && rest != "" {
			forms = append(forms, rest)
		}
	}
	for _, f := range forms {
		if _, ok := g.long[f]; ok {
			continue
		}
		g.long[f] = &Opt{Names: []string{f}, neg: true}
		g.longs = append(g.longs, f)
	}
}

// jsKey normalises a JavaScript option name: --setup-files, --setupFiles
// and --setup_files are one option.
func jsKey(n string) string {
	if !strings.ContainsAny(n, "-_ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
		return n
	}
	var sb strings.Builder
	for i := 0; i < len(n); i++ {
		c := n[i]
		switch {
		case c == '-' || c == '_':
		case c >= 'A' && c <= 'Z':
			sb.WriteByte(c + 'a' - 'A')
		default:
			sb.WriteByte(c)
		}
	}
	return sb.String()
}

// lookupLong finds a long option by exact name or, with Abbrev, by unique
// prefix. An ambiguous prefix returns an option whose effects are the union
// of the candidates' (the real program refuses it; counting every candidate
// can only over-block a command that would fail).
func (g *Grammar) lookupLong(name string) (*Opt, bool) {
	if g.Style == StyleJS {
		name = jsKey(name)
	}
	if o, ok := g.long[name]; ok {
		return o, true
	}
	if !g.Abbrev || name == "" {
		return nil, false
	}
	i := sort.SearchStrings(g.longs, name)
	var found *Opt
	var union *Opt
	for ; i < len(g.longs) && strings.HasPrefix(g.longs[i], name); i++ {
		o := g.long[g.longs[i]]
		if found == nil {
			found = o
			continue
		}
		if o == found {
			continue
		}
		if union == nil {
			u := *found
			union = &u
		}
		union.neg = union.neg && o.neg // a negation only when every candidate is one
		union.Eff |= o.Eff
		if o.Arg > union.Arg {
			union.Arg = o.Arg
		}
		if union.Check == nil {
			union.Check = o.Check
		}
	}
	if union != nil {
		return union, true
	}
	return found, found != nil
}

// Arg is one word of a parsed argv.
type Arg struct {
	Value   string // the literal value, or the source text when not literal
	Literal bool
	Index   int // position in the parsed words
}

// ParsedOption is one option found in argv.
type ParsedOption struct {
	// Name is the option's canonical name without dashes; for an unknown
	// option, the name as written.
	Name string
	// As is the word as written ("--outp=f", "-Hx").
	As       string
	Value    Arg
	HasValue bool
	// Known is false for an option the grammar does not know.
	Known bool
	// Negated is true for the negated spelling of a known option
	// (--no-NAME): it does nothing.
	Negated bool
	// Eff is what the option does (the union of its candidates for an
	// ambiguous prefix; decided by the value where the grammar says so).
	Eff Effect
	// Path is the file or directory Eff applies to: the value, a path the
	// value names (html:DIR), or the option's default.
	Path Arg
	// Index is the position of the option's word in the parsed words.
	Index int
}

// ParsedArgs is argv parsed with a program's grammar.
type ParsedArgs struct {
	Grammar  string
	Options  []ParsedOption
	Operands []Arg
	// Unknown is true when an option the grammar does not know appeared.
	Unknown bool
	// Hidden is true when a word that is not literal may expand to options
	// (or to an option's value): what follows it cannot be known.
	Hidden bool
	// DashDash is the index of a "--" that ended the options, or -1.
	DashDash int
	// Passed are the words after an EffPass option (go test -args), not
	// parsed by this grammar.
	Passed []Arg

	src []word
}

// Effects is the union of the options' effects.
func (p *ParsedArgs) Effects() Effect {
	var e Effect
	for _, o := range p.Options {
		e |= o.Eff
	}
	return e
}

// Has reports whether an option with one of the canonical names appeared.
func (p *ParsedArgs) Has(names ...string) bool {
	for _, o := range p.Options {
		for _, n := range names {
			if o.Known && !o.Negated && o.Name == n {
				return true
			}
		}
	}
	return false
}

// Values returns the values of the named options, in order.
func (p *ParsedArgs) Values(names ...string) []Arg {
	var out []Arg
	for _, o := range p.Options {
		for _, n := range names {
			if o.Known && !o.Negated && o.Name == n && o.HasValue {
				out = append(out, o.Value)
			}
		}
	}
	return out
}

func toArg(w word, i int) Arg { return Arg{Value: w.val, Literal: w.lit, Index: i} }

func fromArg(a Arg) word { return word{val: a.Value, lit: a.Literal} }

// Parse parses the words after the program name (and subcommand).
func (g *Grammar) Parse(words []Word) *ParsedArgs {
	ws := make([]word, len(words))
	for i, w := range words {
		ws[i] = word{val: w.Text, lit: w.Literal, split: !w.Literal, dash: !w.Literal}
	}
	return g.parse(ws)
}

func (g *Grammar) parse(args []word) *ParsedArgs {
	g.index()
	p := &ParsedArgs{Grammar: g.Name, DashDash: -1, src: args}
	operandsOnly := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if operandsOnly {
			p.Operands = append(p.Operands, toArg(a, i))
			continue
		}
		if !a.lit {
			if a.dash {
				p.Hidden = true
			}
			if name, val, ok := dynamicLongOpt(a); ok && (g.Style == StyleGo || strings.HasPrefix(name, "--")) {
				// --output=$X, "--output=$(…)": a known long option whose
				// name is literal and whose value is not known statically
				// (a write to an unknown file for git log --output).
				if o, found := g.lookupLong(strings.TrimLeft(name, "-")); found && !o.neg {
					po := ParsedOption{Name: o.Names[0], As: a.val, Index: i, Known: true,
						Value: Arg{Value: val.val, Index: i}, HasValue: true}
					g.effect(o, &po)
					p.add(po)
					continue
				}
			}
			p.Operands = append(p.Operands, toArg(a, i))
			if !g.Permute && !a.dash {
				operandsOnly = true
			}
			continue
		}
		v := a.val
		if v == "--" || g.EndOfOptions && v == "--end-of-options" {
			p.DashDash = i
			operandsOnly = true
			continue
		}
		if g.FromFile != 0 && len(v) > 1 && v[0] == g.FromFile {
			p.Hidden = true // arguments read from a file
			p.Unknown = true
			p.Operands = append(p.Operands, toArg(a, i))
			continue
		}
		if g.Colon && len(v) > 2 && (v[0] == '-' || v[0] == '/') {
			if name, val, ok := colonOption(v); ok {
				if o, found := g.lookupLong(name); found || len(name) == 1 {
					if !found {
						o, found = g.short[name[0]]
					}
					po := ParsedOption{Name: name, As: v, Index: i, Known: found,
						Value: Arg{Value: val, Literal: true, Index: i}, HasValue: true}
					if found {
						po.Name = o.Names[0]
						g.effect(o, &po)
					}
					p.add(po)
					continue
				}
				if v[0] == '/' {
					p.add(ParsedOption{Name: name, As: v, Index: i, Value: Arg{Value: val, Literal: true, Index: i}, HasValue: true})
					continue
				}
			}
		}
		if len(v) < 2 || v[0] != '-' {
			p.Operands = append(p.Operands, toArg(a, i))
			if !g.Permute {
				operandsOnly = true
			}
			continue
		}
		var next func() (word, int, bool)
		next = func() (word, int, bool) {
			if i+1 < len(args) {
				i++
				return args[i], i, true
			}
			return word{}, 0, false
		}
		if g.Style == StyleGo || strings.HasPrefix(v, "--") {
			name := strings.TrimPrefix(strings.TrimPrefix(v, "-"), "-")
			name, val, eq := strings.Cut(name, "=")
			neg := false
			o, ok := g.lookupLong(name)
			if !ok && g.Style == StyleJS && strings.HasPrefix(name, "no-") {
				o, ok = g.lookupLong(name[3:])
				neg = ok
			}
			po := ParsedOption{Name: name, As: v, Index: i, Known: ok}
			if ok {
				po.Name = o.Names[0]
				if o.neg {
					po.Negated = true
					p.add(po)
					continue
				}
			}
			switch {
			case eq && g.Style == StyleJS && ok && o.Arg != RequiredArg && (val == "false" || val == "0"):
				po.Negated = true // --coverage=false turns a flag off
				p.add(po)
				continue
			case eq:
				po.Value, po.HasValue = Arg{Value: val, Literal: true, Index: i}, true
			case !ok || neg:
			case o.Arg == RequiredArg:
				if w, j, ok := next(); ok {
					po.Value, po.HasValue = toArg(w, j), true
				}
			case o.Arg == OptionalArg && (g.Style == StyleArgparse || g.Style == StyleJS):
				if i+1 < len(args) && !args[i+1].opt() && !(args[i+1].lit && args[i+1].val == "--") {
					w, j, _ := next()
					po.Value, po.HasValue = toArg(w, j), true
				}
			}
			if ok && !neg {
				g.effect(o, &po)
			}
			p.add(po)
			if po.Known && po.Eff&EffPass != 0 {
				for j := i + 1; j < len(args); j++ {
					p.Passed = append(p.Passed, toArg(args[j], j))
				}
				return p
			}
			continue
		}
		if g.WLong && v[1] == 'W' {
			// gawk: -W name[=val] is --name[=val]
			wi := i
			rest := v[2:]
			if rest == "" {
				w, j, ok := next()
				if !ok {
					p.add(ParsedOption{Name: "W", As: v, Index: wi})
					continue
				}
				if !w.lit {
					p.Hidden = true
					p.Operands = append(p.Operands, toArg(w, j))
					continue
				}
				rest = w.val
			}
			sub := g.parse([]word{{val: "--" + rest, lit: true}})
			if len(sub.Options) == 0 {
				p.add(ParsedOption{Name: "W", As: v, Index: wi, Value: Arg{Value: rest, Literal: true, Index: i}, HasValue: true})
			}
			for _, o := range sub.Options {
				o.As, o.Index = v, wi
				o.Value.Index, o.Path.Index = i, i
				p.add(o)
			}
			continue
		}
		if g.Num && strings.Trim(v[1:], "0123456789") == "" {
			p.add(ParsedOption{Name: "NUM", As: v, Index: i, Known: true})
			continue
		}
		// a cluster of short options
		for j := 1; j < len(v); j++ {
			c := v[j]
			o, ok := g.short[c]
			po := ParsedOption{Name: string(c), As: v, Index: i, Known: ok}
			if !ok {
				p.add(po)
				continue
			}
			po.Name = o.Names[0]
			rest := v[j+1:]
			if o.Arg != NoArg {
				if g.Style == StyleArgparse || g.Style == StyleJS {
					rest = strings.TrimPrefix(rest, "=")
				}
				switch {
				case rest != "":
					po.Value, po.HasValue = Arg{Value: rest, Literal: true, Index: i}, true
				case o.Arg == RequiredArg:
					if w, k, ok := next(); ok {
						po.Value, po.HasValue = toArg(w, k), true
					}
				case g.Style == StyleArgparse || g.Style == StyleJS:
					if i+1 < len(args) && !args[i+1].opt() {
						w, k, _ := next()
						po.Value, po.HasValue = toArg(w, k), true
					}
				}
				g.effect(o, &po)
				p.add(po)
				break
			}
			g.effect(o, &po)
			p.add(po)
		}
	}
	return p
}

// colonOption splits an MSBuild-style option: --name:value, -n:value or
// /name:value (the value may hold more colons).
func colonOption(v string) (name, val string, ok bool) {
	body := strings.TrimLeft(v, "-/")
	if len(v)-len(body) > 2 || body == "" {
		return "", "", false
	}
	name, val, ok = strings.Cut(body, ":")
	if !ok || name == "" || strings.Contains(name, "=") || strings.Contains(name, "/") {
		return "", "", false
	}
	return name, val, true
}

func (p *ParsedArgs) add(o ParsedOption) {
	if !o.Known {
		p.Unknown = true
	}
	p.Options = append(p.Options, o)
}

// effect fills in what a found option does.
func (g *Grammar) effect(o *Opt, po *ParsedOption) {
	po.Eff = o.Eff
	if po.HasValue {
		po.Path = po.Value
	} else if o.Default != "" {
		po.Path = Arg{Value: o.Default, Literal: true, Index: po.Index}
	}
	if o.Check != nil && po.HasValue {
		if !po.Value.Literal {
			po.Eff |= EffExec | o.Eff
			return
		}
		e, path := o.Check(po.Value.Value)
		po.Eff = e
		if path != "" {
			po.Path = Arg{Value: path, Literal: true, Index: po.Value.Index}
		} else if e&(EffWrite|EffWriteDir|EffRead|EffDelete) == 0 {
			po.Path = Arg{}
		}
	} else if o.Check != nil && !po.HasValue && o.Arg == OptionalArg {
		if e, path := o.Check(""); path != "" || e != 0 {
			po.Eff = e
			if path != "" {
				po.Path = Arg{Value: path, Literal: true, Index: po.Index}
			}
		}
	}
}

// G builds a grammar from compact entries, one per option:
//
//	"o output= :w"     short -o and long --output take a value, written
//	"p profile? :w=awkprof.out"  an optional value; awkprof.out when absent
//	"compress-program= :x"       a long option that runs a program
//
// Names are separated by spaces; a trailing "=" on any name means the
// option requires a value, "?" an optional one. Words starting with ":"
// are effects (w wd r x n d m e f pass), comma separated, with an optional
// "=DEFAULT" path.
func G(name string, style Style, entries ...string) *Grammar {
	g := &Grammar{Name: name, Style: style}
	switch style {
	case StyleGNU, StyleArgparse:
		g.Permute, g.Abbrev = true, true
	case StyleJS:
		g.Permute = true
	}
	for _, e := range entries {
		g.Opts = append(g.Opts, optEntry(e))
	}
	return g
}

func optEntry(e string) Opt {
	var o Opt
	for _, f := range strings.Fields(e) {
		if f[0] == ':' {
			effs, def, _ := strings.Cut(f[1:], "=")
			for _, c := range strings.Split(effs, ",") {
				eff, ok := effNames[c]
				if !ok {
					panic("shell: unknown effect " + c + " in grammar entry " + e)
				}
				o.Eff |= eff
			}
			o.Default = def
			continue
		}
		switch f[len(f)-1] {
		case '=':
			o.Arg = RequiredArg
			f = f[:len(f)-1]
		case '?':
			if o.Arg == NoArg {
				o.Arg = OptionalArg
			}
			f = f[:len(f)-1]
		}
		o.Names = append(o.Names, f)
	}
	return o
}

// with returns g with more options (checks and other functions).
func (g *Grammar) with(opts ...Opt) *Grammar {
	g.Opts = append(g.Opts, opts...)
	return g
}

// lenient marks a grammar whose unknown options are harmless.
func (g *Grammar) lenient() *Grammar { g.Lenient = true; return g }

// stop makes the first operand end the options.
func (g *Grammar) stop() *Grammar { g.Permute = false; return g }

// exact turns off prefix matching of long options.
func (g *Grammar) exact() *Grammar { g.Abbrev = false; return g }

// applyOptions records what the parsed options do: classes, targets, env.
// A strict grammar counts an unknown option, and a dynamic word that may
// be an option, as running code nobody can see.
func (x *cmdCtx) applyOptions(g *Grammar, p *ParsedArgs) {
	strict := g.Strict()
	for _, o := range p.Options {
		if !o.Known {
			if strict {
				x.add(ClassExec | ClassUnknown)
			}
			continue
		}
		x.applyEffect(o.Eff, o.Path, o.HasValue || o.Path.Value != "")
	}
	if p.Hidden && g.risky {
		x.add(ClassExec | ClassUnknown)
	}
}

// applyEffect records one option's effect on path.
func (x *cmdCtx) applyEffect(e Effect, path Arg, hasPath bool) {
	if e&EffExec != 0 {
		x.add(ClassExec)
	}
	if e&EffNetwork != 0 {
		x.add(ClassNetwork)
	}
	if e&EffEnv != 0 {
		x.w.a.DumpsEnv = true
	}
	w := fromArg(path)
	if e&EffWrite != 0 {
		if !hasPath {
			x.add(ClassWrite)
			x.writeDyn("files written by " + x.c.Program)
		} else if !(w.lit && (w.val == "-" || harmlessDevice(w.val))) {
			x.writeFile(w)
		}
	}
	if e&EffWriteDir != 0 {
		x.add(ClassWrite)
		if hasPath && w.lit {
			x.c.Writes = append(x.c.Writes, Target{Path: joinPath(x.targetOf(w).Path, "*"), Dynamic: true})
		} else if hasPath {
			x.c.Writes = append(x.c.Writes, Target{Path: w.val, Dynamic: true})
		} else {
			x.writeDyn("files written by " + x.c.Program)
		}
	}
	if e&EffDelete != 0 {
		x.add(ClassDelete)
		if hasPath {
			x.write(w) // the file or tree deleted
		} else {
			x.writeDyn("files deleted by " + x.c.Program)
		}
	}
	if e&EffRead != 0 && hasPath {
		x.read(w)
	}
}

// ops returns the operands as words.
func (p *ParsedArgs) ops() []word {
	out := make([]word, len(p.Operands))
	for i, a := range p.Operands {
		out[i] = p.src[a.Index]
	}
	return out
}

// passed returns the passed-on words.
func (p *ParsedArgs) passed() []word {
	out := make([]word, len(p.Passed))
	for i, a := range p.Passed {
		out[i] = p.src[a.Index]
	}
	return out
}

// multi reports whether an operand before position n may expand to several
// words (a glob, an unquoted expansion), so operands after it cannot be
// told apart by position.
func (p *ParsedArgs) multi(n int) bool {
	for i := 0; i < n && i < len(p.Operands); i++ {
		if p.src[p.Operands[i].Index].split {
			return true
		}
	}
	return false
}

// gopt parses the command's arguments with the named grammar, records what
// the options do (applyOptions), and returns them in getopt's form for the
// program's own operand logic.
func (x *cmdCtx) gopt(name string) (parsed, *ParsedArgs) {
	g, ok := grammars()[name]
	if !ok {
		panic("shell: no grammar " + name)
	}
	p := g.parse(x.rest())
	x.applyOptions(g, p)
	return p.legacy(), p
}

// legacy converts to getopt's form: short options by letter, long ones as
// "--name" (canonical names).
func (p *ParsedArgs) legacy() parsed {
	var out parsed
	for _, o := range p.Options {
		if o.Negated {
			continue
		}
		n := o.Name
		if len(n) > 1 || !o.Known && strings.HasPrefix(o.As, "--") {
			n = "--" + n
		}
		lo := opt{name: n, hasVal: o.HasValue}
		if o.HasValue {
			if o.Value.Index < len(p.src) && p.src[o.Value.Index].val == o.Value.Value {
				lo.val = p.src[o.Value.Index]
			} else {
				lo.val = word{val: o.Value.Value, lit: o.Value.Literal}
			}
		}
		out.opts = append(out.opts, lo)
	}
	out.ops = p.ops()
	out.dyn = p.Hidden
	return out
}
