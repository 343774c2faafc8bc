// Command reference is the lean reference server of the benchmark: plain
// net/http and database/sql, no framework, serving the four measured REST
// routes on the product's database with the work the contract requires per
// request (HS256 token check including the key's revocation state, the
// success envelope with a request id, one access-log line, the outbox event
// in the transaction of each write). `make bench` prints every figure of the
// product as a ratio to this server, measured in the same run, so a noisy
// machine cannot fake progress.
//
// It is a yardstick, not a second implementation: it answers only what the
// benchmark sends, and any other input gets a plain error envelope.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "address to listen on")
	dbURL := flag.String("database-url", "", "the product's database: sqlite:PATH or postgres://…")
	flag.Parse()
	secret := os.Getenv("JWT_SECRET")
	if *dbURL == "" || len(secret) < 32 {
		fmt.Fprintln(os.Stderr, "reference: want -database-url and JWT_SECRET (32+ bytes, the server's)")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr, *dbURL, []byte(secret)); err != nil {
		fmt.Fprintln(os.Stderr, "reference:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, addr, dbURL string, secret []byte) error {
	st, err := openStore(dbURL)
	if err != nil {
		return err
	}
	defer st.db.Close()
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	srv := &http.Server{
		Handler:           newServer(st, secret, log).routes(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	log.Info("listening", "addr", ln.Addr().String(), "dialect", st.dialect)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
