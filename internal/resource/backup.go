package resource

import (
	"net/url"
	"time"
)

// Backup is a backup of the SQLite database in the backup folder, as REST
// renders it (GET /v1/backups) and GraphQL's Backup reads it.
type Backup struct {
	// Name is the backup's file name in the folder, never a path.
	Name string `json:"name"`
	// Size is the file's size in bytes.
	Size      int64     `json:"size"`
	CreatedAt time.Time `json:"created_at"`
	// DownloadPath is where the file is downloaded from, with the same
	// token (HTTP only: GraphQL carries no files).
	DownloadPath string `json:"download_path"`
}

// NewBackup renders the backup file name of size bytes made at createdAt
// (service.Backup's fields: the service renders through this package).
func NewBackup(name string, size int64, createdAt time.Time) Backup {
	return Backup{
		Name:         name,
		Size:         size,
		CreatedAt:    createdAt.UTC(),
		DownloadPath: "/v1/backups/" + url.PathEscape(name) + "/download",
	}
}
