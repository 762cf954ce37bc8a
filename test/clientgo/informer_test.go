package clientgo

import (
	"context"
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

var members = []string{"member1", "member2", "member3"}

// watchLog records, per request, whether client-go asked for a WatchList (sendInitialEvents=true).
type watchLog struct {
	mu        sync.Mutex
	watchList int
	lists     int
}

func (w *watchLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		q := r.URL.Query()
		w.mu.Lock()
		if q.Get("watch") == "true" && q.Get("sendInitialEvents") == "true" {
			w.watchList++
		} else if q.Get("watch") != "true" {
			w.lists++
		}
		w.mu.Unlock()
		return rt.RoundTrip(r)
	})
}

type warningFunc func(string)

func (f warningFunc) HandleWarningHeader(_ int, _ string, text string) { f(text) }

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// changeLog counts, per object key and data value, the informer's events that showed that value newly
// (an add, or an update whose old value differs), and the deletes per key: a relist's Replace, which
// hands every object again as an update with the same value, is not counted as a change.
type changeLog struct {
	ns      string
	mu      sync.Mutex
	changes map[string]int
	deletes map[string]int
}

func newChangeLog(ns string) *changeLog {
	return &changeLog{ns: ns, changes: map[string]int{}, deletes: map[string]int{}}
}

func (c *changeLog) handler() cache.ResourceEventHandler {
	v := func(o any) string {
		if cm, ok := o.(*corev1.ConfigMap); ok {
			return cm.Data["v"]
		}
		return ""
	}
	key := func(o any) string { k, _ := cache.DeletionHandlingMetaNamespaceKeyFunc(o); return k }
	// only the test's namespace counts (other tests write elsewhere)
	return cache.FilteringResourceEventHandler{FilterFunc: func(o any) bool {
		return strings.HasPrefix(key(o), c.ns+"/")
	}, Handler: cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) {
			c.mu.Lock()
			c.changes[key(o)+"="+v(o)]++
			c.mu.Unlock()
		},
		UpdateFunc: func(old, o any) {
			if v(old) == v(o) {
				return
			}
			c.mu.Lock()
			c.changes[key(o)+"="+v(o)]++
			c.mu.Unlock()
		},
		DeleteFunc: func(o any) {
			c.mu.Lock()
			c.deletes[key(o)]++
			c.mu.Unlock()
		},
	}}
}

// twice lists the changes seen more than once.
func (c *changeLog) twice() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for k, n := range c.changes {
		if n > 1 {
			out = append(out, fmt.Sprintf("%s x%d", k, n))
		}
	}
	sort.Strings(out)
	return out
}

// deletesOtherThan lists the keys whose deletes the handlers saw a number of times other than `want`.
func (c *changeLog) deletesOtherThan(want map[string]int) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for k, n := range c.deletes {
		if want[k] != n {
			out = append(out, fmt.Sprintf("%s deleted %d times, seen %d", k, want[k], n))
		}
	}
	for k, n := range want {
		if _, ok := c.deletes[k]; !ok {
			out = append(out, fmt.Sprintf("%s deleted %d times, seen 0", k, n))
		}
	}
	sort.Strings(out)
	return out
}

func (c *changeLog) seen(change string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changes[change]
}

