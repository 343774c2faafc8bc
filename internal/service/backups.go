package service

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/database"
)

// BackupOptions place the backups admins make through the API (DESIGN §9's
// `server backup`, in the browser): the zero value refuses them.
type BackupOptions struct {
	// DatabaseURL is the database to copy (DATABASE_URL). On PostgreSQL
	// (Options.Dialect) every backup operation is NOT_SUPPORTED: pg_dump
	// makes its backups.
	DatabaseURL string
	// Dir is the folder the backups are written to and listed from
	// (BACKUP_DIR, resolved); empty (an in-memory database) refuses them.
	Dir string
	// Keep is how many of the backups the API made are kept (BACKUP_KEEP);
	// 0 keeps them all. Other files in Dir are never removed.
	Keep int
	// KeyFile, when set, is the server's key file (no SECRET_KEY), copied
	// beside each backup as `server backup` does: webhook secrets do not
	// open without it. It is never listed or downloaded.
	KeyFile string
}

// Backup is one backup in the folder: a file name, never a path.
type Backup struct {
	Name      string
	Size      int64
	CreatedAt time.Time
}

// backupNames are the names the API gives its backups; only these are
// pruned by BACKUP_KEEP, so a nightly `server backup` into the same folder
// is listed but never removed. The time is UTC to the millisecond, so that
// names sort as they were made.
const backupTimeFormat = "20060102T150405.000Z"

var backupNames = regexp.MustCompile(`^backup-\d{8}T\d{6}\.\d{3}Z\.db$`)

