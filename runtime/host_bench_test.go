package runtime

import "testing"

// BenchmarkDiscoverHost is one discovery in this process's environment
// (its PATH, HOME and working directory): what every hook paid before
// the decider kept the answer.
func BenchmarkDiscoverHost(b *testing.B) {
	dir := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		DiscoverHost(HostOptions{ProjectDir: dir, Store: dir + "/state.db"})
	}
}
