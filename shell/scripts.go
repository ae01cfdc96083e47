package shell

import (
	"path"
	"strings"
)

// This file reads the little languages programs take as arguments: sed
// scripts and awk programs.

// sedEffects is what a sed script does besides printing.
type sedEffects struct {
	writes  []string
	reads   []string
	exec    bool // e command or s///e
	unknown bool // a construct the scanner does not know
}

// scanSed scans a (GNU) sed script for w/W (write), r/R (read) and e (exec).
func scanSed(s string) sedEffects {
	var fx sedEffects
	i := 0
	n := len(s)
	skipSpace := func() {
		for i < n && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	restOfLine := func() string {
		j := i
		for j < n && s[j] != '\n' {
			j++
		}
		v := s[i:j]
		i = j
		return v
	}
	// delimited reads up to an unescaped d.
	delimited := func(d byte) bool {
		for i < n {
			c := s[i]
			if c == '\\' {
				i += 2
				continue
			}
			i++
			if c == d {
				return true
			}
		}
		return false
	}
	addr := func() bool {
		skipSpace()
		if i >= n {
			return true
		}
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			for i < n && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
				i++
			}
		case c == '$':
			i++
		case c == '/':
			i++
			if !delimited('/') {
				return false
			}
			for i < n && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		case c == '\\':
			if i+1 >= n {
				return false
			}
			d := s[i+1]
			i += 2
			if !delimited(d) {
				return false
			}
			for i < n && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		case c == '+' || c == '~':
			i++
			for i < n && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		}
		return true
	}
	for i < n {
		for i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == ';') {
			i++
		}
		if i >= n {
			break
		}
		if s[i] == '#' {
			restOfLine()
			continue
		}
		if !addr() {
			fx.unknown = true
			return fx
		}
		skipSpace()
		if i < n && s[i] == ',' {
			i++
			if !addr() {
				fx.unknown = true
				return fx
			}
		}
		skipSpace()
		for i < n && s[i] == '!' {
			i++
			skipSpace()
		}
		if i >= n {
			break
		}
		c := s[i]
		i++
		switch c {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 's', 'y':
			if i >= n || s[i] == '\n' || s[i] == '\\' {
				fx.unknown = true
				return fx
			}
			d := s[i]
			i++
			if !delimited(d) || !delimited(d) {
				fx.unknown = true
				return fx
			}
			if c == 'y' {
				continue
			}
			for i < n && s[i] != ';' && s[i] != '\n' && s[i] != '}' {
				f := s[i]
				i++
				if f == 'w' || f == 'W' {
					skipSpace()
					fx.writes = append(fx.writes, restOfLine())
					break
				}
				if f == 'e' {
					fx.exec = true
				}
			}
		case 'w', 'W':
			skipSpace()
			fx.writes = append(fx.writes, restOfLine())
		case 'r', 'R':
			skipSpace()
			fx.reads = append(fx.reads, restOfLine())
		case 'e':
			fx.exec = true
			restOfLine()
		case 'a', 'i', 'c':
			for {
				l := restOfLine()
				if !strings.HasSuffix(l, "\\") || i >= n {
					break
				}
				i++
			}
		case ':', 'b', 't', 'T':
			for i < n && s[i] != ';' && s[i] != '\n' {
				i++
			}
		case 'q', 'Q', 'l', 'L', 'v':
			skipSpace()
			for i < n && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
				i++
			}
		default:
			fx.unknown = true
			return fx
		}
	}
	return fx
}

