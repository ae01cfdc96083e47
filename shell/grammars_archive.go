package shell

import "strings"

// This file holds the option grammars of the archivers (zip, unzip, 7z,
// cpio), of mktemp and of fd, whose options write files, delete them or
// run programs. zip, unzip and 7z do not parse with getopt; their own
// parsers are modelled here, each letter or switch known or the command is
// exec and unknown.

func addArchiveGrammars(add func(*Grammar, ...string)) {
	// GNU mktemp (coreutils 9, mktemp --help)
	add(G("mktemp", StyleGNU, "d directory", "u dry-run", "q quiet", "suffix=", "p= :wd", "tmpdir? :wd", "t",
		"help", "version"))
	// GNU cpio 2.13 (cpio --help; not installed here: from its manual)
	add(G("cpio", StyleGNU, "o create", "i extract", "p pass-through", "t list", "0 null", "a reset-access-time",
		"A append", "b swap", "B", "c", "C io-size=", "d make-directories", "D directory=", "E pattern-file= :r",
		"f nonmatching", "H format=", "L dereference", "m preserve-modification-time", "M message=",
		"n numeric-uid-gid", "only-verify-crc", "quiet", "rsh-command= :x", "r rename", "R owner=",
		"s swap-bytes", "S swap-halfwords", "sparse", "u unconditional", "v verbose", "V dot", "W warning=",
		"force-local", "absolute-filenames", "no-absolute-filenames", "no-preserve-owner", "l link",
		"device-independent reproducible", "ignore-devno", "renumber-inodes", "to-stdout", "block-size=",
		"? help", "usage", "version").with(
		Opt{Names: []string{"F", "file"}, Arg: RequiredArg, Check: checkTarArchive},
		Opt{Names: []string{"I"}, Arg: RequiredArg, Check: checkTarArchive},
		Opt{Names: []string{"O"}, Arg: RequiredArg, Check: func(v string) (Effect, string) {
			if e, _ := checkTarArchive(v); e&EffNetwork != 0 {
				return e, ""
			}
			return EffWrite, v
		}}))
	// fd 10 (clap: exact long names; -x/-X take the rest of the line,
	// which progFd classifies as a further command)
	add(G("fd", StyleGNU, "H hidden", "no-hidden", "I no-ignore", "ignore", "no-ignore-vcs", "ignore-vcs",
		"no-require-git", "require-git", "no-ignore-parent", "ignore-parent", "no-global-ignore-file",
		"u unrestricted", "s case-sensitive", "i ignore-case", "g glob", "regex", "F fixed-strings", "and=",
		"a absolute-path", "relative-path", "l list-details", "L follow", "no-follow", "p full-path",
		"0 print0", "d max-depth= maxdepth=", "min-depth=", "exact-depth=", "E exclude=", "prune", "t type=",
		"e extension=", "S size=", "changed-within= change-newer-than= newer=",
		"changed-before= change-older-than= older=", "o owner=", "format=", "x exec= :x", "X exec-batch= :x",
		"batch-size=", "ignore-file= :r", "c color=", "hyperlink?", "j threads=", "max-results=", "1",
		"q quiet", "show-errors", "base-directory=", "path-separator=", "search-path=", "strip-cwd-prefix?",
		"one-file-system mount xdev", "ignore-contain=", "h help", "V version", "gen-completions?").exact(), "fdfind")
}

// dynArg records a word that is not literal in an argv read by a hand
// parser: one that may expand to an option hides what it does (exec and
// unknown); outside a pattern list it is an operand.
func (x *cmdCtx) dynArg(a word, ops []word, list bool) []word {
	if a.dash {
		x.add(ClassExec | ClassUnknown)
	}
	if !list {
		ops = append(ops, a)
	}
	return ops
}

