package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"

	"github.com/acme/itemsvc/internal/config"
	"github.com/acme/itemsvc/internal/secrets"
	"github.com/acme/itemsvc/internal/testutil"
	"github.com/acme/itemsvc/internal/tracing"
)

// manifestDir holds the Kubernetes examples (docs/deploy.md): PostgreSQL
// at its top, SQLite in sqlite/.
const manifestDir = "../../deploy/kubernetes"

// deployDoc is the deploy page, whose YAML examples (the backup CronJob)
// are held to the same checks.
const deployDoc = "../../docs/deploy.md"

// manifest is one YAML document and where it came from.
type manifest struct {
	source string
	yaml   []byte
}

// readManifests returns every document of every file under deploy/kubernetes
// (and its folders) and every yaml block of docs/deploy.md.
func readManifests(t *testing.T) []manifest {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(manifestDir, "*.yaml"))
	more, err2 := filepath.Glob(filepath.Join(manifestDir, "*", "*.yaml"))
	files = append(files, more...)
	if err = errors.Join(err, err2); err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", manifestDir, err)
	}
	var out []manifest
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
			if strings.TrimSpace(doc) != "" {
				rel, _ := filepath.Rel(manifestDir, f)
				out = append(out, manifest{fmt.Sprintf("%s#%d", rel, i), []byte(doc)})
			}
		}
	}
	page, err := os.ReadFile(deployDoc)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(page, -1) {
		out = append(out, manifest{fmt.Sprintf("docs/deploy.md yaml block %d", i+1), m[1]})
	}
	return out
}

// server is what the binary really serves and reads, taken from the code:
// the router's GET routes, the configuration's variables (and the OTEL_*
// ones tracing honours), the commands, and the default port.
type serverFacts struct {
	routes   map[string]bool
	env      map[string]bool
	commands map[string]bool
	defPort  int
}

func facts(t *testing.T) serverFacts {
	t.Helper()
	f := serverFacts{routes: map[string]bool{}, env: map[string]bool{}, commands: map[string]bool{}}
	e := testutil.New(t).App.Handler.(*gin.Engine)
	for _, r := range e.Routes() {
		if r.Method == http.MethodGet {
			f.routes[r.Path] = true
		}
	}
	for _, v := range config.Variables() {
		f.env[v] = true
	}
	for _, v := range tracing.Variables {
		f.env[v] = true
	}
	for c := range commands {
		f.commands[c] = true
	}
	var cfg config.Config
	fs := flag.NewFlagSet("defaults", flag.ContinueOnError)
	if err := cfg.Register(fs).Resolve(func(string) (string, bool) { return "", false }); err != nil {
		t.Fatal(err)
	}
	f.defPort = portOf(cfg.Addr)
	return f
}

