package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"
)

// maxRSS is the peak resident set the server must stay under.
const maxRSS = 40 << 20

// runResult is a whole run.
type runResult struct {
	Config   string
	Dialect  string
	Users    int
	Items    int
	Scale    int // items of the user of the rows at scale; 0: none ran
	Conns    int
	Duration time.Duration
	Warmup   time.Duration
	Started  time.Time
	Note     string // -note: what the figures should be read with
	Rows     []rowResult
	Realtime *realtimeResult // the realtime row, when it ran
	PGWrites *pgWritesResult // the pgwrites row, when it ran
	PGScale  *pgScaleResult  // the pgscale row, when it ran
	Foot     footprint
}

// rowResult is one row: the server, and the reference it is judged against.
type rowResult struct {
	Row       row
	Server    measurement
	Reference measurement // for serverOnly rows: the server on the baseline row, in the same turns
	Skipped   string
	RefLabel  string
}

// baseline is the row a serverOnly row is compared with.
func (r row) baselineName() string {
	if r.baseline == "" {
		return "list"
	}
	return r.baseline
}

// finish names what each row was measured against.
func (r *runResult) finish() {
	for i := range r.Rows {
		row := &r.Rows[i]
		row.RefLabel = "reference"
		if row.Row.serverOnly {
			row.RefLabel = "server's " + row.Row.baselineName()
		}
		if row.Row.tracing != "" {
			row.RefLabel = "untraced server's " + row.Row.baselineName()
		}
	}
}

func ratio(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", a/b)
}

// throughputRatio has three decimals: the targets are two-decimal bounds,
// and a ratio just under one, rounded to two decimals, would print as the
// bound itself beside the MISS that says it is below.
func throughputRatio(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.3f", a/b)
}

// micros is a CPU time per request, "–" when unknown.
func micros(us float64) string {
	if us <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f", us)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000) }

func mib(b int64) string {
	if b == 0 {
		return "?"
	}
	return fmt.Sprintf("%.1f", float64(b)/(1<<20))
}

// verdict compares a row with its targets.
func (r rowResult) verdict() string {
	if r.Skipped != "" {
		return "skipped"
	}
	var miss []string
	if q := r.Server.RPS / r.Reference.RPS; r.Row.minRatio > 0 && (r.Reference.RPS == 0 || q < r.Row.minRatio) {
		miss = append(miss, fmt.Sprintf("req/s < %.2f×", r.Row.minRatio))
	}
	if r.Row.maxP99 > 0 && r.Server.P99 > r.Row.maxP99 {
		miss = append(miss, "p99 > "+ms(r.Row.maxP99)+" ms")
	}
	if r.Server.Errors > 0 {
		miss = append(miss, "errors")
	}
	if r.Server.PeakRSS > maxRSS {
		miss = append(miss, "RSS > "+mib(maxRSS)+" MiB")
	}
	if len(miss) == 0 {
		return "ok"
	}
	return "MISS: " + strings.Join(miss, ", ")
}

// table writes the result rows, for a tabwriter or as Markdown.
func (r runResult) table(w io.Writer, markdown bool) {
	cols := []string{"request", "req/s", "× ref", "target", "CPU µs/req", "× ref", "p50 ms", "× ref", "p99 ms", "× ref", "errors", "peak RSS MiB", "× ref", "verdict"}
	line := func(cells []string) {
		if markdown {
			fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
		} else {
			fmt.Fprintln(w, strings.Join(cells, "\t")+"\t")
		}
	}
	line(cols)
	if markdown {
		line(strings.Split(strings.Repeat("---,", len(cols)-1)+"---", ","))
	}
	for _, row := range r.Rows {
		s, ref := row.Server, row.Reference
		if row.Skipped != "" {
			cells := make([]string, len(cols))
			cells[0], cells[len(cells)-1] = row.Row.title, "skipped: "+row.Skipped
			for i := 1; i < len(cells)-1; i++ {
				cells[i] = "–"
			}
			line(cells)
			continue
		}
		target := fmt.Sprintf("≥ %.2f", row.Row.minRatio)
		if row.Row.minRatio == 0 {
			target = "none"
		}
		if row.Row.serverOnly {
			target += " × " + row.Row.baselineName()
		}
		line([]string{
			row.Row.title,
			fmt.Sprintf("%.0f", s.RPS), throughputRatio(s.RPS, ref.RPS), target,
			micros(s.CPUPerReq), ratio(s.CPUPerReq, ref.CPUPerReq),
			ms(s.P50), ratio(float64(s.P50), float64(ref.P50)),
			ms(s.P99), ratio(float64(s.P99), float64(ref.P99)),
			fmt.Sprintf("%d", s.Errors),
			mib(s.PeakRSS), ratio(float64(s.PeakRSS), float64(ref.PeakRSS)),
			row.verdict(),
		})
	}
	line2 := func(cells []string) { line(append(cells, make([]string, len(cols)-len(cells))...)) }
	for _, row := range r.Rows {
		if row.Skipped != "" || row.Row.serverOnly {
			continue
		}
		ref := row.Reference
		line2([]string{"reference: " + row.Row.title, fmt.Sprintf("%.0f", ref.RPS), "", "", micros(ref.CPUPerReq), "", ms(ref.P50), "", ms(ref.P99), "", fmt.Sprintf("%d", ref.Errors), mib(ref.PeakRSS)})
	}
}

// describeData says what the database held.
func (r runResult) describeData() string {
	s := fmt.Sprintf("%s, %d users, %d items", r.Dialect, r.Users, r.Items)
	if r.Scale > 0 {
		s += fmt.Sprintf(", and one more user with %d items (rows at scale)", r.Scale)
	}
	return s
}

// printResult writes the run to the terminal.
func printResult(w io.Writer, r runResult) {
	fmt.Fprintf(w, "\nconfiguration: %s\n", r.Config)
	if r.Note != "" {
		fmt.Fprintf(w, "note: %s\n", r.Note)
	}
	fmt.Fprintf(w, "database: %s; %d connections, closed loop; %s per row and server after %s warmup\n\n",
		r.describeData(), r.Conns, r.Duration, r.Warmup)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	r.table(tw, false)
	tw.Flush()
	fmt.Fprintln(w)
	for _, l := range append(r.Foot.lines(), r.tailLines()...) {
		fmt.Fprintln(w, l)
	}
	for _, row := range r.Rows {
		for _, m := range []struct {
			who string
			m   measurement
		}{{"server", row.Server}, {row.RefLabel, row.Reference}} {
			if m.m.FirstError != "" {
				fmt.Fprintf(w, "%s, %s: %d errors, first: %s\n", row.Row.title, m.who, m.m.Errors, m.m.FirstError)
			}
		}
		if row.Skipped == "" && !row.Server.PeakReset {
			fmt.Fprintf(w, "%s: peak RSS is the server's lifetime peak (could not reset it per row)\n", row.Row.title)
		}
	}
	if r.Realtime != nil {
		fmt.Fprintln(w)
		r.Realtime.print(w, false)
	}
	if r.PGWrites != nil {
		fmt.Fprintln(w)
		r.PGWrites.print(w, false)
	}
	if r.PGScale != nil {
		fmt.Fprintln(w)
		r.PGScale.print(w, false)
	}
	fmt.Fprintln(w, "\nEvery × ref is the server's figure divided by the reference's in the same turns; rows the reference does not run\n(GraphQL, at scale, traced) are divided by the server's figure on the row their target names, measured in turns with them\n(a traced row by the untraced server's).")
}

// machine describes where a run happened.
type machine struct {
	CPUs   int
	Model  string
	Commit string
	Go     string
}

// describeMachine says where the run happens; out, the file -write records
// into, does not count as an uncommitted change (a run recorded just before
// leaves it changed).
func describeMachine(root, out string) (machine, error) {
	m := machine{CPUs: runtime.NumCPU(), Model: "unknown", Go: runtime.Version()}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.Model = strings.TrimSpace(v)
				break
			}
		}
	}
	if out, err := exec.Command("nproc").Output(); err == nil {
		fmt.Sscan(string(out), &m.CPUs)
	}
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		out, _ := cmd.Output()
		return strings.TrimSpace(string(out))
	}
	m.Commit = git("rev-parse", "--short", "HEAD")
	if m.Commit == "" {
		m.Commit = "unknown"
	} else if git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)"+out) != "" {
		m.Commit += " (with uncommitted changes)"
	}
	return m, nil
}

