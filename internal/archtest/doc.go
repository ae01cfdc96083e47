// Package archtest holds the test that keeps the house standing: the
// packages of statewright in tiers (docs/architecture.md), and no import
// that runs from a lower tier to a higher one, or from one harness adapter
// to another.
package archtest
