// Package matrix holds the cross-harness decision matrix: one workflow and
// one script of tool calls, each spelled the way each harness spells it,
// decided through each harness's adapter and the shared runtime. Its test
// asserts that every harness gets the same decision for the same call, and
// renders how each harness carries that decision out (blocked before the
// tool runs, rendered differently, or advisory) into a golden table that
// the README shows.
package matrix