func progSed(x *cmdCtx) {
	x.add(ClassRead)
	_, pa := x.gopt("sed")
	var scripts []word
	ops := pa.ops()
	inplace := pa.Has("i")
	sandbox := pa.Has("sandbox")
	scriptFile := pa.Has("f")
	dyn := pa.Hidden
	for _, o := range pa.Options {
		if o.Known && o.Name == "e" && o.HasValue {
			scripts = append(scripts, word{val: o.Value.Value, lit: o.Value.Literal})
		}
	}
	if len(scripts) == 0 && !scriptFile && len(ops) > 0 {
		scripts = append(scripts, ops[0])
		ops = ops[1:]
	}
	if scriptFile {
		x.add(ClassExec | ClassUnknown) // the script's commands are not visible
	}
	for _, sc := range scripts {
		if !sc.lit {
			x.add(ClassExec | ClassUnknown)
			continue
		}
		fx := scanSed(sc.val)
		if sandbox {
			continue
		}
		if fx.exec || fx.unknown {
			x.add(ClassExec)
		}
		if fx.unknown {
			x.add(ClassUnknown)
		}
		for _, w := range fx.writes {
			if harmlessDevice(w) {
				continue
			}
			x.add(ClassWrite)
			x.write(word{val: w, lit: true})
		}
		for _, r := range fx.reads {
			x.read(word{val: r, lit: true})
		}
	}
	if dyn {
		x.add(ClassExec | ClassUnknown)
	}
	if inplace {
		x.add(ClassModify)
		x.write(ops...)
		for _, o := range pa.Options {
			if o.Known && o.Name == "i" && o.HasValue {
				x.backups(fromArg(o.Value), ops)
			}
		}
		return
	}
	x.read(ops...)
}

func progAwk(x *cmdCtx) {
	x.add(ClassRead)
	name := "gawk"
	if x.c.Program == "mawk" || x.c.Program == "nawk" {
		name = "mawk"
	}
	p, pa := x.gopt(name)
	ops := p.ops
	inplace := false
	for _, o := range p.all("i", "--include") {
		if o.lit && (o.val == "inplace" || o.val == "inplace.awk") {
			inplace = true
		} else {
			x.add(ClassExec | ClassUnknown) // an awk source file
		}
	}
	_ = pa
	var progs []word
	progs = append(progs, p.all("e", "--source")...)
	if len(progs) == 0 && !p.has("f", "--file", "E", "--exec") && len(ops) > 0 {
		progs = append(progs, ops[0])
		ops = ops[1:]
	}
	for _, pr := range progs {
		if !pr.lit {
			x.add(ClassExec | ClassUnknown)
			continue
		}
		fx := scanAwk(pr.val)
		if fx.exec {
			x.add(ClassExec)
		}
		if fx.unknown {
			x.add(ClassUnknown)
		}
		if fx.network {
			x.add(ClassNetwork)
		}
		if fx.inplace {
			inplace = true
		}
		for _, r := range fx.reads {
			if r.Dynamic {
				x.c.Reads = append(x.c.Reads, r)
			} else {
				x.read(word{val: r.Path, lit: true})
			}
		}
		for _, t := range fx.writes {
			x.add(ClassWrite)
			if t.Dynamic {
				x.c.Writes = append(x.c.Writes, t)
			} else {
				x.write(word{val: t.Path, lit: true})
			}
		}
		for _, e := range fx.envRefs {
			x.w.ref(e)
		}
		if fx.dumpsEnv {
			x.w.a.DumpsEnv = true
		}
	}
	var files []word
	for _, o := range ops {
		if o.lit && strings.Contains(o.val, "=") && isName(strings.SplitN(o.val, "=", 2)[0]) {
			continue // var=value operand
		}
		files = append(files, o)
	}
	if p.dyn {
		x.add(ClassExec | ClassUnknown)
	}
	if inplace {
		x.add(ClassModify)
		x.write(files...)
		return
	}
	x.read(files...)
}

// backups records the backup files an in-place edit with a suffix writes
// (sed -i.bak, perl -i.orig): FILE.bak, or the suffix with * replaced by
// the file's name (which may put it in another directory).
func (x *cmdCtx) backups(suffix word, files []word) {
	if suffix.lit && suffix.val == "" {
		return
	}
	x.add(ClassWrite)
	for _, f := range files {
		switch {
		case !suffix.lit || !f.lit:
			x.c.Writes = append(x.c.Writes, Target{Path: f.val + suffix.val, Dynamic: true})
		case strings.Contains(suffix.val, "*"):
			dir, base := path.Split(f.val)
			b := strings.ReplaceAll(suffix.val, "*", base)
			if !strings.Contains(b, "/") {
				b = dir + b
			}
			x.write(word{val: b, lit: true})
		default:
			x.write(word{val: f.val + suffix.val, lit: true})
		}
	}
}