// checkManifests decodes each document strictly into its Kubernetes type
// (an unknown or misspelt field fails) and checks what it says of the
// server against facts.
func checkManifests(docs []manifest, f serverFacts) []error {
	var errs []error
	fail := func(m manifest, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", m.source, fmt.Sprintf(format, args...)))
	}
	kinds := map[string]int{}
	// What the pods use and what the manifests define: every volume a
	// container mounts is one of its pod's, every claim and Secret a pod
	// names is among the manifests.
	claims, secrets := map[string]bool{}, map[string]bool{}
	type use struct {
		m    manifest
		what string
		name string
	}
	var uses []use
	mounted := map[string]bool{} // Secrets mounted as files, whose keys are no variables
	var envSecrets []struct {
		m    manifest
		keys []string
	}
	for _, m := range docs {
		var meta struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal(m.yaml, &meta); err != nil {
			fail(m, "not YAML: %v", err)
			continue
		}
		kinds[meta.Kind]++
		var pods []corev1.PodSpec
		switch meta.Kind {
		case "Deployment":
			var d appsv1.Deployment
			if err := yaml.UnmarshalStrict(m.yaml, &d); err != nil {
				fail(m, "%v", err)
				continue
			}
			// SQLite: one server per file, on a ReadWriteOnce volume: one
			// replica, the old pod gone before the new one starts.
			sqlite := slices.ContainsFunc(d.Spec.Template.Spec.Containers, func(c corev1.Container) bool {
				return slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool {
					return e.Name == "DATABASE_URL" && strings.HasPrefix(e.Value, "sqlite:")
				})
			})
			switch {
			case sqlite && (d.Spec.Replicas == nil || *d.Spec.Replicas != 1):
				fail(m, "SQLite: want exactly one replica")
			case sqlite && d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType:
				fail(m, "SQLite: want strategy Recreate (one pod on the volume at a time)")
			case !sqlite && (d.Spec.Replicas == nil || *d.Spec.Replicas < 2):
				fail(m, "want at least two replicas")
			}
			pods = append(pods, d.Spec.Template.Spec)
			for _, c := range d.Spec.Template.Spec.Containers {
				if c.ReadinessProbe == nil || c.LivenessProbe == nil {
					fail(m, "container %s: want a readiness and a liveness probe", c.Name)
				}
				if c.Resources.Requests == nil || c.Resources.Limits == nil {
					fail(m, "container %s: want resource requests and limits", c.Name)
				}
				if c.ReadinessProbe != nil && c.ReadinessProbe.HTTPGet != nil && c.ReadinessProbe.HTTPGet.Path != "/readyz" {
					fail(m, "readiness probe on %s, want /readyz", c.ReadinessProbe.HTTPGet.Path)
				}
				if c.LivenessProbe != nil && c.LivenessProbe.HTTPGet != nil && c.LivenessProbe.HTTPGet.Path != "/healthz" {
					fail(m, "liveness probe on %s, want /healthz", c.LivenessProbe.HTTPGet.Path)
				}
			}
		case "Job":
			var j batchv1.Job
			if err := yaml.UnmarshalStrict(m.yaml, &j); err != nil {
				fail(m, "%v", err)
				continue
			}
			pods = append(pods, j.Spec.Template.Spec)
		case "CronJob":
			var j batchv1.CronJob
			if err := yaml.UnmarshalStrict(m.yaml, &j); err != nil {
				fail(m, "%v", err)
				continue
			}
			pods = append(pods, j.Spec.JobTemplate.Spec.Template.Spec)
		case "Service":
			var s corev1.Service
			if err := yaml.UnmarshalStrict(m.yaml, &s); err != nil {
				fail(m, "%v", err)
			}
		case "PodDisruptionBudget":
			var p policyv1.PodDisruptionBudget
			if err := yaml.UnmarshalStrict(m.yaml, &p); err != nil {
				fail(m, "%v", err)
			}
		case "PersistentVolumeClaim":
			var c corev1.PersistentVolumeClaim
			if err := yaml.UnmarshalStrict(m.yaml, &c); err != nil {
				fail(m, "%v", err)
				continue
			}
			claims[c.Name] = true
		case "Secret":
			var s corev1.Secret
			if err := yaml.UnmarshalStrict(m.yaml, &s); err != nil {
				fail(m, "%v", err)
				continue
			}
			secrets[s.Name] = true
			keys := slices.Collect(maps.Keys(s.StringData))
			envSecrets = append(envSecrets, struct {
				m    manifest
				keys []string
			}{m, keys})
			for k, v := range s.StringData {
				// An example value that passes would be deployed as it is,
				// and is known to everyone who read it.
				if (k == "SECRET_KEY" || k == "JWT_SECRET") && v != "" && secretsCheck(v) == nil {
					fail(m, "%s holds a value the server accepts: ship none", k)
				}
			}
		default:
			fail(m, "kind %q is not one this test knows", meta.Kind)
		}
		for _, p := range pods {
			checkPod(m, p, f, fail)
			defined := map[string]bool{}
			for _, v := range p.Volumes {
				defined[v.Name] = true
				if v.PersistentVolumeClaim != nil {
					uses = append(uses, use{m, "claim", v.PersistentVolumeClaim.ClaimName})
				}
				if v.Secret != nil {
					uses = append(uses, use{m, "Secret", v.Secret.SecretName})
					mounted[v.Secret.SecretName] = true
				}
			}
			for _, c := range append(slices.Clone(p.InitContainers), p.Containers...) {
				for _, vm := range c.VolumeMounts {
					if !defined[vm.Name] {
						fail(m, "container %s mounts the volume %s, which the pod does not define", c.Name, vm.Name)
					}
				}
				for _, e := range c.Env {
					if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
						uses = append(uses, use{m, "Secret", e.ValueFrom.SecretKeyRef.Name})
					}
				}
			}
		}
	}
	for _, u := range uses {
		if (u.what == "claim" && !claims[u.name]) || (u.what == "Secret" && !secrets[u.name]) {
			fail(u.m, "the %s %s is defined by no manifest", u.what, u.name)
		}
	}
	for _, s := range envSecrets {
		var meta struct {
			Metadata struct{ Name string } `json:"metadata"`
		}
		_ = yaml.Unmarshal(s.m.yaml, &meta)
		if mounted[meta.Metadata.Name] {
			continue
		}
		for _, k := range s.keys {
			if !f.env[k] {
				fail(s.m, "key %s is no variable the server reads", k)
			}
		}
	}
	for _, k := range []string{"Deployment", "Service", "PodDisruptionBudget", "Secret", "CronJob", "PersistentVolumeClaim"} {
		if kinds[k] == 0 {
			errs = append(errs, fmt.Errorf("no %s among the manifests", k))
		}
	}
	return errs
}

