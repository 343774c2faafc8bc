package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/acme/itemsvc/internal/app"
)

// serve runs the API until ctx is cancelled (SIGINT, SIGTERM), then stops
// accepting, lets in-flight requests finish within the shutdown timeout and
// closes the database.
func serve(ctx context.Context, args []string, stderr io.Writer) error {
	cfg, _, err := loadConfig("serve", args, stderr, nil)
	if err != nil {
		return err
	}
	log := newLogger(stderr, cfg.LogLevel)
	a, err := app.New(ctx, cfg, log, app.Options{})
	if err != nil {
		return err
	}
	defer a.Close()

	key, err := a.Service.Bootstrap(ctx)
	if err != nil {
		return err
	}
	if key != "" {
		fmt.Fprintf(stderr, "\nFirst start: created the admin user admin@localhost with this API key.\n"+
			"It is shown only now; keep it safe:\n\n    %s\n\n", key)
	}

	a.Start(ctx)

	srv := &http.Server{
		Addr:              cfg.Addr,
		Handler:           a.Handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          nil,
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	tlsOn := cfg.TLSCertFile != ""
	if tlsOn {
		srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	log.Info("listening", "addr", ln.Addr().String(), "tls", tlsOn, "database", a.DB.Dialect)
	if !tlsOn {
		log.Info("serving plain HTTP: use TLS_CERT_FILE and TLS_KEY_FILE, or a TLS-terminating proxy, in production")
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
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}
