package logging

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"

	"github.com/redis/go-redis/v9"
)

// New returns the server's logger: one JSON object a line on w, from level
// up, every secret redacted (Redacting).
func New(w io.Writer, level slog.Leveler) *slog.Logger {
	return slog.New(Redacting(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})))
}

// Install makes l the process's only way to the log: the default slog
// logger, which the standard library's log package then writes through
// (as gqlgen's transports and the metrics library do), and the Redis
// client's logger, which otherwise writes to os.Stderr itself. What they
// print becomes the message of a JSON line, escaped and redacted, so that
// no text a client sent can forge a line or show a secret. main calls it
// once: these are the process's globals.
func Install(l *slog.Logger) {
	slog.SetDefault(l)
	// A library that logs through the standard logger reports a problem
	// (a refused WebSocket handshake, a failed metrics probe): a warning.
	slog.SetLogLoggerLevel(slog.LevelWarn)
	redis.SetLogger(redisLogger{l})
}

// ErrorLog is the *log.Logger of net/http's server errors (http.Server's
// ErrorLog: TLS handshakes, broken connections), writing through l.
func ErrorLog(l *slog.Logger) *log.Logger {
	return slog.NewLogLogger(l.Handler(), slog.LevelWarn)
}

// redisLogger is the Redis client's logger (connection pool notices).
type redisLogger struct{ l *slog.Logger }

// Printf implements go-redis's internal.Logging.
func (r redisLogger) Printf(ctx context.Context, format string, v ...any) {
	r.l.WarnContext(ctx, fmt.Sprintf(format, v...), "component", "redis")
}
