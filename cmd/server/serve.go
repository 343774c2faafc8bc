package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/logging"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/tracing"
)

// serve runs the API until ctx is cancelled (SIGINT, SIGTERM), then stops
// accepting, lets in-flight requests finish within the shutdown timeout and
// closes the database.
func serve(ctx context.Context, args []string, stderr io.Writer) error {
	return serveWith(ctx, args, stderr, serveHooks{})
}

// serveHooks let a test watch and extend a running server; the binary uses
// none.
type serveHooks struct {
	// listening receives the address once the listener is open.
	listening func(addr string)
	// wrap wraps the API's handler.
	wrap func(http.Handler) http.Handler
}

func serveWith(ctx context.Context, args []string, stderr io.Writer, hooks serveHooks) error {
	cfg, _, err := loadConfig("serve", args, stderr, nil)
	if err != nil {
		return err
	}
	log := newLogger(stderr, cfg.LogLevel)
	// Traces (DESIGN §9): only when the OTEL_* variables ask for them;
	// off, tr is nil and nothing of tracing is installed.
	tr, err := tracing.FromEnv(ctx)
	if err != nil {
		return fmt.Errorf("configuration:\n%w", err)
	}
	if tr != nil {
		log = slog.New(tracing.LogHandler(log.Handler()))
		tracing.Install(tr, log)
		defer flushTraces(tr, log)
	}
	// Every library's log (the standard logger's, Redis's) goes through
	// it: JSON lines, redacted.
	logging.Install(log)
	a, err := app.New(ctx, cfg, log, app.Options{Tracing: tr})
	if err != nil {
		return err
	}
	defer a.Close()

	if a.Sandbox != nil {
		if err := printSandboxKeys(ctx, a, stderr); err != nil {
			return err
		}
	}
	first, err := firstAdmin(cfg.BootstrapAdminEmail, cfg.BootstrapAdminKeyFile)
	if err != nil {
		return err
	}
	key, created, err := a.Service.Bootstrap(ctx, first)
	switch {
	case err != nil:
		return err
	case created && key != "":
		fmt.Fprintf(stderr, "\nFirst start: created the admin user admin@localhost with this API key.\n"+
			"It is shown only now; keep it safe:\n\n    %s\n\n", key)
	case created:
		fmt.Fprintf(stderr, "First start: created the admin user %s with the API key of BOOTSTRAP_ADMIN_KEY_FILE.\n", first.Email)
	default:
		// The first start's key is shown once; say how to get another.
		log.Info("first start: the database was already set up (users exist), so no API key is shown; make one with `server keys create --email you@example.com --name You --admin` (from the source tree: go run ./cmd/server keys create …)")
	}

	a.Start(ctx)

	handler := a.Handler
	if hooks.wrap != nil {
		handler = hooks.wrap(handler)
	}
	srv := &http.Server{
		Addr:              cfg.Addr,
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          logging.ErrorLog(log),
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	tlsOn := cfg.TLSCertFile != ""
	if tlsOn {
		// Go's defaults otherwise: modern cipher suites only, and HTTP/2,
		// which ServeTLS offers because NextProtos is left unset.
		srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	log.Info("listening", "addr", ln.Addr().String(), "tls", tlsOn, "database", a.DB.Dialect, "sandbox", cfg.Sandbox)
	if !tlsOn {
		log.Info("serving plain HTTP: use TLS_CERT_FILE and TLS_KEY_FILE, or a TLS-terminating proxy, in production")
	}
	if hooks.listening != nil {
		hooks.listening(ln.Addr().String())
	}

	errc := make(chan error, 1)
	go func() {
		if tlsOn {
			errc <- srv.ServeTLS(ln, cfg.TLSCertFile, cfg.TLSKeyFile)
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down", "timeout", cfg.ShutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := errors.Join(srv.Shutdown(sctx), a.Streams.Shutdown(sctx)); err != nil {
		_ = srv.Close() // cut what did not finish in time
		return fmt.Errorf("shutdown: requests still running after %s: %w", cfg.ShutdownTimeout, err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}

// firstAdmin reads the declared first admin (BOOTSTRAP_ADMIN_EMAIL and the
// key in BOOTSTRAP_ADMIN_KEY_FILE, surrounding space trimmed); none declared
// is the zero FirstAdmin.
func firstAdmin(email, keyFile string) (service.FirstAdmin, error) {
	if email == "" {
		return service.FirstAdmin{}, nil
	}
	key, err := os.ReadFile(keyFile)
	if err != nil {
		return service.FirstAdmin{}, fmt.Errorf("BOOTSTRAP_ADMIN_KEY_FILE: %w", err)
	}
	return service.FirstAdmin{Email: email, Key: strings.TrimSpace(string(key))}, nil
}

// flushTraces sends the spans still queued, after the last request and the
// workers have finished.
func flushTraces(tr *tracing.Tracing, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tr.Shutdown(ctx); err != nil {
		log.Warn("traces not all sent", "err", err)
	}
}

// printSandboxKeys seeds the sandbox if needed and prints its demo keys: they
// are the same after every reset, so they are safe to hand out for testing.
func printSandboxKeys(ctx context.Context, a *app.App, w io.Writer) error {
	keys, err := a.Sandbox.Start(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nSandbox: demo data resets every %s; these test keys survive resets:\n\n", a.Config.SandboxResetInterval)
	for _, k := range keys {
		role := "user"
		if k.Admin {
			role = "admin"
		}
		fmt.Fprintf(w, "    %-20s %-6s %s\n", k.Email, role, k.Key)
	}
	fmt.Fprintln(w)
	return nil
}
