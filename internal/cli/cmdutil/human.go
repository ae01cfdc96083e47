package cmdutil

import (
	"bufio"
	"crypto/subtle"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/gateway/tokens"
	"github.com/statewright-go/statewright/internal/person"
	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
)

// EnvOperatorToken names the environment variable that carries an operator
// token for human-only commands (the --token flag wins).
const EnvOperatorToken = "STATEWRIGHT_OPERATOR_TOKEN"

// OperatorTokenPath is where `statewright token create` keeps the operator
// token: $XDG_CONFIG_HOME/statewright/operator-token, else
// ~/.config/statewright/operator-token.
func OperatorTokenPath() (string, error) {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return "", fmt.Errorf("no operator token location: set XDG_CONFIG_HOME or HOME")
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "statewright", "operator-token"), nil
}

// StdinIsTerminal reports whether cmd's stdin is a terminal.
func StdinIsTerminal(cmd *cobra.Command) bool { return isTerminal(cmd.InOrStdin()) }

// StdoutIsTerminal reports whether cmd's stdout is a terminal.
func StdoutIsTerminal(cmd *cobra.Command) bool { return isTerminal(cmd.OutOrStdout()) }

// isTerminal reports whether s is a terminal's file (not /dev/null).
func isTerminal(s any) bool {
	f, ok := s.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	// /dev/null is a character device too, and is what a harness's tool
	// runner usually gives a command.
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(fi, null) {
		return false
	}
	return true
}

// ProveHuman establishes that a person runs a human-only command, in one
// of two ways: an operator token (--token or $STATEWRIGHT_OPERATOR_TOKEN)
// that matches the token file, or, on a terminal, a confirmation typed at
// a prompt read from /dev/tty (one of accept). The agent's shell has no
// terminal, and self-protection keeps the agent's tools from reading the
// token file. Without either, the command is refused (exit 1).
func ProveHuman(cmd *cobra.Command, prompt string, accept ...string) (runtime.Actor, error) {
	// Nothing the agent's processes run counts as a person, whatever
	// credential they hold (internal/person).
	flag, _ := cmd.Flags().GetString("store")
	registry := ""
	if p, _, err := resolveStore(flag); err == nil {
		registry = HarnessRegistry(p)
	}
	if err := person.Check(registry, false); err != nil {
		return runtime.Actor{}, Failure("`statewright " + cmd.Name() + "` needs a person, and " + err.Error() + "; run it yourself in a terminal of your own")
	}
	tok, _ := cmd.Flags().GetString("token")
	if tok == "" {
		tok = os.Getenv(EnvOperatorToken)
	}
	user := os.Getenv("USER")
	if tok != "" {
		// An operator token of `statewright tokens` (stored hashed) proves a person.
		if ok, err := OperatorFromTokens(tok); err != nil {
			return runtime.Actor{}, Failure("read the token file: " + err.Error())
		} else if ok {
			return runtime.Actor{Kind: runtime.ActorHuman, Channel: "cli-token", Name: user}, nil
		}
		p, err := OperatorTokenPath()
		if err != nil {
			return runtime.Actor{}, Failure(err.Error())
		}
		want, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return runtime.Actor{}, Failure("an operator token was given but no token file exists at " + p + " and it is no valid operator token of `statewright tokens` (create one with `statewright tokens create --role operator`)")
		}
		if err != nil {
			return runtime.Actor{}, Failure("read operator token: " + err.Error())
		}
		w := strings.TrimSpace(string(want))
		if w == "" || subtle.ConstantTimeCompare([]byte(w), []byte(strings.TrimSpace(tok))) != 1 {
			return runtime.Actor{}, Failure("the operator token does not match " + p)
		}
		return runtime.Actor{Kind: runtime.ActorHuman, Channel: "cli-token", Name: user}, nil
	}
	noPerson := Failure("`statewright " + cmd.Name() + "` needs a person: run it in a terminal and confirm at the prompt, " +
		"or pass an operator token with --token or $" + EnvOperatorToken + " (`statewright tokens create --role operator` prints one)")
	if !StdinIsTerminal(cmd) {
		return runtime.Actor{}, noPerson
	}
	// A terminal the agent's processes made (script, expect, a pty) is no person.
	if err := person.Check(registry, true); err != nil {
		return runtime.Actor{}, Failure("`statewright " + cmd.Name() + "` needs a person, and " + err.Error() + "; run it in a terminal of your own, or pass the operator token")
	}
	// The confirmation is read from the controlling terminal, not from
	// stdin, so piping "yes" into the command proves nothing.
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return runtime.Actor{}, noPerson
	}
	defer tty.Close()
	fmt.Fprintf(tty, "%s\nType %s to confirm: ", prompt, strings.Join(quoteAll(accept), " or "))
	line, err := bufio.NewReader(tty).ReadString('\n')
	if err != nil && line == "" {
		return runtime.Actor{}, Failure("no confirmation read from the terminal")
	}
	line = strings.TrimSpace(line)
	for _, a := range accept {
		if a != "" && line == a {
			return runtime.Actor{Kind: runtime.ActorHuman, Channel: "cli-tty", Name: user}, nil
		}
	}
	return runtime.Actor{}, Failure("not confirmed; nothing changed")
}

func quoteAll(ss []string) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		if s != "" {
			out = append(out, "'"+s+"'")
		}
	}
	return out
}

// AddTokenFlag adds --token, the operator token of a human-only command.
func AddTokenFlag(cmd *cobra.Command) {
	cmd.Flags().String("token", "", "operator token proving a person runs this (default $"+EnvOperatorToken+"); without one, confirm on a terminal")
}

// AddTokensFileFlag adds --tokens-file to cmd.
func AddTokensFileFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "tokens-file", "", "the token file (default $XDG_CONFIG_HOME/statewright/tokens.json, else ~/.config/statewright/tokens.json)")
}

// OpenTokens opens the token file path names, or the default one.
func OpenTokens(path string) (*tokens.File, error) {
	if path == "" {
		p, err := tokens.DefaultPath()
		if err != nil {
			return nil, Failure(err.Error())
		}
		path = p
	}
	return tokens.Open(path), nil
}

// OperatorFromTokens reports whether tok is a valid operator token in the
// default token file (the hashed store `statewright tokens` manages).
func OperatorFromTokens(tok string) (bool, error) {
	f, err := OpenTokens("")
	if err != nil {
		return false, err
	}
	t, err := f.Verify(tok)
	switch {
	case errors.Is(err, tokens.ErrBadToken) || errors.Is(err, tokens.ErrNoToken):
		return false, nil
	case err != nil:
		return false, err
	}
	return t.Role == tokens.Operator, nil
}

// HarnessRegistry is where the hooks of a store record their harnesses
// (beside an SQLite store; in the state directory for PostgreSQL).
func HarnessRegistry(storePath string) string {
	if store.IsPostgresURL(storePath) {
		p, err := store.ResolvePath("", func(k string) string {
			if k == store.EnvStore {
				return ""
			}
			return os.Getenv(k)
		})
		if err != nil {
			return ""
		}
		storePath = p
	}
	return person.RegistryDir(filepath.Dir(storePath))
}
