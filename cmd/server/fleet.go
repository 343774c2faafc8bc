package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/database"
)

// healthcheckCmd asks the server at ADDR (on this host) for /healthz and
// succeeds when it answers 200 within -timeout: the image's HEALTHCHECK,
// which has no shell or curl to run.
func healthcheckCmd(ctx context.Context, args []string, stderr io.Writer) error {
	var timeout time.Duration
	cfg, _, err := loadConfig("healthcheck", args, stderr, func(fs *flag.FlagSet) {
		fs.DurationVar(&timeout, "timeout", 3*time.Second, "how long to wait for the answer")
	})
	if err != nil {
		return err
	}
	url := healthURL(cfg.Addr, cfg.TLSCertFile != "")
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{
		// The server's own certificate names its public host, not
		// loopback: what is checked here is that it answers.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback, liveness only
	}}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s", url, resp.Status)
	}
	return nil
}

// healthURL is /healthz of the server listening on addr, reached over
// loopback when addr names every interface.
func healthURL(addr string, tlsOn bool) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = "", "8080"
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	scheme := "http"
	if tlsOn {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(host, port) + "/healthz"
}

// backupCmd writes a consistent copy of the SQLite database to PATH while
// servers keep serving, and the key file beside it (PATH.key).
func backupCmd(ctx context.Context, args []string, stderr io.Writer) error {
	cfg, fs, err := loadConfig("backup", args, stderr, nil)
	if err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("backup: want exactly one PATH to write the copy to")
	}
	dest := fs.Arg(0)
	if err := database.Backup(ctx, cfg.DatabaseURL, dest); err != nil {
		return err
	}
	msg := fmt.Sprintf("backed up the database to %s", dest)
	if key := app.KeyFile(cfg.DatabaseURL); key != "" && cfg.SecretKey == "" {
		if _, err := os.Stat(key); err == nil {
			if err := database.CopyFile(key, dest+".key", 0o600); err != nil {
				return fmt.Errorf("backup: copy the key file: %w", err)
			}
			msg += fmt.Sprintf(" and its key file to %s.key (keep both: webhook secrets do not open without it)", dest)
		}
	}
	fmt.Fprintln(stderr, msg)
	return nil
}

// restoreCmd puts a backup back in place of the SQLite database (and its
// key file, when the backup has one), refused while a server has the
// database open.
func restoreCmd(ctx context.Context, args []string, stderr io.Writer) error {
	cfg, fs, err := loadConfig("restore", args, stderr, nil)
	if err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("restore: want exactly one PATH, a copy made by server backup")
	}
	src := fs.Arg(0)
	if err := database.Restore(ctx, cfg.DatabaseURL, src); err != nil {
		return err
	}
	msg := fmt.Sprintf("restored the database from %s", src)
	if key := app.KeyFile(cfg.DatabaseURL); key != "" {
		if _, err := os.Stat(src + ".key"); err == nil {
			if err := database.CopyFile(src+".key", key, 0o600); err != nil {
				return fmt.Errorf("restore: copy the key file: %w", err)
			}
			msg += fmt.Sprintf(" and its key file to %s", key)
		}
	}
	fmt.Fprintln(stderr, msg)
	return nil
}
