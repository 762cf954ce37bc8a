package clientgo

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
)

// runningPod finds a running pod of member2 with an "http" port, by its fleet name.
func runningPod(t *testing.T, cs *kubernetes.Clientset) (*corev1.Pod, int32) {
	t.Helper()
	pods, err := cs.CoreV1().Pods("shop").List(ctxFor(t, 30*time.Second), metav1.ListOptions{LabelSelector: clusterLabel + "=member2"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Status.Phase != corev1.PodRunning {
			continue
		}
		for _, c := range p.Spec.Containers {
			for _, port := range c.Ports {
				if port.Name == "http" {
					return p, port.ContainerPort
				}
			}
		}
	}
	t.Fatal("no running pod with an http port in member2's shop")
	return nil, 0
}

func execURL(cs *kubernetes.Clientset, pod *corev1.Pod, stdin bool, command ...string) *url.URL {
	return cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(pod.Namespace).Name(pod.Name).
		SubResource("exec").VersionedParams(&corev1.PodExecOptions{
		Container: pod.Spec.Containers[0].Name, Command: command, Stdin: stdin, Stdout: true, Stderr: true,
	}, scheme.ParameterCodec).URL()
}

func runExec(ex remotecommand.Executor, stdin string) (string, string, error) {
	var out, errOut bytes.Buffer
	opts := remotecommand.StreamOptions{Stdout: &out, Stderr: &errOut}
	if stdin != "" {
		opts.Stdin = strings.NewReader(stdin)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := ex.StreamWithContext(ctx, opts)
	return out.String(), errOut.String(), err
}

// remotecommand by fleet name: the WebSocket executor (v5.channel.k8s.io, what kubectl 1.35 tries
// first), with stdin and without; the SPDY executor, which client-go falls back to when the WebSocket
// upgrade fails (httpstream.IsUpgradeFailure): on Node the fleet relays it; in workerd, which cannot relay
// a raw HTTP upgrade, the fleet refuses it with a Status that client-go reports as the error; and the
// fallback executor kubectl uses, which works on both.
func TestExec(t *testing.T) {
	cfg := fleetConfig(t, "")
	cs := clientset(t, "")
	pod, _ := runningPod(t, cs)

	ws, err := remotecommand.NewWebSocketExecutor(cfg, "GET", execURL(cs, pod, false, "echo", "hi from", "client-go").String())
	if err != nil {
		t.Fatal(err)
	}
	if out, errOut, err := runExec(ws, ""); err != nil || out != "hi from client-go\n" {
		t.Fatalf("WebSocket exec: %v stdout %q stderr %q", err, out, errOut)
	}
	wsIn, _ := remotecommand.NewWebSocketExecutor(cfg, "GET", execURL(cs, pod, true, "cat").String())
	if !realBed || stdinEndsInMember(t, pod) {
		if out, errOut, err := runExec(wsIn, "line one\nline two\n"); err != nil || out != "line one\nline two\n" {
			t.Fatalf("WebSocket exec with stdin: %v stdout %q stderr %q", err, out, errOut)
		}
	}

	spdyEx, err := remotecommand.NewSPDYExecutor(cfg, "POST", execURL(cs, pod, false, "echo", "over spdy"))
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runExec(spdyEx, "")
	if runtimeName == "workerd" {
		if err == nil || !strings.Contains(err.Error(), "SPDY") {
			t.Fatalf("SPDY exec in workerd: want the fleet's refusal naming SPDY, got %v (stdout %q)", err, out)
		}
		t.Logf("SPDY in workerd: %v", err)
	} else if err != nil || out != "over spdy\n" {
		t.Fatalf("SPDY exec: %v stdout %q stderr %q", err, out, errOut)
	}

	// kubectl's way: WebSocket first, SPDY only on an upgrade failure
	wsFirst, _ := remotecommand.NewWebSocketExecutor(cfg, "GET", execURL(cs, pod, false, "echo", "fallback").String())
	fb, err := remotecommand.NewFallbackExecutor(wsFirst, spdyEx, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		t.Fatal(err)
	}
	if out, errOut, err := runExec(fb, ""); err != nil || out != "fallback\n" {
		t.Fatalf("fallback exec: %v stdout %q stderr %q", err, out, errOut)
	}
}

// portforward by fleet name, as kubectl port-forward does it: client-go's SPDY-over-WebSocket dialer
// (the PortForwardWebsockets tunnel, SPDY/3.1+portforward.k8s.io inside a WebSocket), and the plain
// SPDY dialer (on Node; refused with a Status in workerd); the local port answers as the pod's.
func TestPortForward(t *testing.T) {
	cfg := fleetConfig(t, "")
	cs := clientset(t, "")
	pod, port := runningPod(t, cs)
	u := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(pod.Namespace).Name(pod.Name).SubResource("portforward").URL()

	wsDialer, err := portforward.NewSPDYOverWebsocketDialer(u, cfg)
	if err != nil {
		t.Fatal(err)
	}
	forward(t, "websocket", wsDialer, port, pod.Name)

	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	spdyDialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, "POST", u)
	if runtimeName == "workerd" {
		_, _, err := spdyDialer.Dial(portforward.PortForwardProtocolV1Name)
		if err == nil || !strings.Contains(err.Error(), "SPDY") {
			t.Fatalf("SPDY port-forward in workerd: want the fleet's refusal naming SPDY, got %v", err)
		}
		t.Logf("SPDY in workerd: %v", err)
	} else {
		forward(t, "spdy", spdyDialer, port, pod.Name)
	}
	wsAgain, _ := portforward.NewSPDYOverWebsocketDialer(u, cfg)
	forward(t, "fallback", portforward.NewFallbackDialer(wsAgain, spdyDialer, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	}), port, pod.Name)
}

