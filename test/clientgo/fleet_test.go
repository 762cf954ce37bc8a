// Package clientgo holds client-go and controller-runtime programs run against the fleet: the vitest file
// test/e2e/client-go.test.ts starts the simulated fleet on Node and in workerd and runs each test here
// with FLEET_URL (the fleet's root) and FLEET_CONTROL (a URL through which a test changes the simulated
// clusters: test/helpers/simcontrol.ts) in the environment. test/real/client-go.test.ts runs them against
// the real bed's fleets (FLEET_BED=real, the fleet's CA and a client certificate in FLEET_CA_FILE,
// FLEET_CERT_FILE, FLEET_KEY_FILE; its control URL is test/real/control.ts).
package clientgo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	jsonType  = "application/json"
	protoType = "application/vnd.kubernetes.protobuf"
	// the label and annotation under which the fleet shows an object's cluster
	clusterLabel = "fleet.karmada.io/cluster"
)

var runtimeName = os.Getenv("FLEET_RUNTIME")

// realBed: the clusters are the real bed's kube-apiservers, which cannot be cut, expired, taken down or
// joined through the control URL (test/real/control.ts)
var realBed = os.Getenv("FLEET_BED") == "real"

// onSim says whether the clusters are simulated; on the real bed it logs what the test leaves out and why.
func onSim(t testing.TB, why string) bool {
	t.Helper()
	if realBed {
		t.Logf("not on the real bed: %s", why)
	}
	return !realBed
}

// withTLS adds the fleet's CA and the client certificate the environment names (the real bed's fleets).
func withTLS(cfg *rest.Config) *rest.Config {
	cfg.TLSClientConfig = rest.TLSClientConfig{
		CAFile: os.Getenv("FLEET_CA_FILE"), CertFile: os.Getenv("FLEET_CERT_FILE"), KeyFile: os.Getenv("FLEET_KEY_FILE"),
	}
	return cfg
}

