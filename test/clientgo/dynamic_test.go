package clientgo

import (
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
)

var widgetsGVR = schema.GroupVersionResource{Group: "example.fleet.io", Version: "v1", Resource: "widgets"}

// The dynamic client (unstructured JSON) on a CRD that only member2 and the control plane serve: the
// fleet-wide list holds exactly those clusters' widgets, and verbs by fleet name reach member2; a fleet
// name of a member that does not serve the resource is a NotFound, which client-go maps to IsNotFound.
func TestDynamicWidgets(t *testing.T) {
	dyn, err := dynamic.NewForConfig(fleetConfig(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxFor(t, 60*time.Second)
	ns := namespace(t, "dynamic")
	w := dyn.Resource(widgetsGVR)

	list, err := w.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list widgets: %v", err)
	}
	var got, want []string
	for _, it := range list.Items {
		got = append(got, it.GetNamespace()+"/"+it.GetName())
	}
	for _, o := range append(simList(t, "widgets", "default"), simList(t, "widgets", "shop")...) {
		want = append(want, o.Namespace+"/"+fleetName(o.Name, o.Cluster))
		if o.Cluster != "karmada" && o.Cluster != "member2" {
			t.Fatalf("widgets in %s: the demo changed", o.Cluster)
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") || len(got) == 0 {
		t.Fatalf("fleet-wide widgets %v, clusters hold %v", got, want)
	}

	name := fleetName("dyn", "member2")
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.fleet.io/v1", "kind": "Widget",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"size": int64(2), "color": "teal"},
	}}
	created, err := w.Namespace(ns).Create(ctx, obj, metav1.CreateOptions{})
	if err != nil || created.GetName() != name {
		t.Fatalf("create %s: %v %v", name, err, created)
	}
	var sim map[string]any
	control(t, "get", map[string]any{"cluster": "member2", "resource": "widgets", "ns": ns, "name": "dyn"}, &sim)
	if sim == nil {
		t.Fatal("member2 does not hold the widget created by its fleet name")
	}
	created.Object["spec"].(map[string]any)["color"] = "navy"
	upd, err := w.Namespace(ns).Update(ctx, created, metav1.UpdateOptions{})
	if err != nil || upd.Object["spec"].(map[string]any)["color"] != "navy" {
		t.Fatalf("update: %v %v", err, upd)
	}
	if err := w.Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	// member1 does not serve widgets
	_, err = w.Namespace(ns).Get(ctx, fleetName("dyn", "member1"), metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("a widget by a fleet name of member1 (which lacks the CRD): want NotFound, got %v", err)
	}
}

// The metadata client (PartialObjectMetadata, asked for with the Accept header
// `as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`) lists every cluster's objects by fleet name, and a
// metadata informer (metadatainformer, a reflector over that client) syncs and then sees a change made in
// a member.
func TestMetadataClientAndInformer(t *testing.T) {
	mc, err := metadata.NewForConfig(fleetConfig(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxFor(t, 60*time.Second)
	ns := namespace(t, "meta")
	cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	for _, c := range []string{"karmada", "member1", "member3"} {
		control(t, "put", map[string]any{"cluster": c, "resource": "configmaps", "ns": ns, "name": "m-" + c}, nil)
	}

	pods, err := mc.Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}).Namespace("shop").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("metadata list of pods: %v", err)
	}
	// (the metadata client decodes without conversion, which drops the kind; an answer that is not a
	// PartialObjectMetadataList would have been an error above)
	if n := len(simList(t, "pods", "shop")); len(pods.Items) != n {
		t.Fatalf("metadata list of pods in shop: %d items, the clusters hold %d", len(pods.Items), n)
	}
	for _, p := range pods.Items {
		c := p.Labels[clusterLabel]
		if c == "" || (c != "karmada" && !strings.HasSuffix(p.Name, ".clusterspace."+c)) {
			t.Fatalf("metadata item %s labelled %q", p.Name, c)
		}
	}

	f := metadatainformer.NewFilteredSharedInformerFactory(mc, 0, ns, nil)
	inf := f.ForResource(cms).Informer()
	stop := make(chan struct{})
	defer close(stop)
	f.Start(stop)
	if !cache.WaitForCacheSync(ctxFor(t, 30*time.Second).Done(), inf.HasSynced) {
		t.Fatal("the metadata informer did not sync")
	}
	keys := func() string {
		k := inf.GetStore().ListKeys()
		sort.Strings(k)
		return strings.Join(k, ",")
	}
	// what the clusters hold (on the real bed every member's namespace also has kube-root-ca.crt)
	var inClusters []string
	for _, o := range simList(t, "configmaps", ns) {
		inClusters = append(inClusters, ns+"/"+fleetName(o.Name, o.Cluster))
	}
	sort.Strings(inClusters)
	want := strings.Join(inClusters, ",")
	for _, c := range []string{"m-karmada", "m-member1.clusterspace.member1", "m-member3.clusterspace.member3"} {
		if !strings.Contains(want, ns+"/"+c) {
			t.Fatalf("the clusters hold %s, without %s", want, c)
		}
	}
	if keys() != want {
		t.Fatalf("synced metadata store %s, want %s", keys(), want)
	}
	control(t, "put", map[string]any{"cluster": "member2", "resource": "configmaps", "ns": ns, "name": "m-member2"}, nil)
	eventually(t, 20*time.Second, func() bool {
		return strings.Contains(keys(), ns+"/m-member2.clusterspace.member2")
	}, func() string { return "store " + keys() })
}