// checkPod checks a pod's containers: a command the binary has, variables
// it reads, probes on routes it serves at the port it listens on, and the
// hardening of DESIGN §9.
func checkPod(m manifest, p corev1.PodSpec, f serverFacts, fail func(manifest, string, ...any)) {
	if p.SecurityContext == nil || p.SecurityContext.RunAsNonRoot == nil || !*p.SecurityContext.RunAsNonRoot {
		fail(m, "want runAsNonRoot")
	}
	if p.AutomountServiceAccountToken == nil || *p.AutomountServiceAccountToken {
		fail(m, "want automountServiceAccountToken: false (the server never calls the Kubernetes API)")
	}
	for _, c := range append(slices.Clone(p.InitContainers), p.Containers...) {
		if len(c.Command) > 0 {
			fail(m, "container %s: command %q replaces the image's entrypoint; give args", c.Name, c.Command)
		}
		if len(c.Args) == 0 || !f.commands[c.Args[0]] {
			fail(m, "container %s: args %q do not start with a command of the server", c.Name, c.Args)
		}
		if c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
			fail(m, "container %s: want readOnlyRootFilesystem", c.Name)
		}
		if !slices.ContainsFunc(c.VolumeMounts, func(v corev1.VolumeMount) bool { return v.MountPath == "/tmp" }) {
			fail(m, "container %s: want a writable /tmp (emptyDir) beside the read-only root", c.Name)
		}
		port := f.defPort
		for _, e := range c.Env {
			if !f.env[e.Name] {
				fail(m, "container %s: variable %s is not one the server reads", c.Name, e.Name)
			}
			if e.Name == "ADDR" {
				port = portOf(e.Value)
			}
		}
		named := map[string]int{}
		for _, cp := range c.Ports {
			named[cp.Name] = int(cp.ContainerPort)
			if int(cp.ContainerPort) != port {
				fail(m, "container %s: port %d, but the server listens on %d (ADDR)", c.Name, cp.ContainerPort, port)
			}
		}
		for _, probe := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe} {
			if probe == nil || probe.HTTPGet == nil {
				continue
			}
			if !f.routes[probe.HTTPGet.Path] {
				fail(m, "container %s: probe path %s is not a route the server serves", c.Name, probe.HTTPGet.Path)
			}
			pp := probe.HTTPGet.Port.IntValue()
			if probe.HTTPGet.Port.StrVal != "" {
				pp = named[probe.HTTPGet.Port.StrVal]
			}
			if pp != port {
				fail(m, "container %s: probe port %s, but the server listens on %d", c.Name, probe.HTTPGet.Port.String(), port)
			}
		}
	}
}

func portOf(addr string) int {
	i := strings.LastIndex(addr, ":")
	n, _ := strconv.Atoi(addr[i+1:])
	return n
}

