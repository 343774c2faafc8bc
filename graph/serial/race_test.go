//go:build race

package serial

// raceEnabled: the race detector drops what sync.Pool holds at random, so
// that counting allocations measures nothing.
const raceEnabled = true
