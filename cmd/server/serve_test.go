package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acme/itemsvc/internal/testutil"
)

// server is a running `server serve` on a real listener.
type server struct {
	addr   string
	stderr *testutil.LockedBuffer
	cancel context.CancelFunc // what SIGTERM does
	done   chan error         // what serve returned
}

// startServe runs the serve command with args until the test cancels it.
func startServe(t *testing.T, args []string, wrap func(http.Handler) http.Handler) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{stderr: &testutil.LockedBuffer{}, cancel: cancel, done: make(chan error, 1)}
	addrc := make(chan string, 1)
	hooks := serveHooks{listening: func(a string) { addrc <- a }, wrap: wrap}
	go func() { s.done <- serveWith(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), s.stderr, hooks) }()
	t.Cleanup(func() {
		cancel()
		<-s.done
	})
	select {
	case s.addr = <-addrc:
	case err := <-s.done:
		s.done <- err
		t.Fatalf("serve ended before listening: %v\n%s", err, s.stderr)
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not listen\n%s", s.stderr)
	}
	return s
}

// TestGracefulShutdown: a request in flight when the server is told to stop
// (the signal context cancelled, as SIGTERM does) completes with 200 and its
// data, new connections are refused meanwhile, and serve returns nil (exit 0).
func TestGracefulShutdown(t *testing.T) {
	dbURL := testutil.DatabaseURL(t)
	// The slow request waits, inside the server, until the test lets it go on
	// to the real router.
	started, release := make(chan struct{}), make(chan struct{})
	wrap := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Test-Slow") != "" {
				close(started)
				<-release
			}
			h.ServeHTTP(w, r)
		})
	}
	s := startServe(t, []string{"-database-url", dbURL, "-shutdown-timeout", "30s"}, wrap)
	base := "http://" + s.addr
	// The first start on an empty database prints the admin's key.
	key := regexp.MustCompile(`sk_live_[a-z2-7]{32}`).FindString(s.stderr.String())
	if key == "" {
		t.Fatalf("no first-start key printed:\n%s", s.stderr)
	}
	token := loginOver(t, http.DefaultClient, base, key)

	type result struct {
		status int
		header http.Header
		body   string
		err    error
	}
	resc := make(chan result, 1)
	go func() {
		req, _ := http.NewRequest("GET", base+"/v1/users/me", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("X-Test-Slow", "1")
		res, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
		if err != nil {
			resc <- result{err: err}
			return
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		resc <- result{status: res.StatusCode, header: res.Header, body: string(b), err: err}
	}()
	<-started

	s.cancel() // SIGTERM
	refused := testutil.Eventually(t, 10*time.Second, func() bool {
		c, err := net.DialTimeout("tcp", s.addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	if !refused {
		t.Error("the server still accepts connections after SIGTERM")
	}
	select {
	case err := <-s.done:
		t.Fatalf("serve returned (%v) before its in-flight request finished", err)
	default:
	}
	close(release)

	r := <-resc
	if r.err != nil || r.status != 200 || !strings.Contains(r.body, `"email":"admin@localhost"`) {
		t.Fatalf("in-flight request: status %d, err %v, body %s", r.status, r.err, r.body)
	}
	testutil.AssertContract(t, "GET", "/v1/users/me", http.Header{"Authorization": {"Bearer " + token}}, nil,
		&testutil.Response{Status: r.status, Header: r.header, Body: []byte(r.body)})
	select {
	case err := <-s.done:
		s.done <- err // for Cleanup
		if err != nil {
			t.Fatalf("serve returned %v, want nil (exit 0)", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not return after its last request")
	}
	for _, msg := range []string{`"msg":"shutting down"`, `"msg":"stopped"`} {
		if !strings.Contains(s.stderr.String(), msg) {
			t.Errorf("log lacks %s:\n%s", msg, s.stderr)
		}
	}
}

// TestServeModes starts the binary's serve path as an operator would: plain
// HTTP (said in the log, no HSTS), HTTPS with a generated certificate
// (HTTP/2, TLS 1.2 at least, HSTS), and the sandbox (printed test keys that
// log in, responses marked).
func TestServeModes(t *testing.T) {
	cert, key, pool := selfSigned(t)
	cases := []struct {
		name      string
		args      []string
		tls       bool
		wantProto int
		header    map[string]string
		log       []string
	}{
		{name: "plain HTTP", wantProto: 1,
			header: map[string]string{"Strict-Transport-Security": "", "X-Environment": ""},
			log:    []string{`"tls":false`, "serving plain HTTP"}},
		{name: "TLS", args: []string{"-tls-cert-file", cert, "-tls-key-file", key}, tls: true, wantProto: 2,
			header: map[string]string{"Strict-Transport-Security": "max-age=63072000; includeSubDomains"},
			log:    []string{`"tls":true`}},
		{name: "sandbox", args: []string{"-sandbox", "true"}, wantProto: 1,
			header: map[string]string{"X-Environment": "sandbox"},
			log:    []string{"Sandbox: demo data resets every 24h0m0s", "alice@sandbox.test", `"sandbox":true`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := startServe(t, append([]string{"-database-url", testutil.DatabaseURL(t)}, tc.args...), nil)
			client := &http.Client{Transport: &http.Transport{ForceAttemptHTTP2: true}}
			base := "http://" + s.addr
			if tc.tls {
				client.Transport = &http.Transport{ForceAttemptHTTP2: true, TLSClientConfig: &tls.Config{RootCAs: pool}}
				base = "https://" + s.addr
			}
			res, err := client.Get(base + "/readyz")
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != 200 || res.ProtoMajor != tc.wantProto {
				t.Errorf("GET /readyz: %d over HTTP/%d, want 200 over HTTP/%d", res.StatusCode, res.ProtoMajor, tc.wantProto)
			}
			for k, v := range tc.header {
				if got := res.Header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			for _, want := range tc.log {
				if !strings.Contains(s.stderr.String(), want) {
					t.Errorf("start-up output lacks %q:\n%s", want, s.stderr)
				}
			}
			if tc.tls {
				_, err := tls.Dial("tcp", s.addr, &tls.Config{RootCAs: pool, MaxVersion: tls.VersionTLS11})
				if err == nil {
					t.Error("a TLS 1.1 client was accepted")
				}
			}
			if tc.name == "sandbox" {
				keys := regexp.MustCompile(`sk_test_[a-z2-7]{32}`).FindAllString(s.stderr.String(), -1)
				if len(keys) != 3 {
					t.Fatalf("%d sandbox keys printed, want 3:\n%s", len(keys), s.stderr)
				}
				for _, k := range keys {
					loginOver(t, client, base, k)
				}
				if strings.Contains(s.stderr.String(), "admin@localhost") {
					t.Error("a sandbox made the first-start admin too")
				}
			}
		})
	}
}

// loginOver logs in over the network and returns the access token.
func loginOver(t *testing.T, c *http.Client, base, key string) string {
	t.Helper()
	reqBody := `{"api_key":"` + key + `"}`
	res, err := c.Post(base+"/v1/auth/login", "application/json", strings.NewReader(reqBody))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	testutil.AssertContract(t, "POST", "/v1/auth/login", http.Header{"Content-Type": {"application/json"}}, []byte(reqBody),
		&testutil.Response{Status: res.StatusCode, Header: res.Header, Body: raw})
	var body struct {
		Data struct {
			AccessToken string `json:"access_token"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &body); err != nil || res.StatusCode != 200 {
		t.Fatalf("login: %d %v", res.StatusCode, err)
	}
	return body.Data.AccessToken
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their paths and a pool that trusts the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "itemsvc test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(c)
	return certFile, keyFile, pool
}

// TestShutdownEndsStreams: an open event stream does not hold the drain at
// SIGTERM: it ends at once with an UNAVAILABLE error event, and serve
// returns nil well within a long SHUTDOWN_TIMEOUT.
func TestShutdownEndsStreams(t *testing.T) {
	s := startServe(t, []string{"-database-url", testutil.DatabaseURL(t), "-shutdown-timeout", "60s"}, nil)
	base := "http://" + s.addr
	key := regexp.MustCompile(`sk_live_[a-z2-7]{32}`).FindString(s.stderr.String())
	token := loginOver(t, http.DefaultClient, base, key)
	req, _ := http.NewRequest("GET", base+"/v1/events/stream", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("stream: %v %v", res, err)
	}
	defer res.Body.Close()

	s.cancel()                      // SIGTERM
	body, _ := io.ReadAll(res.Body) // ends when the server ends the stream
	if !strings.Contains(string(body), "event: error") || !strings.Contains(string(body), `"UNAVAILABLE"`) {
		t.Fatalf("stream ended with %q", body)
	}
	select {
	case err := <-s.done:
		s.done <- err // for Cleanup
		if err != nil {
			t.Fatalf("serve returned %v, want nil (exit 0)", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not return: the stream held the drain")
	}
}
