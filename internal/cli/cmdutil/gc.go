package cmdutil

import (
	"os"
	rtdebug "runtime/debug"
)

// LongLivedGCPercent is the garbage collector's target in statewright's
// long-lived processes (serve, the MCP server, the local decider) unless
// GOGC is set. A decision leaves tens of KB of short-lived garbage (HTTP
// or JSON-RPC, JSON, the SQLite driver; a proxied MCP call several
// hundred KB, mostly the SDK's message decoders) over a live heap of a
// few MB, so at the
// default (100) the collector took about a tenth of serve's CPU at 50
// sessions (bench/serve.txt); 400 lets the heap grow to 5× the live heap
// instead. The decider's live heap is smaller still, so at 100 it
// collected once every 60 hooks, at 400 once every 600 (BenchmarkHook,
// gc/1k-hooks), which keeps most hooks clear of a collection.
const LongLivedGCPercent = 400

// TuneGC applies LongLivedGCPercent unless the operator set GOGC
// (GOMEMLIMIT bounds the heap either way).
func TuneGC() {
	if os.Getenv("GOGC") == "" {
		rtdebug.SetGCPercent(LongLivedGCPercent)
	}
}
