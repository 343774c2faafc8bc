package main

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
)

// BENCHMARKS.md keeps, for each set of rows (the database and the rows a run
// measured), the latest run in full, and below them a history of one line
// per earlier run. A run replaces every older one on the same database
// whose rows it all measured again, so a full run leaves one current table
// where partial runs had left several. The file is its own record: a
// replaced run is read back from it and summed up from what it shows, so a
// file written one run after another converts on the next -write, and the
// full text of every run stays in git.

// markdownHead opens BENCHMARKS.md.
const markdownHead = `# Benchmarks

Written by ` + "`make bench ARGS=-write`" + ` (bench/cmd/bench), never by hand. Each
set of rows (the database and the rows a run measured) has one section
below, newest first: its latest run in full. A later run on the same
database that measures all of a section's rows again takes its place, and
the run it replaces becomes one line of the [history](#history); git keeps
every full run (` + "`git log -p -- BENCHMARKS.md`" + `).
How to run the benchmark and what each row measures:
[docs/benchmarks.md](docs/benchmarks.md).

Each figure of the server is also given as a ratio to the lean reference
server (bench/reference) measured in the same run on the same database,
which is what the targets are about: absolute figures move with the machine.
`

// runMarker starts a run, under the heading of its set of rows. Files
// written before the history existed start each run with oldRunMarker.
const (
	runMarker    = "### Run "
	oldRunMarker = "## Run "
)

// historyHeading starts the history, after the current runs.
const historyHeading = "## History"

// historyIntro says how to read a line of the history.
const historyIntro = `Earlier runs, newest first, one line each: when, the commit, the database,
and each row's requests/s as a ratio (` + "`× ref`" + `: to the reference; ` + "`× list`" + `
and the like: to the server's own row of that name, in the same turns),
with (MISS) where a target was missed.`

// recordedRun is one run as BENCHMARKS.md holds it.
type recordedRun struct {
	heading string   // "Run 2026-11-25 20:17 UTC, commit 143fd17"
	body    []string // the lines under the heading, without blank lines at either end
}

// recordRun returns the file old (empty when there is none) with run, as
// runMarkdown writes it, recorded: run becomes the current section of its
// set of rows, and each run it covers (one on the same database whose rows
// it all measured again) becomes a line at the top of the history.
func recordRun(old []byte, run string) []byte {
	runs, history := parseRecord(string(old))
	added, _ := parseRecord(run)
	runs = append(added, runs...)
	slices.SortStableFunc(runs, func(a, b recordedRun) int { return cmp.Compare(b.started(), a.started()) })
	var current []recordedRun
	for _, r := range runs {
		if slices.ContainsFunc(current, func(newer recordedRun) bool { return newer.covers(r) }) {
			history = append(history, r.historyLine())
			continue
		}
		current = append(current, r)
	}
	slices.SortStableFunc(history, func(a, b string) int { return cmp.Compare(lineStarted(b), lineStarted(a)) })

	var b strings.Builder
	b.WriteString(markdownHead)
	for _, r := range current {
		b.WriteString("\n## " + r.set() + "\n\n")
		b.WriteString(runMarker + strings.TrimPrefix(r.heading, "Run ") + "\n\n")
		b.WriteString(strings.Join(r.body, "\n") + "\n")
	}
	if len(history) > 0 {
		b.WriteString("\n" + historyHeading + "\n\n" + historyIntro + "\n\n")
		b.WriteString(strings.Join(history, "\n") + "\n")
	}
	return []byte(b.String())
}

// parseRecord reads the runs of a BENCHMARKS.md, in its order, and the lines
// of its history. Everything else (the head, the headings of the sets, the
// history's introduction) is written afresh.
func parseRecord(text string) (runs []recordedRun, history []string) {
	var run *recordedRun
	inHistory := false
	flush := func() {
		if run != nil {
			run.body = trimBlank(run.body)
			runs = append(runs, *run)
			run = nil
		}
	}
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, runMarker), strings.HasPrefix(line, oldRunMarker):
			flush()
			inHistory = false
			run = &recordedRun{heading: strings.TrimLeft(line, "# ")}
		case line == historyHeading:
			flush()
			inHistory = true
		case strings.HasPrefix(line, "#"):
			flush()
			inHistory = false
		case run != nil:
			run.body = append(run.body, line)
		case inHistory && strings.HasPrefix(line, "- "):
			history = append(history, line)
		}
	}
	flush()
	return runs, history
}

func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// started is when the run started, as its heading says ("2026-11-25 20:17
// UTC"): in that form, later runs sort after earlier ones.
func (r recordedRun) started() string {
	when, _, _ := strings.Cut(strings.TrimPrefix(r.heading, "Run "), ",")
	return when
}

// lineStarted is when the run of a history line started.
func lineStarted(line string) string {
	when, _, _ := strings.Cut(strings.TrimPrefix(line, "- "), ",")
	return when
}

// dialect is the database the run measured, from its "- database:" line.
func (r recordedRun) dialect() string {
	for _, l := range r.body {
		if v, ok := strings.CutPrefix(l, "- database: "); ok {
			d, _, _ := strings.Cut(v, ",")
			return strings.TrimSpace(d)
		}
	}
	return "unknown database"
}

