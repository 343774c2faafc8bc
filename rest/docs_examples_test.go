package rest_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsCurlSendsJSON: every curl example in the README and docs/ that
// sends a body (-d, --data…) declares it as JSON. curl's -d alone sends
// application/x-www-form-urlencoded, which the API refuses with 415
// UNSUPPORTED_MEDIA_TYPE, so such an example cannot work as written.
func TestDocsCurlSendsJSON(t *testing.T) {
	files, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../README.md")
	block := regexp.MustCompile("(?s)```[a-z]*\n(.*?)```")
	data := regexp.MustCompile(`\s(-d|--data[a-z-]*)\s`)
	json := regexp.MustCompile(`(?i)content-type:\s*application/json`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range block.FindAllStringSubmatch(string(b), -1) {
			// Join the lines a trailing backslash continues.
			cmds := regexp.MustCompile(`\\\n\s*`).ReplaceAllString(m[1], " ")
			for _, line := range strings.Split(cmds, "\n") {
				if strings.Contains(line, "curl ") && data.MatchString(line+" ") && !json.MatchString(line) {
					t.Errorf("%s: curl sends a body without Content-Type: application/json (415 as written):\n%s", f, strings.TrimSpace(line))
				}
			}
		}
	}
}
