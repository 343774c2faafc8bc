package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// monitoringDir holds the Grafana dashboard and the Prometheus alert rules
// (docs/deploy.md#watching-it).
const monitoringDir = "../../deploy/monitoring"

// metricName finds the server's metric names in a PromQL expression: all
// of them begin with http_ or itemsvc_ (Prometheus's own, such as up, do
// not).
var metricName = regexp.MustCompile(`\b(?:http|itemsvc)_[a-z0-9_]+\b`)

// TestMonitoringMetricsExist: every metric the alert rules and the
// dashboard name is one a live server exports on /metrics (a histogram's
// as its _bucket, _sum and _count series), so that a renamed metric cannot
// leave an alert that never fires. The server runs on an SQLite file, which
// has every gauge (the write-ahead log's among them).
func TestMonitoringMetricsExist(t *testing.T) {
	var exprs []string
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `json:"alert"`
				Expr  string `json:"expr"`
			} `json:"rules"`
		} `json:"groups"`
	}
	data, err := os.ReadFile(filepath.Join(monitoringDir, "alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &rules); err != nil { // promtool checks the rest
		t.Fatalf("alerts.yaml: %v", err)
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			exprs = append(exprs, r.Expr)
		}
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	data, err = os.ReadFile(filepath.Join(monitoringDir, "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("dashboard panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			exprs = append(exprs, q.Expr)
		}
	}

	s := startServe(t, []string{"-database-url", "sqlite:" + filepath.Join(t.TempDir(), "app.db")}, nil)
	exported := map[string]bool{}
	for range 2 { // the first scrape's request is measured by the second
		res, err := http.Get("http://" + s.addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
				exported[strings.FieldsFunc(line, func(r rune) bool { return r == '{' || r == ' ' })[0]] = true
			}
		}
		res.Body.Close()
	}
	named := 0
	for _, e := range exprs {
		for _, name := range metricName.FindAllString(e, -1) {
			named++
			if !exported[name] {
				t.Errorf("%q names %s, which the server does not export", e, name)
			}
		}
	}
	if named < 10 {
		t.Errorf("only %d metric names found in the rules and the dashboard", named)
	}
}
