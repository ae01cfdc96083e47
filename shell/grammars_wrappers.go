package shell

// This file holds the option grammars of wrappers: programs that run
// another command given as their operands (env, sudo, timeout, xargs,
// nsenter, ...). A wrapper's grammar stops at its first operand, the
// command (or, for timeout, chrt and taskset, a value before it). An
// option the grammar does not know may take a value, so where the command
// starts is not known: the command is exec and unknown.

func addWrapperGrammars(add func(*Grammar, ...string)) {
	w := func(name string, entries ...string) *Grammar {
		g := G(name, StyleGNU, entries...).stop()
		add(g)
		return g
	}
	w("env", "i ignore-environment", "0 null", "u unset=", "C chdir=", "S split-string=", "a argv0=",
		"block-signal?", "default-signal?", "ignore-signal?", "list-signal-handling", "v debug", "help", "version")
	w("sudo", "A askpass", "b background", "B bell", "C close-from=", "D chdir=", "E preserve-env?", "e edit",
		"g group=", "H set-home", "h host?", "i login", "K remove-timestamp", "k reset-timestamp", "l list",
		"N no-update", "n non-interactive", "P preserve-groups", "p prompt=", "R chroot=", "r role=", "S stdin",
		"s shell", "T command-timeout=", "t type=", "U other-user=", "u user=", "V version", "v validate", "help")
	w("doas", "n", "s", "u=", "C=", "L").exact()
	w("nice", "n adjustment=", "help", "version")
	w("timeout", "s signal=", "k kill-after=", "preserve-status", "foreground", "v verbose", "help", "version")
	w("stdbuf", "i input=", "o output=", "e error=", "help", "version")
	w("nohup", "help", "version")
	w("setsid", "c ctty", "f fork", "w wait", "h help", "V version")
	w("time", "o output= :w", "a append", "f format=", "p portability", "v verbose", "q quiet", "help", "V version")
	w("command", "p", "v", "V").exact()
	w("exec", "a=", "c", "l").exact()
	w("xargs", "0 null", "a arg-file= :r", "d delimiter=", "E=", "e eof?", "I=", "i replace?", "L=",
		"l max-lines?", "n max-args=", "o open-tty", "P max-procs=", "p interactive", "process-slot-var=",
		"r no-run-if-empty", "s max-chars=", "show-limits", "t verbose", "x exit", "help", "version")
	w("ionice", "c class=", "n classdata=", "p pid", "P pgid", "t ignore", "u uid", "h help", "V version")
	w("flock", "s shared", "x e exclusive", "u unlock", "n nb nonblock", "w wait= timeout=", "E conflict-exit-code=",
		"o close", "c command=", "F no-fork", "verbose", "h help", "V version")
	w("chroot", "userspec=", "groups=", "skip-chdir", "help", "version")
	w("watch", "b beep", "c color", "C no-color", "d differences?", "e errexit", "g chgexit", "n interval=",
		"p precise", "q equexit=", "r no-rerun", "t no-title", "w no-wrap", "x exec", "h help", "v version")
	w("caffeinate", "d", "i", "m", "s", "u", "t=", "w=").exact()
	w("unbuffer", "p").exact()
	w("chrt", "a all-tasks", "b batch", "d deadline", "e ext", "f fifo", "i idle", "o other", "r rr",
		"R reset-on-fork", "m max", "p pid", "T sched-runtime=", "P sched-period=", "D sched-deadline=",
		"v verbose", "h help", "V version")
	w("taskset", "a all-tasks", "c cpu-list", "p pid", "h help", "V version")
	w("prlimit", "p pid=", "o output=", "noheadings", "raw", "verbose", "h help", "V version", "c core?",
		"d data?", "e nice?", "f fsize?", "i sigpending?", "l memlock?", "m rss?", "n nofile?", "q msgqueue?",
		"r rtprio?", "s stack?", "t cpu?", "u nproc?", "v as?", "x locks?", "y rttime?")
	w("unshare", "m mount?", "u uts?", "i ipc?", "n net?", "p pid?", "U user?", "C cgroup?", "T time?",
		"f fork", "kill-child?", "mount-proc?", "mount-binfmt?", "r map-root-user", "c map-current-user",
		"map-user=", "map-group=", "map-users=", "map-groups=", "map-auto", "propagation=", "setgroups=",
		"R root=", "w wd=", "S setuid=", "G setgid=", "monotonic=", "boottime=", "keep-caps", "l load-interp=",
		"h help", "V version")
	w("nsenter", "a all", "t target=", "m mount?", "u uts?", "i ipc?", "n net?", "p pid?", "C cgroup?",
		"U user?", "T time?", "user-parent", "S setuid=", "G setgid=", "preserve-credentials", "keep-caps",
		"r root?", "w wd?", "W wdns=", "e env", "F no-fork", "Z follow-context", "c join-cgroup", "h help",
		"V version")
	w("setpriv", "d dump", "nnp no-new-privs", "ambient-caps=", "inh-caps=", "bounding-set=", "ruid=", "euid=",
		"rgid=", "egid=", "reuid=", "regid=", "clear-groups", "keep-groups", "init-groups", "groups=",
		"securebits=", "pdeathsig=", "selinux-label=", "apparmor-profile=", "landlock-access=", "landlock-rule=",
		"reset-env", "h help", "V version")
	w("runuser", "u user=", "g group=", "G supp-group=", "l login", "c command=", "f fast",
		"m p preserve-environment", "s shell=", "session-command=", "w whitelist-environment=", "P pty",
		"h help", "V version")
	w("pkexec", "user=", "disable-internal-agent", "keep-cwd", "help", "version")
}

