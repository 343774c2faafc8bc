// Package docs holds the guards of the repository's Markdown: the README
// points to the pages of docs/, each topic lives in one page, and every
// link leads somewhere.
package docs

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/acme/itemsvc/internal/config"
)

// maxReadmeLines keeps the README to what a newcomer reads in minutes: the
// two commands, a short walk-through, where each topic lives, the layout.
const maxReadmeLines = 200

// markdown is the repository's Markdown: slash path from the root → text.
type markdown map[string]string

// guard finds what breaks one rule in md; exists says whether a path
// (relative to the root) is a file or directory of the repository.
type guard func(md markdown, exists func(string) bool) []string

// guards are the rules, each with what it keeps.
var guards = []struct {
	name string
	run  guard
}{
	{"README within 200 lines", readmeTooLong},
	{"every page of docs/ linked from the README and docs/README.md", unlinkedPages},
	{"no README heading names the topic of a page", topicHeadings},
	{"no settings table written twice", duplicateSettings(serverSettings())},
	{"every relative link and anchor resolves", brokenLinks},
}

// TestDocs holds the repository's Markdown to every guard.
func TestDocs(t *testing.T) {
	root := filepath.Join("..")
	md := readMarkdown(t, root)
	exists := func(p string) bool {
		_, err := os.Stat(filepath.Join(root, filepath.FromSlash(p)))
		return err == nil
	}
	for _, g := range guards {
		t.Run(g.name, func(t *testing.T) {
			for _, p := range g.run(md, exists) {
				t.Error(p)
			}
		})
	}
}

