package clientgo

import (
	"sort"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
)

// Server-side apply by fleet name with the typed Apply (an apply configuration, PATCH
// application/apply-patch+yaml): two field managers own different keys of one ConfigMap in member1; the
// second claiming the first's key is a 409 Conflict naming the field (apierrors.IsConflict, what
// controllers check before retrying with Force), and Force takes the field over; managedFields list both
// managers, and the object in member1 holds the merged result.
func TestServerSideApply(t *testing.T) {
	for _, format := range []struct{ name, ct string }{{"json", jsonType}, {"protobuf", protoType}} {
		t.Run(format.name, func(t *testing.T) {
			cs := clientset(t, format.ct)
			ctx := ctxFor(t, 60*time.Second)
			ns := namespace(t, "ssa-"+format.name)
			name := fleetName("applied", "member1")
			cms := cs.CoreV1().ConfigMaps(ns)

			a, err := cms.Apply(ctx, corev1ac.ConfigMap(name, ns).WithData(map[string]string{"a": "1", "shared": "a"}),
				metav1.ApplyOptions{FieldManager: "manager-a"})
			if err != nil || a.Name != name {
				t.Fatalf("apply by manager-a: %v %v", err, a)
			}
			b, err := cms.Apply(ctx, corev1ac.ConfigMap(name, ns).WithData(map[string]string{"b": "2"}),
				metav1.ApplyOptions{FieldManager: "manager-b"})
			if err != nil || b.Data["a"] != "1" || b.Data["b"] != "2" {
				t.Fatalf("apply by manager-b: %v %v", err, b)
			}
			_, err = cms.Apply(ctx, corev1ac.ConfigMap(name, ns).WithData(map[string]string{"b": "2", "shared": "b"}),
				metav1.ApplyOptions{FieldManager: "manager-b"})
			if !apierrors.IsConflict(err) {
				t.Fatalf("manager-b taking manager-a's field: want a Conflict, got %v", err)
			}
			forced, err := cms.Apply(ctx, corev1ac.ConfigMap(name, ns).WithData(map[string]string{"b": "2", "shared": "b"}),
				metav1.ApplyOptions{FieldManager: "manager-b", Force: true})
			if err != nil || forced.Data["shared"] != "b" || forced.Data["a"] != "1" {
				t.Fatalf("forced apply: %v %v", err, forced)
			}
			var managers []string
			for _, m := range forced.ManagedFields {
				if m.Operation == metav1.ManagedFieldsOperationApply {
					managers = append(managers, m.Manager)
				}
			}
			sort.Strings(managers)
			if len(managers) != 2 || managers[0] != "manager-a" || managers[1] != "manager-b" {
				t.Fatalf("managedFields' appliers: %v", managers)
			}
			var sim *struct {
				Data map[string]string `json:"data"`
			}
			control(t, "get", map[string]any{"cluster": "member1", "resource": "configmaps", "ns": ns, "name": "applied"}, &sim)
			if sim == nil || sim.Data["shared"] != "b" || sim.Data["a"] != "1" || sim.Data["b"] != "2" {
				t.Fatalf("member1 holds %+v", sim)
			}
		})
	}
}

// rest.Config.Impersonate: client-go sends Impersonate-User and one Impersonate-Group header per group;
// the fleet honours them after asking the control plane (a SubjectAccessReview; the demo allows it), and
// every cluster then acts as that user: a SelfSubjectReview (`kubectl auth whoami`) at the root and
// through one member's clusterspace answers the impersonated user and groups.
func TestImpersonate(t *testing.T) {
	ctx := ctxFor(t, 30*time.Second)
	for _, path := range []string{"", "/clusterspaces/member3"} {
		cfg := fleetConfig(t, "")
		cfg.Host += path
		cfg.Impersonate.UserName = "jane"
		cfg.Impersonate.Groups = []string{"fleet-devs", "auditors"}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("%q: whoami as jane: %v", path, err)
		}
		u := r.Status.UserInfo
		groups := map[string]bool{}
		for _, g := range u.Groups {
			groups[g] = true
		}
		if u.Username != "jane" || !groups["fleet-devs"] || !groups["auditors"] {
			t.Fatalf("%q: whoami as jane answered %+v", path, u)
		}
		// and without impersonation the caller is itself (the demo: anonymous)
		plain := clientset(t, "")
		me, err := plain.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil || me.Status.UserInfo.Username == "jane" {
			t.Fatalf("whoami without impersonation: %v %+v", err, me)
		}
	}
}
