// Command server runs the items API and its operator commands:
//
//	server [serve]                          run the HTTP server (default)
//	server migrate                          apply database migrations and exit
//	server keys create --email E --name N [--admin]
//	server keys revoke KEY_ID|KEY
//	server keys list [--email E]
//	server users list [--role R] [--disabled B] [--email PREFIX]
//	server users create --email E --name N [--role user|admin]
//	server users set-role USER ROLE
//	server users disable|enable USER
//	server webhooks unopenable              list endpoints whose secret SECRET_KEY cannot open
//	server healthcheck                      exit 0 when /healthz of ADDR answers
//	server backup PATH                      copy the SQLite database while it serves
//	server restore PATH                     put a copy back (no server running)
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
  keys list            list API keys (--email E: one user's): id, user, prefix,
                       state, scopes, created, last used, label
  users list           list users (--role, --disabled, --email prefix)
  users create         create a user (--email, --name, --role); prints its id
  users set-role USER ROLE
                       make a user (id or email) a user or an admin
  users disable USER   disable a user: their keys stop logging in and their
                       tokens stop within seconds; their items stay
  users enable USER    enable a disabled user again
                       (the last enabled admin can be neither demoted nor
                       disabled)
  webhooks unopenable  list the webhook endpoints whose stored secret does not
                       open with this SECRET_KEY (id, owner, URL), to rotate
  healthcheck          exit 0 when /healthz of the server at ADDR answers 200
                       (the container's HEALTHCHECK), 1 otherwise
  backup PATH          write a consistent copy of the SQLite database to PATH
                       while it serves, and its key file to PATH.key
                       (PostgreSQL: use pg_dump)
  restore PATH         put a copy made by backup back in place (and its key
                       file); refused while a server has the database open
                       (PostgreSQL: use pg_restore)

Run "server <command> -h" (or "server help <command>") for a command's
arguments and flags, "server serve -h" for every setting: each is a flag of
every command and an environment variable.
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
	// server -h lists the commands; server serve -h the settings.
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprint(stdout, usage)
		return nil
	}
	cmd := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	if c, ok := commands[cmd]; ok {
		return c(ctx, args, stdout, stderr)
	}
	if cmd == "help" {
		if len(args) > 0 { // server help backup: server backup -h
			return run(ctx, append(args, "-h"), stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", cmd)
}

// command runs one command line; stdout receives only its result.
type command func(ctx context.Context, args []string, stdout, stderr io.Writer) error

// commands are the binary's commands by name (the usage above lists them;
// the Kubernetes manifests' test checks theirs against this map).
var commands = map[string]command{
	"serve": func(ctx context.Context, args []string, _, stderr io.Writer) error { return serve(ctx, args, stderr) },
	"migrate": func(ctx context.Context, args []string, _, stderr io.Writer) error {
		return migrateCmd(ctx, args, stderr)
	},
	"keys":     keysCmd,
	"users":    usersCmd,
	"webhooks": webhooksCmd,
	"healthcheck": func(ctx context.Context, args []string, _, stderr io.Writer) error {
		return healthcheckCmd(ctx, args, stderr)
	},
	"backup": func(ctx context.Context, args []string, _, stderr io.Writer) error {
		return backupCmd(ctx, args, stderr)
	},
	"restore": func(ctx context.Context, args []string, _, stderr io.Writer) error {
		return restoreCmd(ctx, args, stderr)
	},
}

// loadConfig parses a command's flags (the shared settings plus extra) and
// resolves environment variables.
func loadConfig(name string, args []string, stderr io.Writer, extra func(*flag.FlagSet)) (config.Config, *flag.FlagSet, error) {
	var cfg config.Config
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	loader := cfg.Register(fs)
	shared := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { shared[f.Name] = true })
	if extra != nil {
		extra(fs)
	}
	// -h answers with the command's synopsis, arguments and own flags;
	// serve's lists every setting, which the others point to.
	fs.Usage = func() {
		if name == "serve" {
			h, _ := helpOf(name)
			fmt.Fprintf(stderr, "Usage: server %s\n\n%s\n\nSettings, each a flag or the environment variable it names:\n", h.synopsis, h.about)
			fs.PrintDefaults()
			return
		}
		own := flag.NewFlagSet(name, flag.ContinueOnError)
		fs.VisitAll(func(f *flag.Flag) {
			if !shared[f.Name] {
				own.Var(f.Value, f.Name, f.Usage)
			}
		})
		printCommandHelp(stderr, name, own)
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
