package rest

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/acme/itemsvc/internal/resource"
	"github.com/acme/itemsvc/internal/service"
)

// bindBackups binds the /backups routes: backups of the SQLite database
// for admins, made, listed and downloaded (NOT_SUPPORTED on PostgreSQL).
// Restoring one stays `server restore`, which needs the server stopped.
func bindBackups(g *gin.RouterGroup, svc *service.Service) {
	g.POST("/backups", func(c *gin.Context) {
		b, err := svc.CreateBackup(c.Request.Context())
		if err != nil {
			renderError(c, err)
			return
		}
		c.Header("Location", "/v1/backups/"+url.PathEscape(b.Name))
		renderData(c, http.StatusCreated, newBackup(b))
	})
	g.GET("/backups", func(c *gin.Context) {
		bs, err := svc.ListBackups(c.Request.Context())
		if err != nil {
			renderError(c, err)
			return
		}
		data := make([]resource.Backup, len(bs))
		for i, b := range bs {
			data[i] = newBackup(b)
		}
		renderData(c, http.StatusOK, data)
	})
	g.GET("/backups/:name", func(c *gin.Context) {
		b, err := svc.GetBackup(c.Request.Context(), c.Param("name"))
		if err != nil {
			renderError(c, err)
			return
		}
		renderData(c, http.StatusOK, newBackup(b))
	})
	g.GET("/backups/:name/download", downloadBackup(svc))
}

func newBackup(b service.Backup) resource.Backup {
	return resource.NewBackup(b.Name, b.Size, b.CreatedAt)
}

// downloadBackup answers GET /backups/{name}/download with the file itself
// (application/octet-stream, as an attachment named after it). A backup is
// as large as the database, so the server's write timeout is lifted for
// this response: it ends when the file has been sent or the client leaves.
func downloadBackup(svc *service.Service) gin.HandlerFunc {
	return func(c *gin.Context) {
		f, b, err := svc.OpenBackup(c.Request.Context(), c.Param("name"))
		if err != nil {
			renderError(c, err)
			return
		}
		defer f.Close()
		_ = http.NewResponseController(c.Writer).SetWriteDeadline(time.Time{}) // not every writer has one
		h := c.Writer.Header()
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", b.Name))
		h.Set("Content-Length", strconv.FormatInt(b.Size, 10))
		h.Set("Cache-Control", "no-store")
		c.Status(http.StatusOK)
		if _, err := io.Copy(c.Writer, f); err != nil {
			logger(c).WarnContext(c.Request.Context(), "backup download cut short", "backup", b.Name, "err", err)
		}
	}
}