// readMarkdown reads every Markdown file of the repository but those of
// dependencies (node_modules), hidden folders and test data.
func readMarkdown(t *testing.T, root string) markdown {
	t.Helper()
	md := markdown{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".md") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		md[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if md["README.md"] == "" {
		t.Fatal("no README.md at the root")
	}
	return md
}

// serverSettings are the environment variables the server's configuration
// reads, as its loader asks for them.
func serverSettings() map[string]bool {
	var c config.Config
	loader := c.Register(flag.NewFlagSet("settings", flag.ContinueOnError))
	names := map[string]bool{}
	_ = loader.Resolve(func(name string) (string, bool) { // the defaults alone may not validate
		names[name] = true
		return "", false
	})
	return names
}

func readmeTooLong(md markdown, _ func(string) bool) []string {
	if n := strings.Count(md["README.md"], "\n"); n > maxReadmeLines {
		return []string{fmt.Sprintf("README.md has %d lines, more than %d: move the text to the page of docs/ whose topic it is", n, maxReadmeLines)}
	}
	return nil
}

// pages are the topic pages of docs/ (its index, docs/README.md, aside).
func pages(md markdown) []string {
	var out []string
	for p := range md {
		if path.Dir(p) == "docs" && p != "docs/README.md" {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

func unlinkedPages(md markdown, _ func(string) bool) []string {
	var out []string
	for _, index := range []string{"README.md", "docs/README.md"} {
		linked := map[string]bool{}
		for _, l := range links(index, md[index]) {
			linked[l.path] = true
		}
		for _, p := range pages(md) {
			if !linked[p] {
				out = append(out, fmt.Sprintf("%s does not link %s: give the page a row in its table of topics", index, p))
			}
		}
	}
	return out
}

// topicHeadings: a heading of the README that names the topic of a page of
// docs/ (the words of the page's file name) means the topic is written in
// two places. Words match when they are equal but for a plural s, or when
// one of five letters or more starts the other (deploy, deployment).
func topicHeadings(md markdown, _ func(string) bool) []string {
	var out []string
	for _, h := range headings(md["README.md"]) {
		words := wordsOf(h.text)
		for _, p := range pages(md) {
			topic := wordsOf(strings.TrimSuffix(path.Base(p), ".md"))
			if len(topic) > 0 && allMatch(topic, words) {
				out = append(out, fmt.Sprintf("README.md:%d: the heading %q names the topic of %s: write it there, and give the README a row in its table of topics",
					h.line, h.text, p))
			}
		}
	}
	return out
}

func wordsOf(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// allMatch reports whether every word of topic matches a word of words.
func allMatch(topic, words []string) bool {
	for _, t := range topic {
		if !slices.ContainsFunc(words, func(w string) bool { return wordMatch(t, w) }) {
			return false
		}
	}
	return true
}

func wordMatch(a, b string) bool {
	a, b = strings.TrimSuffix(a, "s"), strings.TrimSuffix(b, "s")
	if a == b {
		return true
	}
	short, long := a, b
	if len(short) > len(long) {
		short, long = long, short
	}
	return len(short) >= 5 && strings.HasPrefix(long, short)
}

var (
	tableRow = regexp.MustCompile(`^\s*\|(.*)\|\s*$`)
	// settingCell is the first cell of a settings row: one or more
	// environment variables, in backticks.
	settingCell = regexp.MustCompile("^`[A-Z][A-Z0-9_]+`(?:\\s*,\\s*`[A-Z][A-Z0-9_]+`)*$")
	settingName = regexp.MustCompile("`([A-Z0-9_]+)`")
)

// duplicateSettings: a setting is described in one table of the whole
// repository's Markdown. A settings row is a table row whose first cell
// holds only environment variables, in a table headed "variable" or
// "setting", or naming a variable of the server's configuration.
func duplicateSettings(settings map[string]bool) guard {
	return func(md markdown, _ func(string) bool) []string {
		seen := map[string]string{} // variable → where its row is
		var out []string
		files := make([]string, 0, len(md))
		for p := range md {
			files = append(files, p)
		}
		slices.Sort(files)
		for _, f := range files {
			header := "" // first cell of the current table's header; "" outside tables
			for i, line := range outsideCode(md[f]) {
				m := tableRow.FindStringSubmatch(line)
				if m == nil {
					header = ""
					continue
				}
				first := strings.TrimSpace(strings.Split(m[1], "|")[0])
				if header == "" {
					header = strings.ToLower(first) + " " // a table starts
					continue
				}
				if !settingCell.MatchString(first) {
					continue
				}
				names := settingName.FindAllStringSubmatch(first, -1)
				isSetting := strings.Contains(header, "variable") || strings.Contains(header, "setting")
				for _, n := range names {
					isSetting = isSetting || settings[n[1]]
				}
				if !isSetting {
					continue
				}
				where := fmt.Sprintf("%s:%d", f, i+1)
				for _, n := range names {
					if prev, ok := seen[n[1]]; ok {
						out = append(out, fmt.Sprintf("%s: a settings row of %s, which %s already has: keep one table of settings and link to it", where, n[1], prev))
						continue
					}
					seen[n[1]] = where
				}
			}
		}
		return out
	}
}

// outsideCode is text's lines with those of fenced code blocks blanked,
// so that line numbers stay those of the file.
func outsideCode(text string) []string {
	lines := strings.Split(text, "\n")
	in := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			lines[i] = ""
			continue
		}
		if in {
			lines[i] = ""
		}
	}
	return lines
}

// heading is a Markdown heading and its line.
type heading struct {
	text  string
	depth int
	line  int
}

var atxHeading = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)

func headings(text string) []heading {
	var out []heading
	for i, l := range outsideCode(text) {
		if m := atxHeading.FindStringSubmatch(l); m != nil {
			out = append(out, heading{text: m[2], depth: len(m[1]), line: i + 1})
		}
	}
	return out
}

var (
	inlineLink = regexp.MustCompile(`\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refLink    = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	codeSpan   = regexp.MustCompile("`[^`]*`")
	scheme     = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
	anchorTag  = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	slugDrop   = regexp.MustCompile(`[^\p{L}\p{N} _-]`)
)

// link is a relative link of a Markdown file: the path it leads to (slash,
// from the root; the file itself for "#anchor") and its anchor.
type link struct {
	line   int
	target string // as written
	path   string
	anchor string
}

// links are the relative links of the file at p (outside code); links to
// other sites and mail addresses are left out.
func links(p, text string) []link {
	var out []link
	for i, l := range outsideCode(text) {
		l = codeSpan.ReplaceAllString(l, "")
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(l, -1) {
			targets = append(targets, m[1])
		}
		if m := refLink.FindStringSubmatch(l); m != nil {
			targets = append(targets, m[1])
		}
		for _, t := range targets {
			if scheme.MatchString(t) {
				continue
			}
			file, anchor, _ := strings.Cut(t, "#")
			resolved := p
			if file != "" {
				resolved = path.Join(path.Dir(p), file)
			}
			out = append(out, link{line: i + 1, target: t, path: resolved, anchor: anchor})
		}
	}
	return out
}

// anchors are the fragments a Markdown file answers to: its headings, as
// GitHub makes their ids (lower case, punctuation dropped, spaces to
// hyphens, -1, -2… on repeats), and the ids of its <a> tags.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	count := map[string]int{}
	for _, h := range headings(text) {
		s := inlineLink.ReplaceAllStringFunc(h.text, func(l string) string { return l[1:strings.Index(l, "](")] })
		s = strings.ReplaceAll(strings.ToLower(s), " ", "-")
		s = slugDrop.ReplaceAllString(s, "")
		if n := count[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		count[s]++
	}
	for _, m := range anchorTag.FindAllStringSubmatch(text, -1) {
		out[m[1]] = true
	}
	return out
}

func brokenLinks(md markdown, exists func(string) bool) []string {
	var out []string
	files := make([]string, 0, len(md))
	for p := range md {
		files = append(files, p)
	}
	slices.Sort(files)
	for _, f := range files {
		for _, l := range links(f, md[f]) {
			where := fmt.Sprintf("%s:%d: %s", f, l.line, l.target)
			if strings.HasPrefix(l.path, "../") || !exists(l.path) {
				out = append(out, where+": no such file in the repository")
				continue
			}
			if l.anchor == "" || !strings.HasSuffix(l.path, ".md") {
				continue
			}
			if !anchors(md[l.path])[l.anchor] {
				out = append(out, fmt.Sprintf("%s: %s has no heading or anchor %q", where, l.path, l.anchor))
			}
		}
	}
	return out
}

// TestGuardsFail: each guard finds what it is for in small Markdown, and
// only that.
func TestGuardsFail(t *testing.T) {
	lines := func(n int) string { return strings.Repeat("line\n", n) }
	readme := "# x\n\n| topic | page |\n|---|---|\n| REST | [rest](docs/rest.md) |\n"
	index := "# docs\n\n[REST](rest.md)\n"
	rest := "# REST API\n\n## Edit conflicts and cheap re-reads (ETag)\n\n## Lists\n\n## Lists\n\n<a id=\"order\"></a>\n"
	settings := map[string]bool{"ADDR": true, "REDIS_URL": true}
	files := map[string]bool{"README.md": true, "docs": true, "docs/README.md": true, "docs/rest.md": true, "docs/limits.md": true, "rest/openapi/openapi.json": true}
	exists := func(p string) bool { return files[p] }
	cases := []struct {
		name string
		run  guard
		md   markdown
		want []string // a part of each problem, in order
	}{
		{"a README of 200 lines", readmeTooLong, markdown{"README.md": lines(200)}, nil},
		{"a README of 201 lines", readmeTooLong, markdown{"README.md": lines(201)}, []string{"README.md has 201 lines"}},

		{"every page linked from both indexes", unlinkedPages, markdown{"README.md": readme, "docs/README.md": index, "docs/rest.md": rest}, nil},
		{"a page the README does not link", unlinkedPages,
			markdown{"README.md": readme, "docs/README.md": index + "[Limits](limits.md)\n", "docs/rest.md": rest, "docs/limits.md": "# Limits\n"},
			[]string{"README.md does not link docs/limits.md"}},
		{"a page the index does not link", unlinkedPages,
			markdown{"README.md": readme + "[limits](docs/limits.md)\n", "docs/README.md": index, "docs/rest.md": rest, "docs/limits.md": "# Limits\n"},
			[]string{"docs/README.md does not link docs/limits.md"}},
		{"a link in code is no link", unlinkedPages,
			markdown{"README.md": readme + "`[limits](docs/limits.md)`\n```\n[limits](docs/limits.md)\n```\n", "docs/README.md": index + "[Limits](limits.md)\n", "docs/rest.md": rest, "docs/limits.md": "# Limits\n"},
			[]string{"README.md does not link docs/limits.md"}},

		{"headings of other topics", topicHeadings, markdown{"README.md": "# itemsvc\n## Try it\n## Contributing\n", "docs/rest.md": rest, "docs/rate-limits.md": "# Rate limits\n"}, nil},
		{"a heading naming a page's topic", topicHeadings, markdown{"README.md": "# itemsvc\n## REST API\n", "docs/rest.md": rest},
			[]string{`README.md:2: the heading "REST API" names the topic of docs/rest.md`}},
		{"a plural, a longer word, every word of a page's name", topicHeadings,
			markdown{"README.md": "## Webhook\n## Deployment on Kubernetes\n## Rate limit\n## Rates\n", "docs/webhooks.md": "", "docs/deploy.md": "", "docs/rate-limits.md": ""},
			[]string{`"Webhook" names the topic of docs/webhooks.md`, `"Deployment on Kubernetes" names the topic of docs/deploy.md`, `"Rate limit" names the topic of docs/rate-limits.md`}},
		{"a heading of the index is no README heading", topicHeadings, markdown{"README.md": "# itemsvc\n", "docs/README.md": "## REST API\n", "docs/rest.md": rest}, nil},

		{"one settings table", duplicateSettings(settings),
			markdown{"docs/configuration.md": "| variable | default |\n|---|---|\n| `ADDR` | `:8080` |\n| `TLS_CERT_FILE`, `TLS_KEY_FILE` | |\n"}, nil},
		{"a settings table written again", duplicateSettings(settings),
			markdown{"README.md": "| variable | default |\n|---|---|\n| `TLS_CERT_FILE`, `TLS_KEY_FILE` | |\n",
				"docs/configuration.md": "| variable | default |\n|---|---|\n| `ADDR` | `:8080` |\n| `TLS_CERT_FILE`, `TLS_KEY_FILE` | |\n"},
			[]string{"docs/configuration.md:4: a settings row of TLS_CERT_FILE, which README.md:3 already has", "docs/configuration.md:4: a settings row of TLS_KEY_FILE"}},
		{"a row of a server setting under another heading", duplicateSettings(settings),
			markdown{"docs/a.md": "| name | what |\n|---|---|\n| `REDIS_URL` | Redis |\n", "docs/b.md": "| variable | default |\n|---|---|\n| `REDIS_URL` | |\n"},
			[]string{"docs/b.md:3: a settings row of REDIS_URL, which docs/a.md:3 already has"}},
		{"tables of codes, settings named in other cells, tables in code", duplicateSettings(settings),
			markdown{"docs/errors.md": "| code | status |\n|---|---|\n| `NOT_FOUND` | 404 |\n",
				"docs/graphql.md":       "| code | when |\n|---|---|\n| `NOT_FOUND` | an unknown id |\n",
				"docs/limits.md":        "| bound | limit |\n|---|---|\n| depth | `ADDR` |\n\n```\n| variable |\n|---|\n| `ADDR` |\n```\n",
				"docs/configuration.md": "| variable | default |\n|---|---|\n| `ADDR` | |\n"}, nil},

		{"links that resolve", brokenLinks, markdown{"README.md": readme + "[a](docs/rest.md#lists) [b](docs/rest.md#lists-1) [c](#x) [d](docs/) [e](rest/openapi/openapi.json) [f](https://example.com/#nowhere)\n\n## X\n",
			"docs/rest.md": rest + "[g](#edit-conflicts-and-cheap-re-reads-etag) [h](#order) [i](../README.md#x) [j]\n\n[j]: limits.md\n", "docs/limits.md": ""}, nil},
		{"a missing file, a missing anchor, a link out of the repository", brokenLinks,
			markdown{"README.md": "[a](docs/gone.md) [b](docs/rest.md#lists-2) [c](#nowhere)\n", "docs/rest.md": rest + "[d](../../elsewhere.md)\n[e]: gone.md\n"},
			[]string{"README.md:1: docs/gone.md: no such file", `README.md:1: docs/rest.md#lists-2: docs/rest.md has no heading or anchor "lists-2"`,
				`README.md:1: #nowhere: README.md has no heading or anchor "nowhere"`, "docs/rest.md:10: ../../elsewhere.md: no such file", "docs/rest.md:11: gone.md: no such file"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.run(c.md, exists)
			if len(got) != len(c.want) {
				t.Fatalf("%d problems, want %d:\n%s", len(got), len(c.want), strings.Join(got, "\n"))
			}
			for i, w := range c.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d is %q, want it to say %q", i, got[i], w)
				}
			}
		})
	}
}

// TestServerSettings: the settings guard knows the server's variables.
func TestServerSettings(t *testing.T) {
	s := serverSettings()
	for _, name := range []string{"ADDR", "DATABASE_URL", "SECRET_KEY"} {
		if !s[name] {
			t.Errorf("%s is not among the server's settings %v", name, s)
		}
	}
}