// addReaderGrammars are the grammars of programs that print files but have
// options that write, run code or print the environment.
func addReaderGrammars(add func(*Grammar, ...string)) {
	// tree 2.x (its own parser: exact long names)
	add(G("tree", StyleGNU, "a", "d", "l", "f", "x", "L=", "R", "P=", "I=", "gitignore", "gitfile= :r",
		"ignore-case", "matchdirs", "metafirst", "prune", "info", "infofile= :r", "noreport", "charset=",
		"filelimit=", "timefmt=", "o= :w", "q", "N", "Q", "p", "u", "g", "s", "h", "si", "du", "D", "F", "inodes",
		"device", "v", "t", "c", "U", "r", "dirsfirst", "filesfirst", "sort=", "i", "A", "S", "n", "C", "X", "J",
		"H=", "T=", "nolinks", "hintro= :r", "houtro= :r", "fromfile", "fromtabfile", "fflinks", "version", "help",
		"opt-toggle", "condense", "hyperlink", "scheme=", "authority=").exact())
	// bat (clap: exact long names)
	add(G("bat", StyleGNU, "A show-all", "nonprintable-notation=", "binary=", "p plain", "l language=",
		"H highlight-line=", "file-name=", "d diff", "diff-context=", "tabs=", "wrap=", "S chop-long-lines",
		"terminal-width=", "n number", "color=", "italic-text=", "decorations=", "f force-colorization",
		"paging=", "pager= :x", "m map-syntax=", "ignored-suffix=", "theme=", "theme-dark=", "theme-light=",
		"list-themes", "s squeeze-blank", "squeeze-limit=", "strip-ansi=", "style=", "r line-range=",
		"L list-languages", "u unbuffered", "completion=", "diagnostic", "acknowledgements", "set-terminal-title",
		"config-file= :x", "generate-config-file :w=~/.config/bat/config", "config-dir", "cache-dir", "h help",
		"V version", "lessopen :x", "no-lessopen", "no-config", "no-custom-assets", "custom-assets",
		"no-paging P", "E", "no-pager").exact(), "batcat")
	// yq: mikefarah's (Go) and kislyuk's (a jq wrapper), united: an option
	// either knows counts with both meanings (-s splits into files in one,
	// slurps in the other: a write)
	add(G("yq", StyleGNU, "i inplace in-place", "s split-exp=", "split-exp-file= :x", "f from-file= :x",
		"e exit-status", "n null-input", "o output-format=", "p input-format=", "P prettyPrint", "I indent=",
		"C colors color-output", "M no-colors monochrome-output", "N no-doc", "r unwrapScalar raw-output",
		"0 nul-output", "j tojson join-output", "front-matter=", "header-preprocess?", "expression=", "xml-attribute-prefix=",
		"xml-content-name=", "xml-strict-mode", "xml-keep-namespace", "xml-raw-token", "xml-proc-inst-prefix=",
		"xml-directive-name=", "xml-skip-proc-inst", "xml-skip-directives", "csv-auto-parse", "csv-separator=",
		"tsv-auto-parse", "lua-unquoted", "lua-globals", "lua-prefix=", "lua-suffix=", "properties-separator=",
		"properties-array-brackets", "string-interpolation", "security-disable-env-ops",
		"security-disable-file-ops", "v verbose", "V version", "h help", "shell-completion=", "y yaml-output",
		"Y yaml-roundtrip", "indentless-lists indentless", "explicit-start", "explicit-end", "width=", "x xml-output",
		"xml-dtd", "xml-root=", "xml-item-depth=", "xml-force-list=", "toml-output t", "c compact-output",
		"S sort-keys", "a ascii-output", "R raw-input", "arg=", "argjson=",
		"slurpfile=", "rawfile=", "args", "jsonargs", "seq", "stream", "tab", "L=", "raw-output0",
		"unbuffered"))
}
