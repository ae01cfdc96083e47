package cmdutil

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/statewright-go/statewright/runtime"
	"github.com/statewright-go/statewright/store"
	"github.com/statewright-go/statewright/workflow"
)

// Shell completion (cobra's ValidArgsFunction): workflow names, sessions
// and events. Completion never creates a store and prints nothing on
// stderr; any failure completes nothing.

// CompleteWorkflows completes a workflow argument: the bundled templates,
// then files.
func CompleteWorkflows(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return prefixed(workflow.TemplateNames(), toComplete), cobra.ShellCompDirectiveDefault
}

// CompleteSessions completes a SESSION argument (the first) with the
// sessions of the store's runs, live ones first.
func CompleteSessions(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return prefixed(sessions(cmd), toComplete), cobra.ShellCompDirectiveNoFileComp
}

// CompleteSessionEvent completes `transition SESSION EVENT`: sessions
// first, then the events of that session's current state.
func CompleteSessionEvent(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	switch len(args) {
	case 0:
		return CompleteSessions(cmd, args, toComplete)
	case 1:
		var out []string
		withStore(cmd, func(ctx context.Context, st store.Store) {
			key, err := SessionArg(cmd, args[0])
			if err != nil {
				return
			}
			v, err := runtime.New(st, runtime.Options{}).Status(ctx, key)
			if err != nil {
				return
			}
			for _, e := range v.NextEvents {
				out = append(out, e.Event+"\t→ "+e.Target)
			}
		})
		return prefixed(out, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// sessions lists the session keys of the store's runs, live ones first,
// each once.
func sessions(cmd *cobra.Command) []string {
	var out []string
	withStore(cmd, func(ctx context.Context, st store.Store) {
		seen := map[string]bool{}
		for _, live := range []bool{true, false} {
			runs, err := st.Runs(ctx, store.RunFilter{LiveOnly: live, Limit: 200})
			if err != nil {
				return
			}
			for _, r := range runs {
				if !seen[r.SessionKey] {
					seen[r.SessionKey] = true
					out = append(out, r.SessionKey)
				}
			}
		}
	})
	return out
}

// withStore runs fn with the store cmd would use, when it exists.
func withStore(cmd *cobra.Command, fn func(context.Context, store.Store)) {
	var flag string
	if f := cmd.Flag(StoreFlag); f != nil {
		flag = f.Value.String()
	}
	loc, _, err := resolveStore(flag)
	if err != nil {
		return
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	st, err := store.Open(ctx, loc, store.Options{MustExist: true})
	if err != nil {
		return
	}
	defer st.Close()
	fn(ctx, st)
}

// prefixed keeps the candidates that start with prefix (before any tab
// and its description).
func prefixed(cands []string, prefix string) []string {
	var out []string
	for _, c := range cands {
		name, _, _ := strings.Cut(c, "\t")
		if strings.HasPrefix(name, prefix) {
			out = append(out, c)
		}
	}
	return out
}