// fleetHTTP is an http.Client that reaches the fleet as the tests' user (its TLS credentials, if any).
func fleetHTTP(t testing.TB) *http.Client {
	t.Helper()
	c, err := rest.HTTPClientFor(fleetConfig(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fleetConfig is a rest.Config for the fleet's root URL with the given wire format for bodies.
func fleetConfig(t testing.TB, contentType string) *rest.Config {
	t.Helper()
	url := os.Getenv("FLEET_URL")
	if url == "" {
		t.Fatal("FLEET_URL is not set: run these tests through test/e2e/client-go.test.ts")
	}
	cfg := withTLS(&rest.Config{Host: url, QPS: 200, Burst: 400, Timeout: 60 * time.Second})
	if contentType != "" {
		cfg.ContentType = contentType
		if contentType == protoType {
			cfg.AcceptContentTypes = protoType + "," + jsonType
		}
	}
	return cfg
}

func clientset(t testing.TB, contentType string) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(fleetConfig(t, contentType))
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// warnedClientset is a clientset for the fleet (JSON) that appends each Warning header it gets to *warnings.
func warnedClientset(t testing.TB, warnings *[]string) *kubernetes.Clientset {
	t.Helper()
	cfg := fleetConfig(t, "")
	cfg.WarningHandler = warningFunc(func(w string) { *warnings = append(*warnings, w) })
	return kubernetes.NewForConfigOrDie(cfg)
}

// control asks the test driver to change the simulated clusters (op and args as in simcontrol.ts); out, if
// not nil, receives the JSON answer.
func control(t testing.TB, op string, args map[string]any, out any) {
	t.Helper()
	if op == "down" {
		restoreOnCleanup(t, fmt.Sprint(args["cluster"]))
	}
	base := os.Getenv("FLEET_CONTROL")
	if base == "" {
		t.Fatal("FLEET_CONTROL is not set: run these tests through test/e2e/client-go.test.ts")
	}
	body, _ := json.Marshal(args)
	res, err := http.Post(base+"/"+op, jsonType, bytes.NewReader(body))
	if err != nil {
		t.Fatalf("control %s: %v", op, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("control %s %v: %d %s", op, args, res.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("control %s: %v in %s", op, err, b)
		}
	}
}

// restored holds, per test, the members it took down that its cleanup brings back.
var restored sync.Map // testing.TB -> *sync.Map of cluster names

// restoreOnCleanup: a test that takes a member down leaves the fleet whole for the next test, even when
// it fails midway. The member comes back up, and the cleanup waits until a fleet list is answered by every
// cluster: the fleet keeps Karmada's membership for members.refreshSeconds (10 s), so a member listed while
// it was down stays "not Ready in Karmada" that long after it is back, and a next test writing to it at
// once would be refused.
func restoreOnCleanup(t testing.TB, cluster string) {
	names, loaded := restored.LoadOrStore(t, &sync.Map{})
	names.(*sync.Map).Store(cluster, true)
	if loaded {
		return
	}
	t.Cleanup(func() {
		restored.Delete(t)
		names.(*sync.Map).Range(func(c, _ any) bool {
			control(t, "up", map[string]any{"cluster": c}, nil)
			return true
		})
		awaitWholeFleet(t, 60*time.Second)
	})
}

// awaitWholeFleet waits until a list through the fleet comes back with no Warning (every cluster answered).
func awaitWholeFleet(t testing.TB, timeout time.Duration) {
	t.Helper()
	var warnings []string
	cs := warnedClientset(t, &warnings)
	var err error
	var first []string
	start := time.Now()
	eventually(t, timeout, func() bool {
		warnings = nil
		_, err = cs.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
		if first == nil {
			first = append([]string{}, warnings...)
		}
		return err == nil && len(warnings) == 0
	}, func() string { return fmt.Sprintf("the fleet whole again: err %v, warnings %q", err, warnings) })
	if len(first) > 0 {
		t.Logf("the fleet was whole again after %s (at first: %q)", time.Since(start).Round(time.Millisecond), first)
	}
}

// simObject is what the control URL says about an object in one simulated cluster.
type simObject struct {
	Cluster         string            `json:"cluster"`
	Name            string            `json:"name"`
	Namespace       string            `json:"namespace"`
	ResourceVersion string            `json:"resourceVersion"`
	Labels          map[string]string `json:"labels"`
	Annotations     map[string]string `json:"annotations"`
	Data            map[string]string `json:"data"`
}

// simList is every cluster's objects of a resource in a namespace, straight from the simulated clusters.
func simList(t testing.TB, resource, ns string) []simObject {
	t.Helper()
	var out []simObject
	control(t, "list", map[string]any{"resource": resource, "ns": ns}, &out)
	return out
}

// namespace creates ns in the control plane and every member, named for the test and the runtime.
func namespace(t testing.TB, base string) string {
	t.Helper()
	ns := fmt.Sprintf("%s-%s", base, runtimeName)
	control(t, "namespace", map[string]any{"name": ns}, nil)
	return ns
}

// fleetName is the name under which the fleet shows `name` of `cluster`.
func fleetName(name, cluster string) string {
	if cluster == "karmada" {
		return name
	}
	return name + ".clusterspace." + cluster
}

// eventually polls cond until it holds, failing after timeout with what() describing the last state.
func eventually(t testing.TB, timeout time.Duration, cond func() bool, what func() string) {
	t.Helper()
	end := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("not met in %s: %s", timeout, what())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func metavCfg(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }

// fleetMembers is the membership the fleet itself holds now (its status page's API, /fleet/api/clusters):
// the clusters its composite resourceVersions are made over. A member that left Karmada stays in it until
// the fleet's membership is listed again, and a resourceVersion issued meanwhile names the old set.
func fleetMembers(t testing.TB) []string {
	t.Helper()
	res, err := fleetHTTP(t).Get(os.Getenv("FLEET_URL") + "/fleet/api/clusters")
	if err != nil {
		t.Fatalf("fleet clusters: %v", err)
	}
	defer res.Body.Close()
	var list struct {
		Clusters []struct {
			Name string `json:"name"`
		} `json:"clusters"`
	}
	if err := json.NewDecoder(res.Body).Decode(&list); err != nil {
		t.Fatalf("fleet clusters: %v", err)
	}
	names := make([]string, 0, len(list.Clusters))
	for _, c := range list.Clusters {
		names = append(names, c.Name)
	}
	return names
}
