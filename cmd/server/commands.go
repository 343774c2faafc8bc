package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/internal/app"
	"github.com/acme/itemsvc/internal/database"
	"github.com/acme/itemsvc/internal/service"
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

// keysCmd creates, lists and revokes API keys.
func keysCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("keys: want \"keys create\", \"keys list\" or \"keys revoke\"")
	}
	sub, args := args[0], args[1:]
	switch {
	case isHelp(sub):
		printGroupHelp(stderr, "keys")
		return flag.ErrHelp
	case sub != "create" && sub != "list" && sub != "revoke":
		return fmt.Errorf("keys: unknown subcommand %q; want \"keys create\", \"keys list\" or \"keys revoke\"", sub)
	}
	var email, name string
	var admin bool
	extra := func(fs *flag.FlagSet) {
		switch sub {
		case "create":
			fs.StringVar(&email, "email", "", "email of the key's user (created if new)")
			fs.StringVar(&name, "name", "", "name of the user, when new")
			fs.BoolVar(&admin, "admin", false, "make the user an admin")
		case "list":
			fs.StringVar(&email, "email", "", "list only the keys of the user with this email")
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
	case "list":
		keys, err := a.Service.FindKeys(service.System(ctx), email)
		if err != nil {
			return err
		}
		now := time.Now()
		for _, k := range keys {
			label := "-" // none, as for an absent time; a label is quoted (it may hold a tab)
			if k.Label != "" {
				label = strconv.Quote(k.Label)
			}
			fmt.Fprintf(stdout, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Edges.Owner.Email, k.Prefix, keyState(k, now),
				strings.Join(k.Scopes, ","), stamp(&k.CreatedAt), stamp(k.LastUsedAt), label)
		}
		fmt.Fprintf(stderr, "%d key(s): id, user, prefix, state, scopes, created, last used, label\n", len(keys))
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
	}
	return nil
}

// webhooksCmd lists the webhook endpoints whose stored signing secret does
// not open with this server's SECRET_KEY, one a line on stdout: id, owner's
// email, URL. Each needs its secret rotated (or the previous SECRET_KEY
// restored); the start of the server logs how many there are.
func webhooksCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && isHelp(args[0]) {
		printGroupHelp(stderr, "webhooks")
		return flag.ErrHelp
	}
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

// keyState is how keys list shows whether a key logs in.
func keyState(k *ent.APIKey, now time.Time) string {
	switch {
	case k.RevokedAt != nil:
		return "revoked"
	case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
		return "expired"
	case k.Edges.Owner != nil && k.Edges.Owner.Disabled:
		return "user-disabled"
	}
	return "active"
}

// stamp is a time as the listings show it: RFC 3339 in UTC, "-" for none.
func stamp(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// usersCmd lists, creates and changes users, as the system: the same rules
// as an admin's API calls (the last enabled admin stays).
func usersCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const want = "users: want \"users list\", \"users create\", \"users set-role\", \"users disable\" or \"users enable\""
	if len(args) == 0 {
		return errors.New(want)
	}
	sub, args := args[0], args[1:]
	var email, name, role, disabled string
	extra := func(fs *flag.FlagSet) {
		switch sub {
		case "list":
			fs.StringVar(&role, "role", "", "list only users of this role (user or admin)")
			fs.StringVar(&disabled, "disabled", "", "list only disabled (true) or enabled (false) users")
			fs.StringVar(&email, "email", "", "list only users whose email starts with this")
		case "create":
			fs.StringVar(&email, "email", "", "email of the new user")
			fs.StringVar(&name, "name", "", "name of the new user")
			fs.StringVar(&role, "role", "user", "role of the new user: user or admin")
		}
	}
	switch {
	case isHelp(sub):
		printGroupHelp(stderr, "users")
		return flag.ErrHelp
	case sub == "list", sub == "create", sub == "set-role", sub == "disable", sub == "enable":
	default:
		return fmt.Errorf("users: unknown subcommand %q; %s", sub, strings.TrimPrefix(want, "users: "))
	}
	cfg, fs, err := loadConfig("users "+sub, args, stderr, extra)
	if err != nil {
		return err
	}
	// Check the arguments before opening the database.
	var f service.UserFilter
	switch sub {
	case "list":
		f = service.UserFilter{Role: role, EmailPrefix: email}
		if disabled != "" {
			d, err := strconv.ParseBool(disabled)
			if err != nil {
				return fmt.Errorf("users list: --disabled must be true or false, not %q", disabled)
			}
			f.Disabled = &d
		}
	case "create":
		if email == "" || name == "" {
			return errors.New("users create: --email and --name are required")
		}
	case "set-role":
		if fs.NArg() != 2 {
			return errors.New("users set-role: want a user (id or email) and a role (user or admin)")
		}
	default:
		if fs.NArg() != 1 {
			return fmt.Errorf("users %s: want exactly one user (id or email)", sub)
		}
	}
	a, err := app.New(ctx, cfg, newLogger(stderr, slog.LevelWarn), app.Options{})
	if err != nil {
		return err
	}
	defer a.Close()
	ctx = service.System(ctx)
	var u *ent.User
	switch sub {
	case "list":
		users, err := a.Service.FindUsers(ctx, f)
		if err != nil {
			return err
		}
		for _, u := range users {
			fmt.Fprintf(stdout, "%s\t%s\t%s\t%s\t%q\n", u.ID, u.Email, u.Role, enabled(u), u.Name)
		}
		fmt.Fprintf(stderr, "%d user(s): id, email, role, state, name\n", len(users))
		return nil
	case "create":
		if u, err = a.Service.CreateUser(ctx, email, name, role); err != nil {
			return err
		}
		fmt.Fprintln(stdout, u.ID)
		fmt.Fprintf(stderr, "created %s (%s, %s); \"server keys create --email %s\" makes its key\n", u.ID, u.Email, u.Role, u.Email)
		return nil
	case "set-role":
		r := fs.Arg(1)
		u, err = a.Service.UpdateUser(ctx, fs.Arg(0), service.UserChanges{Role: &r})
	default:
		d := sub == "disable"
		u, err = a.Service.UpdateUser(ctx, fs.Arg(0), service.UserChanges{Disabled: &d})
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "%s (%s) is now %s, %s\n", u.ID, u.Email, u.Role, enabled(u))
	return nil
}

// enabled is how the listings show a user's disabled flag.
func enabled(u *ent.User) string {
	if u.Disabled {
		return "disabled"
	}
	return "enabled"
}
