//go:build !unix

package database

import (
	"errors"
	"os"
)

// Without flock, a running server cannot be told from none: restore is
// refused outright rather than risk replacing a file in use.

func lockShared(string) (*os.File, error) { return nil, nil }

func lockExclusive(string) (func(), error) {
	return nil, errors.New("restore needs flock (Linux, macOS, BSD); copy the file by hand with every server stopped")
}
