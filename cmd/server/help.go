package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// commandHelp is what `server CMD -h` prints for one command: how to call
// it, what it does, what its arguments are. The settings every command
// shares (DATABASE_URL, SECRET_KEY, …) are flags of each, but listing all of
// them would bury the command's own: `server serve -h` lists them.
type commandHelp struct {
	name     string   // the command line: "backup", "keys create"
	synopsis string   // after "server ": the command, its arguments and own flags
	about    string   // what it does, a line or two
	args     []string // each argument: "NAME  meaning"
	settings []string // the settings it reads, named as their variables
}

// helps are the commands' help texts in the order of the usage; a group
// (keys, users, webhooks) lists its subcommands from here.
var helps = []commandHelp{
	{name: "serve", synopsis: "serve [flags]", about: "Run the HTTP API: apply pending migrations (unless MIGRATE_ON_START=false), serve\nuntil SIGINT or SIGTERM, then drain within SHUTDOWN_TIMEOUT."},
	{name: "migrate", synopsis: "migrate", about: "Apply pending database migrations and exit.",
		settings: []string{"DATABASE_URL"}},
	{name: "keys create", synopsis: "keys create --email E [--name N] [--admin]",
		about:    "Create an API key for the user with email E (created, named N, if new).\nPrints only the key on stdout; it is shown only now.",
		settings: []string{"DATABASE_URL", "SECRET_KEY"}},
	{name: "keys revoke", synopsis: "keys revoke KEY_ID|KEY", about: "Revoke an API key: its tokens stop working within seconds.",
		args:     []string{"KEY_ID|KEY  the key's id (key_…) or the key itself (sk_live_…)"},
		settings: []string{"DATABASE_URL"}},
	{name: "keys list", synopsis: "keys list [--email E]",
		about:    "List API keys (or one user's), one a line on stdout.\nColumns: id, user, prefix, state, scopes, created, last used, label.",
		settings: []string{"DATABASE_URL"}},
	{name: "users list", synopsis: "users list [--role R] [--disabled true|false] [--email PREFIX]",
		about:    "List users, oldest first, one a line on stdout: id, email, role, state, name.",
		settings: []string{"DATABASE_URL"}},
	{name: "users create", synopsis: "users create --email E --name N [--role user|admin]",
		about:    "Create a user (no key: `server keys create --email E` makes one); prints its id.",
		settings: []string{"DATABASE_URL"}},
	{name: "users set-role", synopsis: "users set-role USER ROLE", about: "Make a user a user or an admin (the last enabled admin stays one).",
		args:     []string{"USER  the user's id (usr_…) or email", "ROLE  user or admin"},
		settings: []string{"DATABASE_URL"}},
	{name: "users disable", synopsis: "users disable USER", about: "Disable a user: their keys stop logging in and their tokens stop within\nseconds; their items stay. The last enabled admin cannot be disabled.",
		args:     []string{"USER  the user's id (usr_…) or email"},
		settings: []string{"DATABASE_URL"}},
	{name: "users enable", synopsis: "users enable USER", about: "Enable a disabled user again.",
		args:     []string{"USER  the user's id (usr_…) or email"},
		settings: []string{"DATABASE_URL"}},
	{name: "webhooks unopenable", synopsis: "webhooks unopenable",
		about:    "List the webhook endpoints whose stored secret this SECRET_KEY cannot open\n(id, owner, URL), one a line on stdout: rotate each, or restore the old key.",
		settings: []string{"DATABASE_URL", "SECRET_KEY"}},
	{name: "healthcheck", synopsis: "healthcheck [-timeout D]",
		about:    "Exit 0 when /healthz of the server at ADDR (on this host) answers 200, 1\notherwise: the container image's HEALTHCHECK.",
		settings: []string{"ADDR", "TLS_CERT_FILE"}},
	{name: "backup", synopsis: "backup PATH",
		about: "Write a consistent copy of the SQLite database to PATH while servers keep\nserving, and its key file to PATH.key. PostgreSQL: use pg_dump.",
		args: []string{"PATH  the file to write, in a folder that exists; a file name, never an\n" +
			"      SQLite URI (a PATH ending in ?x is the file so named)"},
		settings: []string{"DATABASE_URL", "SECRET_KEY"}},
	{name: "restore", synopsis: "restore PATH",
		about: "Put a copy made by backup back in place of the SQLite database (and its key\nfile PATH.key), once it passes SQLite's integrity check. Refused while a\nserver has the database open. PostgreSQL: use pg_restore.",
		args: []string{"PATH  the copy to put back; a file name, never an SQLite URI (a PATH\n" +
			"      ending in ?x is the file so named)"},
		settings: []string{"DATABASE_URL"}},
}

// isHelp reports whether arg asks for help, as the flag package reads it.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

// printCommandHelp writes the help of the command line name; own holds the
// command's own flags (not the shared settings).
func printCommandHelp(w io.Writer, name string, own *flag.FlagSet) {
	h, _ := helpOf(name)
	fmt.Fprintf(w, "Usage: server %s\n\n%s\n", h.synopsis, h.about)
	if len(h.args) > 0 {
		fmt.Fprintln(w, "\nArguments:")
		for _, a := range h.args {
			fmt.Fprintf(w, "  %s\n", a)
		}
	}
	n := 0
	own.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprintln(w, "\nFlags:")
		own.SetOutput(w)
		own.PrintDefaults()
	}
	if len(h.settings) > 0 {
		named := make([]string, len(h.settings))
		for i, v := range h.settings {
			named[i] = fmt.Sprintf("%s (-%s)", v, strings.ReplaceAll(strings.ToLower(v), "_", "-"))
		}
		fmt.Fprintf(w, "\nSettings: %s;\n", strings.Join(named, ", "))
	} else {
		fmt.Fprint(w, "\nSettings: ")
	}
	fmt.Fprintln(w, "each a flag or an environment variable, `server serve -h` lists every one.")
}

// printGroupHelp writes the subcommands of a group (keys, users, webhooks).
func printGroupHelp(w io.Writer, group string) {
	fmt.Fprintf(w, "Usage: server %s <subcommand> [flags]\n\nSubcommands:\n", group)
	for _, h := range helps {
		if strings.HasPrefix(h.name, group+" ") {
			fmt.Fprintf(w, "  server %s\n      %s\n", h.synopsis, strings.SplitN(h.about, "\n", 2)[0])
		}
	}
	fmt.Fprintf(w, "\nRun \"server %s <subcommand> -h\" for one's arguments and flags.\n", group)
}

// helpOf is the help entry of the command line name.
func helpOf(name string) (commandHelp, bool) {
	for _, h := range helps {
		if h.name == name {
			return h, true
		}
	}
	return commandHelp{}, false
}