// zipOpts are Info-ZIP zip 3.0's options (zip -h2): "=" takes a value
// (attached, after "=" or in the next word), "*" starts a list that ends
// at the next option; effects as in grammar entries.
var zipOpts = map[string]string{
	"0": "", "1": "", "2": "", "3": "", "4": "", "5": "", "6": "", "7": "", "8": "", "9": "",
	"f": "", "u": "", "d": "", "FS": "d", "U": "", "r": "", "R": "", "m": "d", "j": "", "q": "", "v": "",
	"c": "", "z": "", "@": "", "o": "", "A": "", "J": "", "F": "", "FF": "", "T": "x",
	"TT": "=x", "e": "", "P": "=", "s": "=", "sp": "", "sb": "", "sc": "", "sv": "", "so": "", "su": "",
	"sU": "", "sf": "", "sd": "", "sC": "", "b": "=wd", "t": "=", "tt": "=", "n": "=", "Z": "=", "x": "*",
	"i": "*", "ic": "", "l": "", "ll": "", "D": "", "DF": "", "y": "", "X": "", "k": "", "L": "", "h": "",
	"h2": "", "nw": "", "ws": "", "RE": "", "O": "=w", "g": "", "MM": "", "ds": "=", "db": "", "dc": "",
	"dd": "", "dg": "", "du": "", "dv": "", "lf": "=w", "la": "", "li": "", "AC": "", "AS": "", "V": "",
	"W": "", "w": "", "H": "", "!": "", "$": "", "S": "", "N": "", "Y": "", "E": "", "K": "", "8z": "",
	"-": "",
}

// zipLong are zip's long options by name (the same table's long names).
var zipLong = map[string]string{
	"store-only": "", "compress-1": "", "best": "", "freshen": "", "update": "", "delete": "", "filesync": "d",
	"copy": "", "recurse-paths": "", "recurse-patterns": "", "move": "d", "junk-paths": "", "quiet": "",
	"verbose": "", "entry-comments": "", "archive-comment": "", "names-stdin": "", "latest-time": "",
	"adjust-sfx": "", "junk-sfx": "", "fix": "", "fixfix": "", "test": "x", "unzip-command": "=x",
	"encrypt": "", "password": "=", "split-size": "=", "split-pause": "", "split-bell": "",
	"split-verbose": "", "temp-path": "=wd", "from-date": "=", "before-date": "=", "suffixes": "=",
	"compression-method": "=", "exclude": "*", "include": "*", "ignore-case": "", "to-crlf": "",
	"from-crlf": "", "no-dir-entries": "", "difference-archive": "", "symlinks": "", "no-extra": "",
	"dos-names": "", "help": "", "more-help": "", "no-wild": "", "wild-stop-dirs": "", "regex": "",
	"output-file": "=w", "out": "=w", "grow": "", "must-match": "", "dot-size": "=", "display-bytes": "",
	"display-counts": "", "display-dots": "", "display-globaldots": "", "display-usize": "",
	"display-volume": "", "logfile-path": "=w", "log-append": "", "log-info": "", "show-files": "",
	"sf": "", "sF": "", "sU": "", "sC": "", "version": "", "license": "", "why": "", "no-ascii-case": "",
	"unicode": "", "sync": "d", "allow-ssh-crlf": "",
}

// zipEffect applies a zip option's spec ("=x", "d", "*", ...) and reports
// whether it takes a value and whether it starts a list.
func (x *cmdCtx) zipEffect(spec string, val word, hasVal bool) {
	e := strings.TrimLeft(spec, "=*")
	switch e {
	case "x":
		x.add(ClassExec)
	case "d":
		x.add(ClassDelete)
		x.writeDyn("files zip deletes")
	case "w":
		if hasVal {
			x.writeFile(val)
		}
	case "wd":
		x.add(ClassWrite)
		if hasVal && val.lit {
			x.c.Writes = append(x.c.Writes, Target{Path: joinPath(x.targetOf(val).Path, "*"), Dynamic: true})
		} else {
			x.writeDyn("files written by zip")
		}
	}
}