// validBackupName reports what a backup's name may be: a plain file name
// ending in .db, with no separator and no leading dot, so that it cannot
// name anything outside the folder (nor a hidden file, a temporary copy
// being written, or a key file); at most 199 bytes. Opening goes through
// os.Root besides, which refuses a symbolic link out of the folder.
//
// It is the regular expression ^[A-Za-z0-9][A-Za-z0-9._-]{0,195}\.db$
// written out: compiled at every start, its 196 optional characters made
// a large program for a check rarely made (docs/development.md, "Idle
// footprint"); TestBackupNameIsItsPattern holds the two equal.
func validBackupName(name string) bool {
	stem, ok := strings.CutSuffix(name, ".db")
	if !ok || stem == "" || len(stem) > 196 || !isAlnum(stem[0]) {
		return false
	}
	for i := 1; i < len(stem); i++ {
		if c := stem[i]; !isAlnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// checkBackupName refuses, naming name, a name that cannot be a backup in
// the folder.
func checkBackupName(name string) error {
	if !validBackupName(name) {
		return apperr.Validation("name", "must be the file name of a backup (letters, digits, '.', '_' and '-', ending in .db)")
	}
	return nil
}

// requireBackups checks that the caller is an admin and that backups can
// be made here: an SQLite file. PostgreSQL's are pg_dump's, which copies a
// database consistently while it serves, as VACUUM INTO does SQLite's.
func (s *Service) requireBackups(ctx context.Context) error {
	v, err := requireViewer(ctx)
	if err != nil {
		return err
	}
	if !v.Admin() {
		return apperr.PermissionDenied("only admins may make, list or download backups")
	}
	var e *apperr.Error
	switch {
	case s.opts.Dialect == "postgres":
		e = apperr.New(apperr.CodeNotSupported, "this server's database is PostgreSQL: back it up with pg_dump "+
			"(and restore with pg_restore); backups through the API copy the embedded SQLite database only")
		e.Details["reason"] = "postgres"
	case s.opts.Backups.Dir == "":
		e = apperr.New(apperr.CodeNotSupported, "this server's database is in memory: there is nothing to back up")
		e.Details["reason"] = "memory"
	default:
		return nil
	}
	return e
}

// CreateBackup writes a consistent copy of the database into the backup
// folder while the server keeps serving (database.Backup, as `server
// backup`), with the key file beside it, then removes the oldest backups
// the API made past BACKUP_KEEP. It records backup.created, and
// backup.deleted for each one removed. Admins only.
//
// The copy is not bound by the request's deadline (REQUEST_TIMEOUT): a
// large database takes longer, and a copy cut short is worth nothing. Once
// started it runs to its end even when the client has gone; the list shows
// it then.
func (s *Service) CreateBackup(ctx context.Context) (Backup, error) {
	if err := s.requireBackups(ctx); err != nil {
		return Backup{}, err
	}
	ctx = context.WithoutCancel(ctx)
	// One backup at a time: each is a full copy of the database, and the
	// next one's name is taken once the last is in place.
	s.backupMu.Lock()
	defer s.backupMu.Unlock()
	o := s.opts.Backups
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return Backup{}, fmt.Errorf("backup: create the backup folder: %w", err)
	}
	name, dest := "", ""
	for t := time.Now().UTC(); ; t = t.Add(time.Millisecond) { // a name never taken
		name = "backup-" + t.Format(backupTimeFormat) + ".db"
		dest = filepath.Join(o.Dir, name)
		if _, err := os.Lstat(dest); errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	if err := database.Backup(ctx, o.DatabaseURL, dest); err != nil {
		return Backup{}, err
	}
	if o.KeyFile != "" {
		if _, err := os.Stat(o.KeyFile); err == nil {
			if err := database.CopyFile(o.KeyFile, dest+".key", 0o600); err != nil {
				removeBackup(dest)
				return Backup{}, fmt.Errorf("backup: copy the key file: %w", err)
			}
		}
	}
	b, err := statBackup(o.Dir, name)
	if err != nil {
		removeBackup(dest)
		return Backup{}, err
	}
	prune, err := s.prunable(name)
	if err != nil {
		removeBackup(dest)
		return Backup{}, err
	}
	err = s.withTx(ctx, func(tx *ent.Tx) error {
		if err := s.recordAudit(ctx, tx, AuditBackupCreated, name, map[string]Change{
			"name": {After: name},
			"size": {After: b.Size},
		}); err != nil {
			return err
		}
		for _, old := range prune {
			if err := s.recordAudit(ctx, tx, AuditBackupDeleted, old, map[string]Change{
				"name": {Before: old},
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		// A backup no record speaks of is not left behind.
		removeBackup(dest)
		return Backup{}, err
	}
	for _, old := range prune {
		removeBackup(filepath.Join(o.Dir, old))
	}
	return b, nil
}

// prunable are the backups the API made that BACKUP_KEEP removes once the
// backup named newest is in place: the oldest past the newest Keep.
func (s *Service) prunable(newest string) ([]string, error) {
	keep := s.opts.Backups.Keep
	if keep <= 0 {
		return nil, nil
	}
	entries, err := os.ReadDir(s.opts.Backups.Dir)
	if err != nil {
		return nil, fmt.Errorf("backup: read the backup folder: %w", err)
	}
	var ours []string
	for _, e := range entries {
		if e.Type().IsRegular() && backupNames.MatchString(e.Name()) && e.Name() <= newest {
			ours = append(ours, e.Name())
		}
	}
	slices.Sort(ours)
	slices.Reverse(ours)
	if len(ours) <= keep {
		return nil, nil
	}
	return ours[keep:], nil
}

// removeBackup removes a backup and its key file; what is already gone is
// no error, and what cannot be removed is left for the operator.
func removeBackup(path string) {
	_ = os.Remove(path)
	_ = os.Remove(path + ".key")
}

// ListBackups lists the backups in the folder, newest first: the API's
// and any other SQLite copy put there (`server backup` into BACKUP_DIR).
// Admins only. A folder not yet made holds none.
func (s *Service) ListBackups(ctx context.Context) ([]Backup, error) {
	if err := s.requireBackups(ctx); err != nil {
		return nil, err
	}
	dir := s.opts.Backups.Dir
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []Backup{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("backup: read the backup folder: %w", err)
	}
	out := []Backup{}
	for _, e := range entries {
		if !e.Type().IsRegular() || !validBackupName(e.Name()) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, Backup{Name: e.Name(), Size: info.Size(), CreatedAt: info.ModTime().UTC()})
	}
	slices.SortFunc(out, func(a, b Backup) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.Name, a.Name)
	})
	return out, nil
}

// GetBackup describes one backup of the folder. Admins only; a name that
// cannot be a backup is VALIDATION_ERROR naming name, one that is not in
// the folder NOT_FOUND.
func (s *Service) GetBackup(ctx context.Context, name string) (Backup, error) {
	if err := s.requireBackups(ctx); err != nil {
		return Backup{}, err
	}
	if err := checkBackupName(name); err != nil {
		return Backup{}, err
	}
	return statBackup(s.opts.Backups.Dir, name)
}

// OpenBackup opens one backup of the folder for its download and records
// backup.downloaded: a download carries every user's data. The caller
// closes the file. Admins only; names as GetBackup.
func (s *Service) OpenBackup(ctx context.Context, name string) (*os.File, Backup, error) {
	if err := s.requireBackups(ctx); err != nil {
		return nil, Backup{}, err
	}
	if err := checkBackupName(name); err != nil {
		return nil, Backup{}, err
	}
	f, b, err := openBackup(s.opts.Backups.Dir, name)
	if err != nil {
		return nil, Backup{}, err
	}
	err = s.withTx(ctx, func(tx *ent.Tx) error {
		return s.recordAudit(ctx, tx, AuditBackupDownloaded, name, nil)
	})
	if err != nil {
		f.Close()
		return nil, Backup{}, err
	}
	return f, b, nil
}

// statBackup describes the backup name in dir.
func statBackup(dir, name string) (Backup, error) {
	f, b, err := openBackup(dir, name)
	if err != nil {
		return Backup{}, err
	}
	f.Close()
	return b, nil
}

// openBackup opens the regular file name inside dir, through os.Root: a
// name, or a symbolic link, that leads out of dir is refused however it is
// spelled. What is not there, or is not a regular file, is NOT_FOUND.
func openBackup(dir, name string) (*os.File, Backup, error) {
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Backup{}, apperr.NotFound("backup")
	}
	if err != nil {
		return nil, Backup{}, fmt.Errorf("backup: open the backup folder: %w", err)
	}
	defer root.Close()
	info, err := root.Lstat(name)
	if err != nil || !info.Mode().IsRegular() {
		return nil, Backup{}, apperr.NotFound("backup")
	}
	f, err := root.Open(name)
	if err != nil {
		return nil, Backup{}, apperr.NotFound("backup")
	}
	return f, Backup{Name: name, Size: info.Size(), CreatedAt: info.ModTime().UTC()}, nil
}
