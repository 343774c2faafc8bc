//go:build !race

package serial

const raceEnabled = false
