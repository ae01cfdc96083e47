package shell

import "strings"

// This file classifies system programs whose read-only uses are everyday
// (ip addr, hostname, dmesg, file, getent) but whose other uses change the
// system, write files or reach the network.

// progIp: `ip [OPTIONS] OBJECT [COMMAND]` shows by default; any command
// other than show/list/get/help changes the network configuration. -batch
// runs the commands of a file nobody sees. (ip netns exec is a wrapper.)
func progIp(x *cmdCtx) {
	args := x.rest()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			x.add(ClassExec | ClassUnknown)
			return
		}
		v := a.val
		if strings.HasPrefix(v, "-") {
			switch strings.TrimLeft(v, "-") {
			case "b", "batch", "ba", "bat", "batc":
				x.add(ClassPrivilege | ClassExec | ClassUnknown)
				return
			case "n", "netns", "f", "family", "l", "loops", "rc", "rcvbuf", "c", "color":
				if !strings.Contains(v, "=") {
					i++
				}
			}
			continue
		}
		cmd := ""
		if i+1 < len(args) {
			if !args[i+1].lit {
				x.add(ClassExec | ClassUnknown)
				return
			}
			cmd = args[i+1].val
		}
		switch cmd {
		case "", "show", "sh", "list", "lst", "ls", "l", "get", "help", "monitor":
			x.add(ClassRead)
		default:
			if strings.HasPrefix(cmd, "-") || v == "help" {
				x.add(ClassRead) // ip addr -4, ip help
				return
			}
			x.add(ClassPrivilege | ClassProcess) // add, del, set, flush, ... change the system
		}
		return
	}
	x.add(ClassRead)
}

// progHostname: printing the name reads; a name operand, -F FILE or -b
// sets it.
func progHostname(x *cmdCtx) {
	p := getopt(x.rest(), "F", []string{"file"}, false)
	if len(p.ops) > 0 || p.has("F", "--file", "b", "--boot") {
		x.add(ClassPrivilege)
		x.read(p.all("F", "--file")...)
		return
	}
	x.add(ClassRead)
}

// progDmesg: clearing or switching the console ring buffer changes the
// system.
func progDmesg(x *cmdCtx) {
	p := getopt(x.rest(), "FfklnrsS", []string{"file", "facility", "level", "console-level", "buffer-size", "since", "until", "time-format"}, false)
	x.add(ClassRead)
	if p.has("C", "--clear", "c", "--read-clear", "D", "--console-off", "E", "--console-on", "n", "--console-level") {
		x.add(ClassPrivilege | ClassDelete)
		x.writeDyn("kernel ring buffer")
	}
	x.read(p.all("F", "--file")...)
}

// progFile: file reads; -C compiles the magic files into NAME.mgc in the
// working directory.
func progFile(x *cmdCtx) {
	p := getopt(x.rest(), "fFmP", []string{"files-from", "separator", "magic-file", "parameter", "exclude", "exclude-quiet"}, false)
	x.add(ClassRead)
	x.read(p.all("f", "--files-from")...)
	magic := p.all("m", "--magic-file")
	if p.has("C", "--compile") {
		x.add(ClassWrite)
		if len(magic) == 0 {
			x.write(word{val: "magic.mgc", lit: true})
		}
		for _, m := range magic {
			if !m.lit {
				x.writeDyn(m.val + ".mgc")
				continue
			}
			base := m.val[strings.LastIndexByte(m.val, '/')+1:]
			x.write(word{val: base + ".mgc", lit: true})
		}
		return
	}
	x.read(magic...)
	x.read(p.ops...)
	if p.dyn {
		x.add(ClassExec | ClassUnknown)
	}
}

// progGetent: the hosts databases resolve names (DNS: a query to a name
// of the caller's choosing carries data out); the others read local
// databases.
func progGetent(x *cmdCtx) {
	ops := getopt(x.rest(), "s", []string{"service"}, false).ops
	x.add(ClassRead)
	if len(ops) == 0 || !ops[0].lit {
		x.add(ClassNetwork)
		return
	}
	switch ops[0].val {
	case "hosts", "ahosts", "ahostsv4", "ahostsv6", "networks", "netgroup", "rpc":
		if len(ops) > 1 {
			x.add(ClassNetwork)
		}
	}
}

// progScript: script runs a shell (or -c COMMAND) and records the session
// into a file (typescript by default).
func progScript(x *cmdCtx) {
	p := getopt(x.rest(), "cIOBTmt", []string{"command", "log-in", "log-out", "log-io", "log-timing", "logging-format", "timing"}, false)
	x.add(ClassWrite | ClassExec) // it runs $SHELL
	if c, ok := p.get("c", "--command"); ok {
		x.script(c)
	} else {
		x.add(ClassExec) // an interactive shell
	}
	for _, f := range p.all("I", "--log-in", "O", "--log-out", "B", "--log-io", "T", "--log-timing") {
		x.writeFile(f)
	}
	if len(p.ops) > 0 {
		x.writeFile(p.ops[0])
	} else {
		x.write(word{val: "typescript", lit: true})
	}
}

// progBat: bat prints files; --pager and --config-file run programs,
// --generate-config-file and `bat cache --build|--clear` write its
// configuration and cache.
func progBat(x *cmdCtx) {
	p, pa := x.gopt("bat")
	x.add(ClassRead)
	ops := p.ops
	if len(ops) > 0 && ops[0].lit && ops[0].val == "cache" && len(pa.Operands) > 0 && pa.Operands[0].Index == 0 {
		x.add(ClassWrite)
		x.writeDyn("bat's cache")
		return
	}
	x.read(ops...)
}