// storeState is an informer store as "key=value" lines (value: a ConfigMap's data.v), sorted.
func storeState(inf cache.SharedIndexInformer) string {
	var out []string
	for _, o := range inf.GetStore().List() {
		k, _ := cache.MetaNamespaceKeyFunc(o)
		v := ""
		if cm, ok := o.(*corev1.ConfigMap); ok {
			v = cm.Data["v"]
		}
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// clusterState is the same lines for what the simulated clusters hold, by fleet name.
func clusterState(t testing.TB, resource, ns string) string {
	var out []string
	for _, o := range simList(t, resource, ns) {
		out = append(out, ns+"/"+fleetName(o.Name, o.Cluster)+"="+o.Data["v"])
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

type informerRig struct {
	t       *testing.T
	removed map[string]int
	ns      string
	cms     cache.SharedIndexInformer
	pods    cache.SharedIndexInformer
	deploys cache.SharedIndexInformer
	log     *changeLog
	watches *watchLog
	v       int
}

// startInformers runs a SharedInformerFactory over ConfigMaps, Pods and Deployments at the fleet's root
// (all namespaces, as a controller's factory does), and waits for it to sync.
func startInformers(t *testing.T, ns string) *informerRig {
	cfg := fleetConfig(t, protoType)
	r := &informerRig{t: t, ns: ns, log: newChangeLog(ns), watches: &watchLog{}, removed: map[string]int{}}
	cfg.WrapTransport = r.watches.wrap
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := informers.NewSharedInformerFactory(cs, 0)
	r.cms = f.Core().V1().ConfigMaps().Informer()
	r.pods = f.Core().V1().Pods().Informer()
	r.deploys = f.Apps().V1().Deployments().Informer()
	if _, err := r.cms.AddEventHandler(r.log.handler()); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop); f.Shutdown() })
	f.Start(stop)
	synced := f.WaitForCacheSync(ctxFor(t, 60*time.Second).Done())
	for typ, ok := range synced {
		if !ok {
			t.Fatalf("the %v informer did not sync", typ)
		}
	}
	return r
}

// put writes the ConfigMap `name` in `cluster` with a new data.v, returning the change the informer must
// then see exactly once.
func (r *informerRig) put(cluster, name string) string {
	r.v++
	v := strconv.Itoa(r.v)
	control(r.t, "put", map[string]any{"cluster": cluster, "resource": "configmaps", "ns": r.ns, "name": name, "data": map[string]string{"v": v}}, nil)
	return r.ns + "/" + fleetName(name, cluster) + "=" + v
}

func (r *informerRig) remove(cluster, name string) {
	r.removed[r.ns+"/"+fleetName(name, cluster)]++
	control(r.t, "remove", map[string]any{"cluster": cluster, "resource": "configmaps", "ns": r.ns, "name": name}, nil)
}

// inNs keeps the lines of one namespace.
func inNs(state, ns string) string {
	var out []string
	for _, l := range strings.Split(state, "\n") {
		if strings.HasPrefix(l, ns+"/") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// converged waits until every store holds exactly what the clusters hold in the test's namespace.
func (r *informerRig) converged(when string, timeout time.Duration) {
	r.t.Helper()
	for _, x := range []struct {
		res string
		inf cache.SharedIndexInformer
	}{{"configmaps", r.cms}, {"pods", r.pods}, {"deployments", r.deploys}} {
		var got, want string
		eventually(r.t, timeout, func() bool {
			got, want = inNs(storeState(x.inf), r.ns), clusterState(r.t, x.res, r.ns)
			return got == want
		}, func() string { return fmt.Sprintf("%s: %s store\n%s\nclusters hold\n%s", when, x.res, got, want) })
	}
}

// A SharedInformerFactory at the fleet root, with client-go 1.35's WatchListClient feature gate as the
// environment sets it (KUBE_FEATURE_WatchListClient): with it on, the reflector's first watch asks
// sendInitialEvents=true and expects exactly one bookmark annotated k8s.io/initial-events-end before it
// calls the store synced; with it off, it lists and then watches from the list's RV. Either way, after the
// sync every create, update and delete in any cluster reaches the handlers exactly once, through a cut
// watch (the reflector resumes from the last RV it saw after a watch ends), a 410 (the reflector relists
// on "too old resource version" and its Replace hands only real changes on as changes) and a member
// that goes down and comes back; and each store ends equal to the clusters.
func TestSharedInformers(t *testing.T) {
	gate := clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient)
	t.Logf("WatchListClient=%v (KUBE_FEATURE_WatchListClient=%q)", gate, os.Getenv("KUBE_FEATURE_WatchListClient"))
	ns := namespace(t, fmt.Sprintf("inf-wl%v", gate))
	var want []string
	r := &informerRig{t: t, ns: ns, removed: map[string]int{}}
	for _, c := range append([]string{"karmada"}, members...) {
		want = append(want, r.put(c, "seed"))
		control(t, "put", map[string]any{"cluster": c, "resource": "pods", "ns": ns, "name": "p-" + c,
			"object": map[string]any{"spec": map[string]any{"containers": []map[string]any{{"name": "c", "image": "busybox"}}}}}, nil)
	}
	dep := appsv1.Deployment{Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "d"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "d"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
	}}
	control(t, "put", map[string]any{"cluster": "member2", "resource": "deployments", "ns": ns, "name": "d", "object": dep}, nil)

	rig := startInformers(t, ns)
	rig.v = r.v
	rig.converged("after the sync", 30*time.Second)
	rig.watches.mu.Lock()
	wl, lists := rig.watches.watchList, rig.watches.lists
	rig.watches.mu.Unlock()
	if gate && (wl < 3 || lists != 0) {
		t.Fatalf("WatchListClient on: %d WatchList requests and %d lists, want 3 and 0", wl, lists)
	}
	if !gate && (wl != 0 || lists < 3) {
		t.Fatalf("WatchListClient off: %d WatchList requests and %d lists, want 0 and 3", wl, lists)
	}

	// a cached object written back as it is (its resourceVersion the precondition), as controllers do
	obj, ok, err := rig.cms.GetStore().GetByKey(ns + "/" + fleetName("seed", "member3"))
	if err != nil || !ok {
		t.Fatalf("member3's seed not in the store: %v", err)
	}
	cached := obj.(*corev1.ConfigMap).DeepCopy()
	cached.Data["v"] = "written-back"
	if _, err := clientset(t, protoType).CoreV1().ConfigMaps(ns).Update(ctxFor(t, 30*time.Second), cached, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update of the cached object: %v", err)
	}
	want = append(want, ns+"/"+fleetName("seed", "member3")+"=written-back")

	// live changes in every cluster
	want = append(want, rig.put("member1", "a"), rig.put("member3", "b"), rig.put("karmada", "k"), rig.put("member1", "seed"))
	rig.remove("member2", "seed")
	rig.converged("live changes", 30*time.Second)

	if realBed {
		// a real kube-apiserver's watches cannot be cut, its history expired or the server restarted from
		// here (one etcd under the whole bed): those phases are the simulated fleet's
		t.Log("real bed: no cut, 410 or restart phases")
	} else {
		want = append(want, simulatedOutages(t, rig)...)
	}

	for _, w := range want {
		if n := rig.log.seen(w); n != 1 {
			t.Errorf("change %s seen %d times", w, n)
		}
	}
	if d := rig.log.twice(); len(d) > 0 {
		t.Errorf("changes seen more than once: %v", d)
	}
	if d := rig.log.deletesOtherThan(rig.removed); len(d) > 0 {
		t.Errorf("deletes: %v", d)
	}
}

// simulatedOutages: a cut watch, a 410 and a restart in the simulated clusters, with changes around each;
// the changes the informer must see exactly once.
func simulatedOutages(t *testing.T, rig *informerRig) []string {
	var out []string
	// a cut watch in member2
	control(t, "cut", map[string]any{"cluster": "member2"}, nil)
	out = append(out, rig.put("member2", "c"), rig.put("member1", "a"))
	rig.remove("member3", "b")
	rig.converged("after a cut", 30*time.Second)

	// a 410: member3's history compacted and its watches cut, so the fleet's resume is too old
	out = append(out, rig.put("member3", "b2"))
	control(t, "expire", map[string]any{"cluster": "member3"}, nil)
	out = append(out, rig.put("member3", "b3"), rig.put("member3", "b2"))
	rig.converged("after a 410", 30*time.Second)

	// member1 restarts: down, changed while down, back
	control(t, "down", map[string]any{"cluster": "member1"}, nil)
	rig.remove("member1", "a")
	out = append(out, rig.put("member1", "e"))
	control(t, "up", map[string]any{"cluster": "member1"}, nil)
	out = append(out, rig.put("member2", "c"))
	rig.converged("after a restart", 45*time.Second)

	return out
}

// watchFault and listFault are what the fault proxies (test/faults/faults.ts) inject into a member's next
// watch or list: cuts, resets, silence after K events, a 410 or 500 in the stream, garbage, refusals.
func watchFault(rnd *rand.Rand) map[string]any {
	k := rnd.Intn(4)
	all := []map[string]any{
		{"kind": "cutAfterEvents", "events": k},
		{"kind": "rstAfterEvents", "events": k},
		{"kind": "statusAfterEvents", "events": k, "code": 410},
		{"kind": "statusAfterEvents", "events": k, "code": 500},
		{"kind": "eofAfterHeaders"},
		{"kind": "garbage", "where": "body", "bytes": "<html>oops</html>\n"},
		{"kind": "refuse"},
		{"kind": "rst"},
		{"kind": "status", "code": 500},
		{"kind": "status", "code": 410},
		{"kind": "cut", "phase": "body", "bytes": 1 + rnd.Intn(300)},
	}
	return all[rnd.Intn(len(all))]
}

func listFault(rnd *rand.Rand) map[string]any {
	all := []map[string]any{
		{"kind": "refuse"},
		{"kind": "rst"},
		{"kind": "status", "code": 500},
		{"kind": "cut", "phase": "body", "bytes": 1 + rnd.Intn(400)},
	}
	return all[rnd.Intn(len(all))]
}

// The randomized soak: for ~15 s, random ConfigMap writes and deletes in every cluster while the clusters
// cut watches, expire their history (410) and go down and come back; or, against a fleet whose clusters
// sit behind fault proxies (FLEET_FAULT_PROXY=1), while the proxies cut, reset, break and poison the
// members' watches and lists and the clusters cut, expire and go down too. On the real bed (FLEET_BED=real)
// only the writes and deletes: its clusters have none of those knobs. The informer (its reflector
// resuming from the last RV after a watch ends, relisting on a 410 or a failed watch) must end equal to
// the clusters, with no change of the control plane delivered twice. FLEET_SOAK_SEED replays a seed's
// operations; FLEET_SOAK_SECONDS sets the length.
func TestInformerSoak(t *testing.T) {
	proxied := os.Getenv("FLEET_FAULT_PROXY") == "1"
	seed := time.Now().UnixNano() % 1_000_000
	if s := os.Getenv("FLEET_SOAK_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	secs := 15
	if s := os.Getenv("FLEET_SOAK_SECONDS"); s != "" {
		secs, _ = strconv.Atoi(s)
	}
	rnd := rand.New(rand.NewSource(seed))
	ns := namespace(t, "soak")
	rig := startInformers(t, ns)
	clusters := append([]string{"karmada"}, members...)
	faults, ops := 0, 0
	down := ""
	end := time.Now().Add(time.Duration(secs) * time.Second)
	for time.Now().Before(end) {
		c := clusters[rnd.Intn(len(clusters))]
		name := fmt.Sprintf("o%d", rnd.Intn(20))
		switch k := rnd.Intn(24); {
		case k < 9:
			rig.put(c, name)
		case k < 14:
			var o any
			control(t, "get", map[string]any{"cluster": c, "resource": "configmaps", "ns": ns, "name": name}, &o)
			if o != nil {
				rig.remove(c, name)
			}
		case k < 15 && !realBed:
			control(t, "cut", map[string]any{"cluster": members[rnd.Intn(3)]}, nil)
			faults++
		case k < 16 && !realBed:
			control(t, "expire", map[string]any{"cluster": members[rnd.Intn(3)]}, nil)
			faults++
		case k < 20 && proxied:
			m := members[rnd.Intn(3)]
			if rnd.Intn(3) == 0 {
				control(t, "fault", map[string]any{"cluster": m, "on": "list", "fault": listFault(rnd)}, nil)
			} else {
				control(t, "fault", map[string]any{"cluster": m, "on": "watch", "fault": watchFault(rnd)}, nil)
			}
			faults++
		case k < 21 && down == "" && !realBed:
			down = members[rnd.Intn(3)]
			control(t, "down", map[string]any{"cluster": down}, nil)
			faults++
		case k >= 21 && down != "":
			control(t, "up", map[string]any{"cluster": down}, nil)
			down = ""
		}
		ops++
		time.Sleep(time.Duration(5+rnd.Intn(30)) * time.Millisecond)
	}
	if down != "" {
		control(t, "up", map[string]any{"cluster": down}, nil)
	}
	if proxied {
		// the faults end with the soak: one armed for a member's next list that no request has met yet would
		// fail the reflector's relists after it, each one backing off longer, past the convergence's minute
		control(t, "calm", map[string]any{}, nil)
	}
	t.Logf("seed %d: %d operations, %d faults", seed, ops, faults)
	t.Cleanup(func() {
		if t.Failed() { // what a fresh list says now, and its warnings, beside the informer's store
			var warnings []string
			l, err := warnedClientset(t, &warnings).CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{})
			perCluster := map[string]int{}
			if err == nil {
				for _, o := range l.Items {
					perCluster[o.Labels[clusterLabel]]++
				}
			}
			t.Logf("seed %d: a fresh list: %v per cluster, err %v, warnings %q", seed, perCluster, err, warnings)
		}
	})
	rig.converged(fmt.Sprintf("the soak (seed %d)", seed), 60*time.Second)
	// A relist while a member is down lists the other clusters only (with a Warning; not in strict mode),
	// so client-go's Replace deletes that member's objects and adds them again once it is back: their
	// changes can be seen twice, and the deletes differ from those made (a relist also folds a delete and
	// re-create into one update). Logged; the control plane, never taken down here, must show each change once.
	twice := rig.log.twice()
	t.Logf("seed %d: changes seen twice (members' objects through outages): %d; deletes differing: %d",
		seed, len(twice), len(rig.log.deletesOtherThan(rig.removed)))
	for _, d := range twice {
		if !strings.Contains(strings.SplitN(d, "=", 2)[0], ".clusterspace.") {
			t.Errorf("seed %d: a change in the control plane seen more than once: %s", seed, d)
		}
	}
}
