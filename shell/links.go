package shell

import (
	"path"
	"strings"
)

// This file follows links a line makes before it uses them: after `ln -s
// /proc/self p`, `cat p/environ` reads /proc/self/environ, and after `ln -s
// ../Makefile src/m`, `echo x > src/m` writes Makefile. Links that exist
// before the line runs are the runtime's to resolve (it resolves every
// path on the host).

// link is one link a command makes: name -> target. dynamic is true when
// the target is not known.
type link struct {
	name, target string
	symbolic     bool
	dynamic      bool
}

// progLn: ln writes the links it makes (the last operand, or entries in
// -t DIR) and records them so that later commands of the line are read
// through them.
func progLn(x *cmdCtx) {
	p, pa := x.gopt("ln")
	x.add(ClassWrite)
	sym := pa.Has("s")
	ops := p.ops
	var targets []word
	var dir word
	hasDir := false
	if t, ok := p.get("t", "--target-directory"); ok {
		dir, hasDir = t, true
		targets = ops
	} else if len(ops) == 1 {
		dir, hasDir = word{val: ".", lit: true}, true
		targets = ops
	} else if len(ops) > 1 {
		targets = ops[:len(ops)-1]
		last := ops[len(ops)-1]
		x.write(last)
		if len(targets) > 1 {
			dir, hasDir = last, true
		} else {
			x.addLink(last, targets[0], sym)
			if !pa.Has("T") {
				// LAST may be an existing directory: the link is made in it
				x.addLink(word{val: joinPath(last.val, path.Base(targets[0].val)), lit: last.lit && targets[0].lit}, targets[0], sym)
			}
		}
	}
	if hasDir {
		for _, t := range targets {
			name := word{val: joinPath(dir.val, path.Base(t.val)), lit: dir.lit && t.lit}
			x.write(name)
			x.addLink(name, t, sym)
		}
	}
	x.read(targets...)
}

// addLink records a link the command makes.
func (x *cmdCtx) addLink(name, target word, sym bool) {
	if !name.lit {
		return // a link whose name is not known: its writes are dynamic already
	}
	n := x.targetOf(name)
	l := link{name: path.Clean(n.Path), symbolic: sym, dynamic: !target.lit || n.Dynamic}
	if target.lit {
		t := target.val
		switch {
		case strings.HasPrefix(t, "/") || strings.HasPrefix(t, "~"):
		case sym:
			t = path.Join(path.Dir(l.name), t) // relative to the link's directory
		default:
			t = x.targetOf(target).Path // a hard link: relative to the working directory
		}
		l.target = path.Clean(t)
	}
	x.c.links = append(x.c.links, l)
}

// throughLinks returns what t reaches through the links made so far, if
// it lies under one of them.
func throughLinks(t Target, links []link) (Target, bool) {
	if t.Dynamic || len(links) == 0 {
		return Target{}, false
	}
	p := path.Clean(t.Path)
	for i := len(links) - 1; i >= 0; i-- {
		l := links[i]
		rest, ok := strings.CutPrefix(p, l.name)
		if !ok || rest != "" && rest[0] != '/' {
			continue
		}
		if l.dynamic {
			return Target{Path: t.Path + " (through a link)", Dynamic: true}, true
		}
		r := Target{Path: l.target + rest}
		if r2, ok := throughLinks(r, links[:i]); ok {
			return r2, true
		}
		return r, true
	}
	return Target{}, false
}

// followLinks adds, to every command after a link is made, the paths its
// targets reach through it.
func followLinks(cmds []Command) {
	var links []link
	for i := range cmds {
		c := &cmds[i]
		if len(links) > 0 {
			for _, t := range c.Writes {
				if r, ok := throughLinks(t, links); ok {
					c.Writes = append(c.Writes, r)
				}
			}
			for _, t := range c.Reads {
				if r, ok := throughLinks(t, links); ok {
					c.Reads = append(c.Reads, r)
				}
			}
		}
		links = append(links, c.links...)
	}
}