// Discovery through memory.NewMemCacheClient and restmapper.NewDeferredDiscoveryRESTMapper, as kubectl's
// and controller-runtime's mappers do: kinds of the core, of apps and of the CRD map to their resources;
// when a member joins (its objects then listed through the mapping) and leaves, the cached client is
// invalidated (mapper.Reset(), as client-go does on a NoKindMatch) and discovery answers again.
func TestDiscoveryAndRESTMapper(t *testing.T) {
	cfg := fleetConfig(t, "")
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cached := memory.NewMemCacheClient(dc)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cached)
	dyn := dynamic.NewForConfigOrDie(cfg)
	ctx := ctxFor(t, 90*time.Second)
	ns := namespace(t, "disco")

	check := func(when string) {
		t.Helper()
		for _, k := range []struct {
			gk  schema.GroupKind
			res string
		}{
			{schema.GroupKind{Kind: "Pod"}, "pods"},
			{schema.GroupKind{Group: "apps", Kind: "Deployment"}, "deployments"},
			{schema.GroupKind{Group: "coordination.k8s.io", Kind: "Lease"}, "leases"},
			{schema.GroupKind{Group: "example.fleet.io", Kind: "Widget"}, "widgets"},
		} {
			m, err := mapper.RESTMapping(k.gk)
			if err != nil || m.Resource.Resource != k.res {
				t.Fatalf("%s: mapping of %v: %v %v", when, k.gk, err, m)
			}
		}
		if _, err := mapper.RESTMapping(schema.GroupKind{Group: "example.fleet.io", Kind: "Gadget"}); err == nil {
			t.Fatalf("%s: an unknown kind mapped", when)
		}
		if v, err := cached.ServerVersion(); err != nil || v.Major == "" {
			t.Fatalf("%s: server version %v %v", when, v, err)
		}
	}
	check("before")

	widgetsIn := func(cluster string) int {
		m, err := mapper.RESTMapping(schema.GroupKind{Group: "example.fleet.io", Kind: "Widget"})
		if err != nil {
			t.Fatal(err)
		}
		l, err := dyn.Resource(m.Resource).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("list widgets: %v", err)
		}
		n := 0
		for _, it := range l.Items {
			if it.GetLabels()[clusterLabel] == cluster {
				n++
			}
		}
		return n
	}
	gadgetsFromOneMember(t, mapper, dyn, ns)
	if !onSim(t, "a member joining and leaving (a Karmada join of a new cluster)") {
		return
	}

	member := "member4-" + runtimeName
	control(t, "join", map[string]any{"cluster": member, "crds": true}, nil)
	left := false
	defer func() {
		if !left { // a failure before the leave below: the member goes anyway
			control(t, "leave", map[string]any{"cluster": member}, nil)
		}
	}()
	control(t, "put", map[string]any{"cluster": member, "resource": "widgets", "ns": ns, "name": "joined",
		"object": map[string]any{"spec": map[string]any{"size": 1, "color": "red"}}}, nil)
	eventually(t, 30*time.Second, func() bool { return widgetsIn(member) == 1 }, func() string { return member + "'s widget not listed" })
	mapper.Reset()
	check("after a join")

	control(t, "leave", map[string]any{"cluster": member}, nil)
	left = true
	eventually(t, 30*time.Second, func() bool { return widgetsIn(member) == 0 }, func() string { return member + "'s widget still listed" })
	// the tests after this one write back objects their informers cached: their resourceVersions must be made
	// over the membership without the member (one made over another set is refused, 400)
	eventually(t, 30*time.Second, func() bool { return !slices.Contains(fleetMembers(t), member) },
		func() string { return "the fleet still lists " + member })
	mapper.Reset()
	check("after a leave")
}

