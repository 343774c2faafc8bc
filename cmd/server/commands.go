package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/database"
)

// migrateCmd applies pending migrations and exits.
func migrateCmd(ctx context.Context, args []string, stderr io.Writer) error {
	cfg, _, err := loadConfig("migrate", args, stderr, nil)
	if err != nil {
		return err
	}
	db, err := database.OpenWith(ctx, cfg.DatabaseURL, cfg.DatabaseMaxConns)
	if err != nil {
		return err
	}
	defer db.Close()
	n, err := db.Migrate(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "applied %d migration(s) to the %s database\n", n, db.Dialect)
	return nil
}

// keysCmd creates and revokes API keys.
func keysCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("keys: want \"keys create\" or \"keys revoke\"")
	}
	sub, args := args[0], args[1:]
	var email, name string
	var admin bool
	extra := func(fs *flag.FlagSet) {
		if sub == "create" {
			fs.StringVar(&email, "email", "", "email of the key's user (created if new)")
			fs.StringVar(&name, "name", "", "name of the user, when new")
			fs.BoolVar(&admin, "admin", false, "make the user an admin")
		}
	}
	cfg, fs, err := loadConfig("keys "+sub, args, stderr, extra)
	if err != nil {
		return err
	}
	// Quiet: the command's output is the key or the id, nothing else.
	a, err := app.New(ctx, cfg, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})), app.Options{})
	if err != nil {
		return err
	}
	defer a.Close()
	switch sub {
	case "create":
		if email == "" {
			return errors.New("keys create: --email is required")
		}
		k, err := a.Service.CreateKey(ctx, email, name, admin)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, k.Key)
		fmt.Fprintf(stderr, "created %s for %s (%s)\n", k.KeyID, email, k.UserID)
		return nil
	case "revoke":
		if fs.NArg() != 1 {
			return errors.New("keys revoke: want exactly one key id (key_…) or key")
		}
		id, err := a.Service.RevokeKey(ctx, fs.Arg(0))
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "revoked %s\n", id)
		return nil
	default:
		return fmt.Errorf("keys: unknown subcommand %q", sub)
	}
}
