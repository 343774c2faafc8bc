package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/acme/itemsvc/internal/testutil"
)

// TestLogsAreRedactedJSON: bodies that are not GraphQL requests, carrying
// an API key, a JWT, an access_token and a forged JSON log line between
// newlines, sent to every GraphQL transport (POST, GET, SSE, graphql-ws,
// and a WebSocket handshake gqlgen refuses and logs through the standard
// logger) are refused with a code, and leave in the log only JSON lines of
// the server's logger, with no secret in clear and no forged line. The
// standard logger writes to the same buffer as the server until serve
// takes it over, so that anything it would still write raw is caught.
func TestLogsAreRedactedJSON(t *testing.T) {
	dbURL := testutil.DatabaseURL(t)
	// An admin before the first start: serve then prints no first-start
	// key (the one line of its output that is not a log line, by design).
	if _, _, err := runCmd(t, "keys", "create", "-database-url", dbURL, "--email", "ops@example.com", "--name", "Ops", "--admin"); err != nil {
		t.Fatal(err)
	}
	prevDefault, prevFlags := slog.Default(), log.Flags()
	stderr := &testutil.LockedBuffer{}
	log.SetOutput(stderr)
	t.Cleanup(func() {
		slog.SetDefault(prevDefault)
		log.SetOutput(os.Stderr)
		log.SetFlags(prevFlags)
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrc, done := make(chan string, 1), make(chan error, 1)
	go func() {
		done <- serveWith(ctx, []string{"-addr", "127.0.0.1:0", "-database-url", dbURL}, stderr,
			serveHooks{listening: func(a string) { addrc <- a }})
	}()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatalf("serve ended: %v\n%s", err, stderr)
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not listen\n%s", stderr)
	}
	base := "http://" + addr

	const (
		apiKey = "sk_live_abcdefghijklmnopqrstuvwxyz234567"
		jwt    = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1c2VyXzEifQ.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg"
		forged = `{"time":"2026-01-01T00:00:00Z","level":"ERROR","msg":"forged line"}`
	)
	secrets := []string{apiKey[len("sk_live_"):], jwt, "token-in-the-query"}
	malformed := `{"query": "{ me }", "apiKey": "` + apiKey + "\"\n" + forged + "\nAuthorization: Bearer " + jwt + "\naccess_token=token-in-the-query"

	coded := func(t *testing.T, res *http.Response) {
		t.Helper()
		var body struct {
			Errors []struct {
				Extensions map[string]any `json:"extensions"`
			} `json:"errors"`
		}
		if err := json.NewDecoder(res.Body).Decode(&body); err != nil || len(body.Errors) == 0 {
			t.Fatalf("%d: not a GraphQL error (%v)", res.StatusCode, err)
		}
		if res.StatusCode != http.StatusBadRequest || body.Errors[0].Extensions["code"] != "VALIDATION_ERROR" {
			t.Fatalf("%d %v, want 400 VALIDATION_ERROR", res.StatusCode, body.Errors[0].Extensions)
		}
	}
	post := func(t *testing.T, accept string) {
		req, _ := http.NewRequest("POST", base+"/graphql", strings.NewReader(malformed))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", accept)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		coded(t, res)
	}
	t.Run("POST", func(t *testing.T) { post(t, "application/json") })
	t.Run("SSE", func(t *testing.T) { post(t, "text/event-stream") })
	t.Run("GET", func(t *testing.T) {
		res, err := http.Get(base + "/graphql?query=" + url.QueryEscape("{ me }") + "&variables=" + url.QueryEscape(malformed))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		coded(t, res)
	})
	t.Run("graphql-ws", func(t *testing.T) {
		wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
		defer wcancel()
		conn, _, err := websocket.Dial(wctx, "ws://"+addr+"/graphql", &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.CloseNow()
		if err := conn.Write(wctx, websocket.MessageText, []byte(malformed)); err != nil {
			t.Fatal(err)
		}
		// The server closes a connection whose first message is not
		// JSON: read until it does.
		for {
			if _, _, err := conn.Read(wctx); err != nil {
				if websocket.CloseStatus(err) == -1 && wctx.Err() != nil {
					t.Fatalf("the connection stayed open: %v", err)
				}
				break
			}
		}
	})
	t.Run("WebSocket handshake gqlgen logs", func(t *testing.T) {
		// A key that is not one: gqlgen logs the handshake's error, the
		// key quoted in it, with the standard logger.
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET /graphql HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"+
			"Sec-WebSocket-Key: %s %s Bearer %s\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n", addr, apiKey, forged, jwt)
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode < 400 {
			t.Fatalf("handshake answered %d", res.StatusCode)
		}
	})

	// Stopped, the server has written every line it will.
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	out := stderr.String()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var fromStdLog bool
	for i, line := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("line %d is not one JSON object: %q", i+1, line)
			continue
		}
		for _, k := range []string{"time", "level", "msg"} {
			if _, ok := rec[k]; !ok {
				t.Errorf("line %d has no %q: %s", i+1, k, line)
			}
		}
		if rec["msg"] == "forged line" {
			t.Errorf("line %d is a forged line: %s", i+1, line)
		}
		if msg, _ := rec["msg"].(string); strings.Contains(msg, "unable to upgrade") {
			fromStdLog = true
		}
	}
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("the log shows %q in clear", s)
		}
	}
	if !fromStdLog {
		t.Errorf("no line from the standard logger (gqlgen's refused handshake)")
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("log:\n%s", out)
	}
}

// TestNothingLoggedBeforeMain: no package writes to stderr while the
// program initialises, before the server's logger is set up (the metrics
// library up to v1.44 logged a raw "INFO: metrics: disable exposing PSI
// metrics" line there on hosts without /sys/fs/cgroup/cpu.pressure). The
// test binary initialises the same packages as the server: run again with
// only this test selected, which then does nothing, it must write nothing
// to stderr.
func TestNothingLoggedBeforeMain(t *testing.T) {
	if os.Getenv("ITEMSVC_INIT_ONLY") != "" {
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNothingLoggedBeforeMain$")
	cmd.Env = append(os.Environ(), "ITEMSVC_INIT_ONLY=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Fatalf("written to stderr before main:\n%s", stderr.String())
	}
}
