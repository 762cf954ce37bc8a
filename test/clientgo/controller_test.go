package clientgo

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"fleet-apiserver/examples/controller/annotator"
)

const managedLabel = "fleet.example.io/managed"

// controller-runtime's log goes to the test's output (shown when a test fails)
var setLogger sync.Once

// deploymentIn writes a Deployment straight into one simulated cluster.
func deploymentIn(t testing.TB, cluster, ns, name string, replicas int32, managed bool) {
	t.Helper()
	lbl := map[string]string{"app": name}
	d := appsv1.Deployment{Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To(replicas),
		Selector: &metav1.LabelSelector{MatchLabels: lbl},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: lbl},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
	}}
	obj := map[string]any{"spec": d.Spec}
	args := map[string]any{"cluster": cluster, "resource": "deployments", "ns": ns, "name": name, "object": obj}
	if managed {
		args["labels"] = map[string]string{managedLabel: "true"}
	}
	control(t, "put", args, nil)
}

// annotationsIn reads a Deployment's annotations straight from its simulated cluster.
func annotationsIn(t testing.TB, cluster, ns, name string) map[string]string {
	t.Helper()
	var o *struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	control(t, "get", map[string]any{"cluster": cluster, "resource": "deployments", "ns": ns, "name": name}, &o)
	if o == nil {
		return nil
	}
	return o.Metadata.Annotations
}

type runningManager struct {
	id      string
	cancel  context.CancelFunc
	done    chan error
	mu      sync.Mutex
	written []string
}

// startManager runs a controller-runtime manager at the fleet's root: its cache holds only managed
// Deployments of `ns` (a label selector and a field selector, sent on its list and watch), and the
// annotator (examples/controller) reconciles them; with leader election over a Lease in `ns`.
func startManager(t *testing.T, ns, id string) *runningManager {
	t.Helper()
	setLogger.Do(func() { ctrl.SetLogger(zap.New(zap.UseDevMode(true))) })
	cfg := fleetConfig(t, protoType)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{&appsv1.Deployment{}: {
			Label: labels.SelectorFromSet(labels.Set{managedLabel: "true"}),
			Field: fields.OneTermEqualSelector("metadata.namespace", ns),
		}}},
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		LeaderElection:                true,
		LeaderElectionID:              "fleet-annotator",
		LeaderElectionNamespace:       ns,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 ptr.To(4 * time.Second),
		RenewDeadline:                 ptr.To(3 * time.Second),
		RetryPeriod:                   ptr.To(300 * time.Millisecond),
		Logger:                        log.Log.WithName(id),
	})
	if err != nil {
		t.Fatal(err)
	}
	m := &runningManager{id: id, done: make(chan error, 1)}
	r := &annotator.Reconciler{Client: mgr.GetClient(), Identity: id, Reconciled: func(name, cluster string) {
		m.mu.Lock()
		m.written = append(m.written, name)
		m.mu.Unlock()
	}}
	// two managers in one process: controller names must be unique unless told otherwise
	if err := r.SetupWithManager(mgr, "annotator-"+id, controller.Options{SkipNameValidation: ptr.To(true)}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	go func() { m.done <- mgr.Start(ctx) }()
	t.Cleanup(m.stop)
	return m
}

func (m *runningManager) stop() {
	if m.cancel != nil {
		m.cancel()
		<-m.done
		m.cancel = nil
	}
}

func (m *runningManager) wrote() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.written...)
}

// controller-runtime against the fleet root: the manager's cache (informers with the label and field
// selectors of cache.ByObject, over a REST mapper from discovery) sees the managed Deployments of every
// cluster and only those; the reconciler's client Get and Patch by fleet name write the annotation into
// the cluster each Deployment lives in; a spec change is reconciled again; and of two managers with
// leader election (a Lease in the control plane) only the leader reconciles, the other taking over when
// the leader stops.
func TestControllerRuntimeManager(t *testing.T) {
	ns := namespace(t, "ctrl")
	other := namespace(t, "ctrl-other")
	deploymentIn(t, "member1", ns, "alpha", 2, true)
	deploymentIn(t, "member3", ns, "beta", 3, true)
	deploymentIn(t, "karmada", ns, "gamma", 1, true)
	deploymentIn(t, "member2", ns, "unmanaged", 1, false)
	deploymentIn(t, "member2", other, "elsewhere", 1, true)

	a := startManager(t, ns, "a")
	annotated := func(cluster, name, replicas, by string) func() bool {
		return func() bool {
			an := annotationsIn(t, cluster, ns, name)
			return an[annotator.ReplicasAnnotation] == replicas && an[annotator.ByAnnotation] == by
		}
	}
	for _, d := range []struct{ cluster, name, replicas string }{{"member1", "alpha", "2"}, {"member3", "beta", "3"}, {"karmada", "gamma", "1"}} {
		eventually(t, 60*time.Second, annotated(d.cluster, d.name, d.replicas, "a"),
			func() string { return fmt.Sprintf("%s in %s not annotated by a: %v", d.name, d.cluster, a.wrote()) })
	}
	b := startManager(t, ns, "b")

	// a spec change (in the cluster) is reconciled again, by the leader
	var cur struct {
		Spec map[string]any `json:"spec"`
	}
	control(t, "get", map[string]any{"cluster": "member3", "resource": "deployments", "ns": ns, "name": "beta"}, &cur)
	cur.Spec["replicas"] = 5
	control(t, "put", map[string]any{"cluster": "member3", "resource": "deployments", "ns": ns, "name": "beta",
		"object": map[string]any{"spec": cur.Spec}}, nil)
	eventually(t, 60*time.Second, annotated("member3", "beta", "5", "a"),
		func() string { return fmt.Sprintf("beta's new replicas not annotated by a: %v", a.wrote()) })
	if w := b.wrote(); len(w) != 0 {
		t.Fatalf("b reconciled %v while a led", w)
	}

	// the leader stops (releasing its Lease); b takes over and reconciles what comes next
	a.stop()
	deploymentIn(t, "member2", ns, "delta", 4, true)
	eventually(t, 60*time.Second, annotated("member2", "delta", "4", "b"),
		func() string { return fmt.Sprintf("delta in member2 not annotated by b: %v", b.wrote()) })

	// outside the selectors nothing was touched
	if an := annotationsIn(t, "member2", ns, "unmanaged"); an[annotator.ReplicasAnnotation] != "" {
		t.Fatalf("an unlabelled Deployment was reconciled: %v", an)
	}
	var o *struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	control(t, "get", map[string]any{"cluster": "member2", "resource": "deployments", "ns": other, "name": "elsewhere"}, &o)
	if o == nil || o.Metadata.Annotations[annotator.ReplicasAnnotation] != "" {
		t.Fatalf("a Deployment outside the field selector's namespace was reconciled: %+v", o)
	}
}
