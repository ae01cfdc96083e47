package main

import (
	"bytes"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	_ "modernc.org/sqlite" // the "sqlite" driver corruptpage opens store files with

	"github.com/statewright-go/statewright/internal/cli/cmdutil"
	"github.com/statewright-go/statewright/internal/cli/root"
)

// TestMain lets testscript run the statewright binary in-process as the
// "statewright" command.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"statewright": func() { os.Exit(root.Run(cmdutil.New(""), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs every CLI behaviour script in testdata/script.
//
// Besides testscript's builtins, scripts may use
//
//	exits CODE statewright ARGS...
//
// which runs the command and fails unless it exits with exactly CODE; its
// output is available to stdout/stderr assertions as usual, and
//
//	corruptpage FILE TABLE
//
// which damages the SQLite store FILE for real: it moves the WAL's pages
// into the file, then overwrites the root page of TABLE with garbage.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:   "testdata/script",
		Setup: setup,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":       cmdExits,
			"corruptpage": cmdCorruptPage,
		},
	})
}

func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: bad code %q", args[0])
	}
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Dir = ts.Getenv("WORK")
	cmd.Env = append(os.Environ(), "PATH="+ts.Getenv("PATH"), "HOME="+ts.Getenv("HOME"), "WORK="+ts.Getenv("WORK"),
		"CLAUDE_CONFIG_DIR="+ts.Getenv("CLAUDE_CONFIG_DIR"))
	if stdinFile := ts.Getenv("STDIN_FILE"); stdinFile != "" {
		f, err := os.Open(ts.MkAbs(stdinFile))
		ts.Check(err)
		defer f.Close()
		cmd.Stdin = f
	}
	cmd.Stdout = ts.Stdout()
	cmd.Stderr = ts.Stderr()
	err = cmd.Run()
	got := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		got = ee.ExitCode()
	} else if err != nil {
		ts.Fatalf("exits: %v", err)
	}
	if got != want {
		ts.Fatalf("exit code %d, want %d", got, want)
	}
}

// setup prepares every script's environment: the Go build cache
// (shareGoCache) and a Claude Code configuration directory of its own
// ($WORK/.claude-config), so that `init claude-code` never writes into
// the ~/.claude.json of testscript's shared HOME; $REPO, the repository's
// root, for scripts that run files it ships (plugins/).
func setup(env *testscript.Env) error {
	env.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(env.WorkDir, ".claude-config"))
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return err
	}
	env.Setenv("REPO", repo)
	return shareGoCache(env)
}

// shareGoCache gives scripts that run the go tool (demo.txtar) the
// developer's build cache, so they do not rebuild the standard library in
// every script's empty HOME.
func shareGoCache(env *testscript.Env) error {
	cache := os.Getenv("GOCACHE")
	if cache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return nil // the script sets its own cache
		}
		cache = filepath.Join(dir, "go-build")
	}
	env.Setenv("GOCACHE", cache)
	return nil
}

func cmdCorruptPage(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: corruptpage FILE TABLE")
	}
	p := ts.MkAbs(args[0])
	db, err := sql.Open("sqlite", "file:"+p)
	ts.Check(err)
	var page, size int64
	_, err = db.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	ts.Check(err)
	ts.Check(db.QueryRow("SELECT rootpage FROM sqlite_schema WHERE name = ?", args[1]).Scan(&page))
	ts.Check(db.QueryRow("PRAGMA page_size").Scan(&size))
	ts.Check(db.Close())
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	ts.Check(err)
	defer f.Close()
	_, err = f.WriteAt(bytes.Repeat([]byte{0xA5}, int(size)), (page-1)*size)
	ts.Check(err)
}