// progZip reads zip's options with its own parser: clustered letters,
// two-letter options (-TT, -lf), values attached, after "=" or in the next
// word, and -x/-i lists that end at the next option. The first operand is
// the archive (written), the rest are read; an option zip does not have is
// exec and unknown.
func progZip(x *cmdCtx) {
	x.add(ClassRead | ClassWrite)
	args := x.rest()
	var ops []word
	list, show, other := false, false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			ops = x.dynArg(a, ops, list)
			continue
		}
		v := a.val
		if v == "--" {
			ops = append(ops, args[i+1:]...)
			break
		}
		if len(v) < 2 || v[0] != '-' {
			if list && v != "@" {
				continue // a pattern of -x or -i
			}
			list = false
			if v != "@" {
				ops = append(ops, a)
			}
			continue
		}
		list = false
		next := func() (word, bool) {
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return word{}, false
		}
		if strings.HasPrefix(v, "--") {
			name, val, eq := strings.Cut(v[2:], "=")
			spec, ok := zipLong[name]
			other = true
			if !ok {
				x.add(ClassExec | ClassUnknown)
				continue
			}
			var w word
			has := eq
			if eq {
				w = word{val: val, lit: true}
			} else if strings.HasPrefix(spec, "=") {
				w, has = next()
			}
			list = strings.HasPrefix(spec, "*")
			x.zipEffect(spec, w, has)
			continue
		}
		body := v[1:]
		for len(body) > 0 {
			// the longest option at this position: zip's two-letter
			// options take precedence over a letter followed by another
			name := ""
			if len(body) >= 2 {
				if _, ok := zipOpts[body[:2]]; ok {
					name = body[:2]
				}
			}
			if name == "" {
				if _, ok := zipOpts[body[:1]]; ok {
					name = body[:1]
				}
			}
			if name == "" {
				x.add(ClassExec | ClassUnknown)
				break
			}
			spec := zipOpts[name]
			body = body[len(name):]
			switch name {
			case "sf", "h", "h2", "v", "q":
				show = show || name == "sf"
			default:
				other = true
			}
			if strings.HasPrefix(spec, "=") {
				var w word
				has := true
				if body != "" {
					w = word{val: strings.TrimPrefix(body, "="), lit: true}
				} else {
					w, has = next()
				}
				x.zipEffect(spec, w, has)
				break
			}
			if spec == "*" {
				list = true
			}
			x.zipEffect(spec, word{}, false)
		}
	}
	if show && !other && len(ops) == 1 {
		x.c.Classes &^= ClassWrite // zip -sf ARCHIVE lists it
		x.read(ops[0])
		return
	}
	if len(ops) > 0 {
		if !(ops[0].lit && ops[0].val == "-") {
			x.write(ops[0])
		}
		x.read(ops[1:]...)
	}
}

// unzipLetters are UnZip 6.0's option letters (unzip -hh); "=" takes a
// value attached or in the next word, "*" starts the -x list.
var unzipLetters = map[byte]string{
	'a': "", 'b': "", 'B': "", 'c': "r", 'C': "", 'D': "", 'e': "", 'f': "", 'F': "", 'h': "", 'j': "", 'J': "",
	'K': "", 'l': "r", 'L': "", 'M': "", 'n': "", 'N': "", 'o': "", 'p': "r", 'q': "", 's': "", 't': "r",
	'T': "m", 'u': "", 'U': "", 'v': "r", 'V': "", 'W': "", 'X': "", 'z': "r", 'Z': "r", '2': "",
	':': "anywhere", '^': "", 'd': "=", 'x': "*", 'P': "=", 'O': "=", 'I': "=", '$': "", '/': "=",
}

// progUnzip extracts into the current directory or -d's (a write of files
// the archive names); -l, -t, -v, -p, -c, -z and -Z only read; -T
// timestamps the archive; -: lets the archive's paths climb out of the
// directory. A letter unzip does not have is exec and unknown.
func progUnzip(x *cmdCtx) {
	args := x.rest()
	if x.c.Program == "zipinfo" || len(args) > 0 && args[0].lit && strings.HasPrefix(args[0].val, "-Z") {
		// ZipInfo mode: every option only changes the listing
		x.add(ClassRead)
		for _, a := range args {
			if !a.lit && a.dash {
				x.add(ClassExec | ClassUnknown)
			}
			if !a.lit || !strings.HasPrefix(a.val, "-") {
				x.read(a)
			}
		}
		return
	}
	var ops []word
	var dir *word
	readOnly, modify, anywhere := false, false, false
	list := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			ops = x.dynArg(a, ops, list)
			continue
		}
		v := a.val
		if len(v) < 2 || v[0] != '-' {
			if !list {
				ops = append(ops, a)
			}
			continue
		}
		list = false
		if v == "--" {
			continue // unzip reads "--" as a letter-less option; -- does not end options
		}
	letters:
		for j := 1; j < len(v); j++ {
			spec, ok := unzipLetters[v[j]]
			if !ok {
				x.add(ClassExec | ClassUnknown)
				break
			}
			switch spec {
			case "r":
				readOnly = true
			case "m":
				modify = true
			case "anywhere":
				anywhere = true
			case "*":
				list = true
			case "=":
				var val word
				if j+1 < len(v) {
					val = word{val: v[j+1:], lit: true}
				} else if i+1 < len(args) {
					i++
					val = args[i]
				}
				if v[j] == 'd' {
					d := val
					dir = &d
				}
				break letters
			}
		}
	}
	if modify && len(ops) > 0 {
		x.add(ClassModify)
		x.write(ops[0])
	}
	if readOnly && !anywhere {
		x.add(ClassRead)
		x.read(ops...)
		return
	}
	x.add(ClassWrite)
	if len(ops) > 0 {
		x.read(ops[0])
	}
	switch {
	case anywhere:
		x.writeDyn("anywhere the archive names (unzip -:)")
	case dir != nil && dir.lit:
		x.c.Writes = append(x.c.Writes, Target{Path: joinPath(x.w.pathTarget(dir.val).Path, "*"), Dynamic: true})
	case dir != nil:
		x.writeDyn(dir.val)
	default:
		x.c.Writes = append(x.c.Writes, Target{Path: joinPath(x.w.pathTarget(".").Path, "*"), Dynamic: true})
	}
}