func forward(t *testing.T, how string, dialer httpstream.Dialer, port int32, podName string) {
	t.Helper()
	stop, ready := make(chan struct{}), make(chan struct{})
	var out, errOut bytes.Buffer
	pf, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", port)}, stop, ready, &out, &errOut)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- pf.ForwardPorts() }()
	defer func() {
		close(stop)
		<-done
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("%s port-forward: %v (%s)", how, err, errOut.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("%s port-forward not ready: %s", how, errOut.String())
	}
	ports, err := pf.GetPorts()
	if err != nil || len(ports) != 1 {
		t.Fatalf("%s: ports %v %v", how, ports, err)
	}
	target, client := fmt.Sprintf("http://127.0.0.1:%d/", ports[0].Local), &http.Client{Timeout: 20 * time.Second}
	if realBed {
		// kwok forwards every pod port to its own server, which speaks TLS with a certificate for its
		// member's address, not 127.0.0.1: the check is that the forward carries kwok's answer
		target = fmt.Sprintf("https://127.0.0.1:%d/healthz", ports[0].Local)
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	}
	for i := 0; i < 2; i++ { // two connections through one forward
		res, err := client.Get(target)
		if err != nil {
			t.Fatalf("%s: GET through the forward: %v (%s)", how, err, errOut.String())
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		// the pod answers with its own (cluster) name
		plain := strings.SplitN(podName, ".clusterspace.", 2)[0]
		if realBed && (res.StatusCode != 200 || strings.TrimSpace(string(body)) != "ok") {
			t.Fatalf("%s: kwok's /healthz through the forward answered %d %q", how, res.StatusCode, body)
		}
		if !realBed && (res.StatusCode != 200 || !strings.Contains(string(body), "Hello from "+plain)) {
			t.Fatalf("%s: GET answered %d %q", how, res.StatusCode, body)
		}
	}
}

// stdinEndsInMember: on the real bed, whether `cat` exec'd straight in member2 (its own API server, with
// the admin kubeconfig in FLEET_MEMBER2_KUBECONFIG, no fleet) ends at the end of its stdin. kwok runs the
// command on the host; if the member itself never ends it, the fleet cannot be asked to.
func stdinEndsInMember(t *testing.T, pod *corev1.Pod) bool {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("FLEET_MEMBER2_KUBECONFIG"))
	if err != nil {
		t.Fatalf("member2's kubeconfig: %v", err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	plain := pod.DeepCopy()
	plain.Name = strings.SplitN(pod.Name, ".clusterspace.", 2)[0]
	ex, err := remotecommand.NewWebSocketExecutor(cfg, "GET", execURL(cs, plain, true, "cat").String())
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runExec(ex, "line one\nline two\n")
	if err != nil || out != "line one\nline two\n" {
		t.Logf("not through the fleet either: member2 itself, WebSocket exec of cat with stdin: %v stdout %q stderr %q", err, out, errOut)
		return false
	}
	return true
}