// names are the rows the run measured, in their order: the rows of its
// table, then realtime, pgwrites and pgscale if it ran them.
func (r recordedRun) names() []string {
	var names []string
	for _, t := range r.tableRows() {
		names = append(names, t.name)
	}
	for _, extra := range []string{"realtime", "pgwrites", "pgscale"} {
		if slices.ContainsFunc(r.body, func(l string) bool { return strings.HasPrefix(l, "- "+extra+": ") }) {
			names = append(names, extra)
		}
	}
	return names
}

// set names the run's set of rows: its database, then its rows
// ("sqlite: list, graphql, realtime").
func (r recordedRun) set() string {
	if names := r.names(); len(names) > 0 {
		return r.dialect() + ": " + strings.Join(names, ", ")
	}
	return r.dialect() + ": no rows"
}

// covers reports whether r, a later run, leaves nothing of older to show:
// it ran on the same database and measured every row older measured.
func (r recordedRun) covers(older recordedRun) bool {
	if r.dialect() != older.dialect() {
		return false
	}
	names := r.names()
	for _, n := range older.names() {
		if !slices.Contains(names, n) {
			return false
		}
	}
	return true
}

// recordedRow is a row of a run's table, as far as the history needs it.
type recordedRow struct {
	name    string // the row's -rows name, or its title if no row has that title now
	ratio   string // requests/s × its reference
	base    string // what the ratio is to: "ref", or the server's own row
	verdict string
}

// tableRows reads the server's rows of the run's table (not the
// reference's), finding the columns by their headings.
func (r recordedRun) tableRows() []recordedRow {
	var out []recordedRow
	var col map[string]int
	for _, l := range r.body {
		if !strings.HasPrefix(l, "|") {
			if col != nil {
				break // the table ended
			}
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if col == nil {
			col = map[string]int{}
			for i, c := range cells {
				if _, dup := col[c]; !dup {
					col[c] = i
				}
			}
			continue
		}
		if strings.HasPrefix(cells[0], "---") || strings.HasPrefix(cells[0], "reference: ") {
			continue
		}
		cell := func(name string, offset int) string {
			i, ok := col[name]
			if !ok || i+offset >= len(cells) {
				return "?"
			}
			return cells[i+offset]
		}
		t := recordedRow{name: cells[0], ratio: cell("req/s", 1), base: "ref", verdict: cell("verdict", 0)}
		if i := slices.IndexFunc(rows, func(rw row) bool { return rw.title == cells[0] }); i >= 0 {
			t.name = rows[i].name
		}
		if _, b, ok := strings.Cut(cell("target", 0), " × "); ok {
			t.base = b
		}
		out = append(out, t)
	}
	return out
}

var (
	realtimeLine = regexp.MustCompile(`^- realtime: POST /v1/items with the \d+ subscribers connected: .* = (\S+) \(target [^)]*\): (\S+)$`)
	pgWritesLine = regexp.MustCompile(`^- pgwrites: (\d+) owner\(s\): through the .* at 64 connections (\S+)× direct .*: (\S+)$`)
	pgScaleLine  = regexp.MustCompile(`^- pgscale: (pg-\S+): .* = (\S+)× \(.*: (\S+)$`)
)

// headline sums the run up: each row's throughput ratio, the realtime
// row's creates with the streams open against without, the pgwrites row's
// creates through the link against direct, the pgscale row's figures at
// scale against the base, and each footprint line that
// missed its target.
func (r recordedRun) headline() string {
	missed := func(verdict string) string {
		if verdict != "ok" {
			return " (MISS)"
		}
		return ""
	}
	var parts []string
	for _, t := range r.tableRows() {
		if strings.HasPrefix(t.verdict, "skipped") {
			parts = append(parts, t.name+" skipped")
			continue
		}
		parts = append(parts, t.name+" "+t.ratio+" × "+t.base+missed(t.verdict))
	}
	for _, l := range r.body {
		if m := realtimeLine.FindStringSubmatch(l); m != nil {
			parts = append(parts, "realtime "+m[1]+" × without streams"+missed(m[2]))
		} else if m := pgWritesLine.FindStringSubmatch(l); m != nil {
			parts = append(parts, "pgwrites "+m[1]+" owner(s) "+m[2]+" × direct"+missed(m[3]))
		} else if strings.HasPrefix(l, "- pgwrites: skipped") {
			parts = append(parts, "pgwrites skipped")
		} else if m := pgScaleLine.FindStringSubmatch(l); m != nil {
			parts = append(parts, m[1]+" "+m[2]+" × 10k"+missed(m[3]))
		} else if strings.HasPrefix(l, "- pgscale: skipped") {
			parts = append(parts, "pgscale skipped")
		} else if strings.HasPrefix(l, "- ") && strings.Contains(l, ": MISS)") {
			label := strings.TrimPrefix(l, "- ")
			if i := strings.IndexAny(label, "(:,"); i >= 0 {
				label = strings.TrimSpace(label[:i])
			}
			parts = append(parts, label+" (MISS)")
		}
	}
	if len(parts) == 0 {
		return "no rows"
	}
	return strings.Join(parts, ", ")
}

// historyLine is the run as one line of the history.
func (r recordedRun) historyLine() string {
	return "- " + strings.TrimPrefix(r.heading, "Run ") + ", " + r.dialect() + ": " + r.headline()
}