// sevenZipSwitches are p7zip 16.02's switches (7z --help), matched by
// prefix after lower-casing: the value follows the name.
var sevenZipSwitches = []string{"ai", "an", "ax", "bb", "bd", "bs", "bt", "i", "m", "o", "p", "r", "sa", "scc",
	"scrc", "scs", "sdel", "seml", "sfx", "si", "slp", "slt", "sni", "sns", "so", "spd", "spe", "spf", "ssc",
	"ssw", "stl", "stm", "stx", "t", "u", "v", "w", "x", "y", "-"}

// prog7z: the first operand is the command (a, u, d, rn write the
// archive; e, x extract under -o; l, t, h, i, b only read). Switches: -o
// and -w name directories written, -sdel deletes the files it archived,
// -spf extracts to the absolute paths the archive names, -seml mails the
// archive, -i@/-x@ read lists; a switch 7z does not have is exec and
// unknown.
func prog7z(x *cmdCtx) {
	var ops []word
	var outDir *word
	anywhere := false
	for _, a := range x.rest() {
		if !a.lit {
			ops = x.dynArg(a, ops, false)
			continue
		}
		if len(a.val) < 2 || a.val[0] != '-' {
			ops = append(ops, a)
			continue
		}
		sw := strings.ToLower(a.val[1:])
		name := ""
		for _, s := range sevenZipSwitches {
			if strings.HasPrefix(sw, s) && len(s) > len(name) {
				name = s
			}
		}
		val := a.val[1+len(name):]
		switch name {
		case "":
			x.add(ClassExec | ClassUnknown)
		case "o", "w":
			if name == "o" {
				d := word{val: val, lit: true}
				outDir = &d
			} else {
				x.add(ClassWrite)
				x.writeDyn(joinPath(x.targetOf(word{val: val, lit: true}).Path, "*"))
			}
		case "sdel":
			x.add(ClassDelete)
			x.writeDyn("files 7z archived")
		case "spf":
			anywhere = true
		case "seml":
			x.add(ClassNetwork | ClassExec)
		case "i", "x", "ai", "ax":
			if f, ok := strings.CutPrefix(strings.TrimLeft(val, "r-0"), "@"); ok {
				x.read(word{val: f, lit: true})
			}
		}
	}
	if len(ops) == 0 || !ops[0].lit {
		x.add(ClassExec | ClassUnknown)
		return
	}
	switch ops[0].val {
	case "l", "t", "h", "i", "b":
		x.add(ClassRead)
		x.read(ops[1:]...)
	case "a", "u", "d", "rn":
		x.add(ClassWrite)
		if len(ops) > 1 {
			x.write(ops[1])
			x.read(ops[2:]...)
		}
	case "e", "x":
		x.add(ClassWrite)
		if len(ops) > 1 {
			x.read(ops[1])
		}
		switch {
		case anywhere:
			x.writeDyn("anywhere the archive names (7z -spf)")
		case outDir != nil:
			x.c.Writes = append(x.c.Writes, Target{Path: joinPath(x.targetOf(*outDir).Path, "*"), Dynamic: true})
		default:
			x.writeDyn("archive contents")
		}
	default:
		x.add(ClassExec | ClassUnknown)
	}
}
