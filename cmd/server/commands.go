package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"

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
	a, err := app.New(ctx, cfg, newLogger(stderr, slog.LevelWarn), app.Options{})
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

// webhooksCmd lists the webhook endpoints whose stored signing secret does
// not open with this server's SECRET_KEY, one a line on stdout: id, owner's
// email, URL. Each needs its secret rotated (or the previous SECRET_KEY
// restored); the start of the server logs how many there are.
func webhooksCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "unopenable" {
		return errors.New("webhooks: want \"webhooks unopenable\"")
	}
	cfg, _, err := loadConfig("webhooks unopenable", args[1:], stderr, nil)
	if err != nil {
		return err
	}
	// Quiet: the start's own report of the same endpoints is not repeated.
	a, err := app.New(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Options{})
	if err != nil {
		return err
	}
	defer a.Close()
	found, err := a.Service.UnopenableWebhookSecrets(ctx, math.MaxInt32)
	if err != nil {
		return err
	}
	for _, ep := range found.First {
		owner := ep.UserID
		if ep.Edges.Owner != nil {
			owner = ep.Edges.Owner.Email
		}
		fmt.Fprintf(stdout, "%s\t%s\t%s\n", ep.ID, owner, ep.URL)
	}
	fmt.Fprintf(stderr, "%d of %d webhook endpoints have a secret this SECRET_KEY cannot open; "+
		"rotate each (POST /v1/webhooks/{id}/rotate-secret) or restore the previous SECRET_KEY\n", found.Count, found.Total)
	return nil
}