// writeMarkdown records the run in the file at path (BENCHMARKS.md): the
// run becomes the current section of its set of rows, and the run it
// replaces becomes one line of the history (record.go).
func writeMarkdown(path string, r runResult, m machine) error {
	var old []byte
	if data, err := os.ReadFile(path); err == nil {
		old = data
	} else if !os.IsNotExist(err) {
		return err
	}
	return os.WriteFile(path, recordRun(old, runMarkdown(r, m)), 0o644)
}

// runMarkdown is a run as BENCHMARKS.md shows it: its heading line, where
// and how it ran, its table, and the lines of the rows outside the table.
func runMarkdown(r runResult, m machine) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s%s, commit %s\n\n", runMarker, r.Started.Format("2006-01-02 15:04 UTC"), m.Commit)
	fmt.Fprintf(&b, "- machine: %d CPUs, %s; %s\n", m.CPUs, m.Model, m.Go)
	fmt.Fprintf(&b, "- configuration: %s\n", r.Config)
	if r.Note != "" {
		fmt.Fprintf(&b, "- note: %s\n", r.Note)
	}
	fmt.Fprintf(&b, "- database: %s; %d connections, closed loop; %s per row and server after %s warmup\n\n",
		r.describeData(), r.Conns, r.Duration, r.Warmup)
	r.table(&b, true)
	b.WriteString("\n")
	if r.Realtime != nil {
		r.Realtime.print(&b, true)
		b.WriteString("\n")
	}
	if r.PGWrites != nil {
		r.PGWrites.print(&b, true)
		b.WriteString("\n")
	}
	if r.PGScale != nil {
		r.PGScale.print(&b, true)
		b.WriteString("\n")
	}
	for _, l := range append(r.Foot.lines(), r.tailLines()...) {
		fmt.Fprintf(&b, "- %s\n", l)
	}
	return b.String()
}

// maxCreateTail is the most the SQLite create row's p99 may be of its p50:
// the one writer's queue gives every create a p50, and what a round of
// upkeep (a checkpoint) adds shows as the distance to the p99.
const maxCreateTail = 3.0

// tailLines judges the tail of the create row on SQLite, p99 ÷ p50.
func (r *runResult) tailLines() []string {
	var out []string
	for _, row := range r.Rows {
		m := row.Server
		if row.Row.name != "create" || r.Dialect != "sqlite" || m.P50 <= 0 {
			continue
		}
		tail := float64(m.P99) / float64(m.P50)
		out = append(out, fmt.Sprintf("SQLite %s tail: p99 %s ms ÷ p50 %s ms = %.2f (target ≤ %.0f: %s)",
			row.Row.title, ms(m.P99), ms(m.P50), tail, maxCreateTail, verdict(tail <= maxCreateTail)))
	}
	return out
}