// TestKubernetesManifests: every manifest decodes strictly into its
// Kubernetes type and names only probes, ports, commands and variables the
// server has. Each drift row changes one thing to what the server does not
// know, and the check must then fail, naming it.
func TestKubernetesManifests(t *testing.T) {
	docs := readManifests(t)
	f := facts(t)
	for _, err := range checkManifests(docs, f) {
		t.Error(err)
	}
	for _, tc := range []struct{ name, from, to, want string }{
		{"readiness path", "path: /readyz", "path: /ready", "/ready"},
		{"liveness path", "path: /healthz", "path: /health", "/health"},
		{"variable name", "name: DATABASE_URL\n", "name: DATABASE_URI\n", "DATABASE_URI"},
		{"secret key", "  REDIS_URL: redis", "  REDIS_ADDR: redis", "REDIS_ADDR"},
		{"usable server secret", `SECRET_KEY: ""`, "SECRET_KEY: 9c4b0e7d2f86a1b35e0d47c9f2a86b13d5e7f90a2c4b6d8e1f3a5c7e9b0d2f41", "SECRET_KEY holds a value"},
		{"command", `args: ["migrate"]`, `args: ["migrations"]`, "migrations"},
		{"port", "containerPort: 8080", "containerPort: 8081", "8081"},
		{"misspelt field", "readinessProbe:", "readynessProbe:", "readynessProbe"},
		{"claim", "claimName: itemsvc-backups", "claimName: itemsvc-backup", "itemsvc-backup "},
		{"volume", "- name: tmp\n              mountPath: /tmp", "- name: temp\n              mountPath: /tmp", "volume temp"},
		{"sqlite replicas", "replicas: 1", "replicas: 2", "exactly one replica"},
		{"service account token", "automountServiceAccountToken: false", "automountServiceAccountToken: true", "automountServiceAccountToken"},
	} {
		t.Run("drift/"+tc.name, func(t *testing.T) {
			changed := 0
			mutated := make([]manifest, len(docs))
			for i, m := range docs {
				mutated[i] = m
				if bytes.Contains(m.yaml, []byte(tc.from)) {
					mutated[i].yaml = bytes.Replace(m.yaml, []byte(tc.from), []byte(tc.to), 1)
					changed++
				}
			}
			if changed == 0 {
				t.Fatalf("no manifest holds %q to change", tc.from)
			}
			errs := checkManifests(mutated, f)
			if !slices.ContainsFunc(errs, func(err error) bool { return strings.Contains(err.Error(), tc.want) }) {
				t.Errorf("changing %q to %q went unnoticed: %v", tc.from, tc.to, errs)
			}
		})
	}
}

// TestKubernetesSecretRefused: a server started with the example Secret as
// it ships (SECRET_KEY empty, on PostgreSQL), or with the placeholder an
// earlier example shipped, refuses to start and says how to make a secret.
func TestKubernetesSecretRefused(t *testing.T) {
	var shipped corev1.Secret
	for _, m := range readManifests(t) {
		if bytes.Contains(m.yaml, []byte("kind: Secret")) {
			if err := yaml.UnmarshalStrict(m.yaml, &shipped); err != nil {
				t.Fatal(err)
			}
		}
	}
	value, ok := shipped.StringData["SECRET_KEY"]
	if !ok {
		t.Fatal("the example Secret has no SECRET_KEY")
	}
	for _, tc := range []struct{ name, value string }{
		{"as shipped", value},
		{"the placeholder", secrets.Placeholders[0]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("SECRET_KEY", tc.value)
			// The example's database, on an address where nothing listens.
			_, stderr, err := runCmd(t, "serve", "-database-url", "postgres://itemsvc@127.0.0.1:1/itemsvc", "-addr", "127.0.0.1:0")
			if err == nil {
				t.Fatal("the server started")
			}
			if msg := err.Error() + stderr; !strings.Contains(msg, "SECRET_KEY") || !strings.Contains(msg, "openssl rand -hex 32") {
				t.Fatalf("refusal %q (stderr %q) does not say how to make a SECRET_KEY", err, stderr)
			}
		})
	}
}

// secretsCheck is secrets.Check, under a name checkManifests' own map of
// Secrets does not hide.
var secretsCheck = secrets.Check