// A new API group served by one member only (the Gadget CRD, gadgets.fleet.io, installed in member3 while
// the client runs): the deferred mapper finds no Gadget until its cache is Reset after the group appears in
// the fleet's discovery, maps it then to member3's resource, and after the CRD is removed maps it no more.
func gadgetsFromOneMember(t *testing.T, mapper *restmapper.DeferredDiscoveryRESTMapper, dyn *dynamic.DynamicClient, ns string) {
	t.Helper()
	gk := schema.GroupKind{Group: "gadgets.fleet.io", Kind: "Gadget"}
	if _, err := mapper.RESTMapping(gk); !meta.IsNoMatchError(err) {
		t.Fatalf("Gadget before any cluster serves it: want a NoKindMatch, got %v", err)
	}
	control(t, "crd", map[string]any{"cluster": "member3", "present": true}, nil)
	removed := false
	defer func() {
		if !removed {
			control(t, "crd", map[string]any{"cluster": "member3", "present": false}, nil)
		}
	}()
	var m *meta.RESTMapping
	installed := time.Now()
	eventually(t, 60*time.Second, func() bool {
		mapper.Reset()
		var err error
		m, err = mapper.RESTMapping(gk)
		return err == nil
	}, func() string { return "Gadget not mapped after member3 installed its CRD" })
	t.Logf("Gadget mapped %s after member3 installed its CRD", time.Since(installed).Round(time.Millisecond))
	if m.Resource.Resource != "gadgets" || m.Resource.Version != "v1" || m.Scope.Name() != meta.RESTScopeNameNamespace {
		t.Fatalf("Gadget mapped to %+v (%s)", m.Resource, m.Scope.Name())
	}
	g := dyn.Resource(m.Resource).Namespace(ns)
	ctx := ctxFor(t, 60*time.Second)
	name := fleetName("g1", "member3")
	created, err := g.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gadgets.fleet.io/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{"size": int64(1)},
	}}, metav1.CreateOptions{})
	if err != nil || created.GetName() != name {
		t.Fatalf("create %s: %v %v", name, err, created)
	}
	l, err := g.List(ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 1 || l.Items[0].GetName() != name || l.Items[0].GetLabels()[clusterLabel] != "member3" {
		t.Fatalf("gadgets listed: %v %v", err, l)
	}
	if _, err := g.Get(ctx, fleetName("g1", "member1"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a gadget by a fleet name of member1 (which lacks the CRD): want NotFound, got %v", err)
	}

	control(t, "crd", map[string]any{"cluster": "member3", "present": false}, nil)
	removed = true
	gone := time.Now()
	eventually(t, 60*time.Second, func() bool {
		mapper.Reset()
		_, err := mapper.RESTMapping(gk)
		return meta.IsNoMatchError(err)
	}, func() string { return "Gadget still mapped after member3 removed its CRD" })
	t.Logf("Gadget unmapped %s after member3 removed its CRD", time.Since(gone).Round(time.Millisecond))
}
