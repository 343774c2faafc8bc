//go:build unix

package database

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// A process that has an SQLite file open (a server, a CLI command) holds a
// shared flock on it until it closes the database; Restore takes it
// exclusively, and so is refused while anyone has the file open. flock
// locks are apart from the POSIX locks SQLite itself takes, so the two
// never meet.

// lockShared holds a shared lock on path until the returned file is closed.
// It fails at once when a restore holds the file.
func lockShared(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s is being restored (server restore); start again when it is done", path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}

// lockExclusive takes path for a restore, or fails with ErrInUse; a
// missing file is created empty (it is replaced anyway).
func lockExclusive(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrInUse
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}
