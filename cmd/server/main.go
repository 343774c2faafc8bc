// Command server runs the items API and its operator commands:
//
//	server [serve]                          run the HTTP server (default)
//	server migrate                          apply database migrations and exit
//	server keys create --email E --name N [--admin]
//	server keys revoke KEY_ID|KEY
//	server webhooks unopenable              list endpoints whose secret SECRET_KEY cannot open
//
// Every setting is a flag and an environment variable; `server serve -h`
// lists them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/logging"
)

const usage = `Usage: server <command> [flags]

Commands:
  serve                run the HTTP API (the default)
  migrate              apply pending database migrations and exit
  keys create          create an API key (and its user if new); prints only the key
  keys revoke ID|KEY   revoke an API key; its tokens stop working within seconds
  webhooks unopenable  list the webhook endpoints whose stored secret does not
                       open with this SECRET_KEY (id, owner, URL), to rotate

Run "server <command> -h" for the flags of a command. Every flag can also be
set by the environment variable named in its help.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case err != nil:
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

// run dispatches a command line; stdout receives only a command's result.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, stderr)
	case "migrate":
		return migrateCmd(ctx, args, stderr)
	case "keys":
		return keysCmd(ctx, args, stdout, stderr)
	case "webhooks":
		return webhooksCmd(ctx, args, stdout, stderr)
	case "help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown command %q", cmd)
	}
}

// loadConfig parses a command's flags (the shared settings plus extra) and
// resolves environment variables.
func loadConfig(name string, args []string, stderr io.Writer, extra func(*flag.FlagSet)) (config.Config, *flag.FlagSet, error) {
	var cfg config.Config
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	loader := cfg.Register(fs)
	if extra != nil {
		extra(fs)
	}
	if err := fs.Parse(args); err != nil {
		return cfg, fs, err
	}
	if err := loader.Resolve(os.LookupEnv); err != nil {
		return cfg, fs, fmt.Errorf("configuration:\n%w", err)
	}
	return cfg, fs, nil
}

// newLogger writes JSON lines at the configured level, secrets redacted
// (internal/logging).
func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	return logging.New(w, level)
}
