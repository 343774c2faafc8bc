package httpapi

import (
	"log/slog"

	"github.com/gin-gonic/gin"
)

// Context keys the router's first middleware sets on every request.
const (
	// RequestIDKey holds the request id (a string).
	RequestIDKey = "request_id"
	// LoggerKey holds the router's *slog.Logger.
	LoggerKey = "logger"
)

// Logger is the request's logger, carrying its request id (made on demand:
// only failures and panics need it).
func Logger(c *gin.Context) *slog.Logger {
	return BaseLogger(c).With("request_id", c.GetString(RequestIDKey))
}

// BaseLogger is the router's logger, without request attributes.
func BaseLogger(c *gin.Context) *slog.Logger {
	if l, ok := c.Get(LoggerKey); ok {
		if l, ok := l.(*slog.Logger); ok {
			return l
		}
	}
	return slog.Default()
}
