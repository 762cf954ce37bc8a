package clientgo

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// Typed clients (kubernetes.Clientset) by fleet name, in JSON and in protobuf (rest.Config.ContentType):
// every verb on `<name>.clusterspace.<cluster>` reaches that cluster's object, and the answer carries the
// fleet name again, so client-go's typed decoders, which keep whatever name the server answers, hand the
// program an object it can send back as is (update after get, the optimistic-concurrency loop).
func TestTypedByFleetName(t *testing.T) {
	for _, format := range []struct{ name, ct string }{{"json", jsonType}, {"protobuf", protoType}} {
		t.Run(format.name, func(t *testing.T) {
			cs := clientset(t, format.ct)
			ctx := ctxFor(t, 60*time.Second)
			ns := namespace(t, "typed-"+format.name)

			// get: a seeded Deployment that exists in member1 and member2 with different replicas
			web, err := cs.AppsV1().Deployments("shop").Get(ctx, fleetName("web", "member2"), metav1.GetOptions{})
			if err != nil {
				t.Fatalf("get web in member2: %v", err)
			}
			if web.Name != fleetName("web", "member2") || web.Labels[clusterLabel] != "member2" {
				t.Fatalf("get answered %q labelled %q", web.Name, web.Labels[clusterLabel])
			}
			if _, err := cs.AppsV1().Deployments("shop").Get(ctx, fleetName("web", "member9"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Fatalf("a fleet name of a cluster the fleet lacks: want NotFound, got %v", err)
			}

			// create by fleet name: the object lands in member2 under its own name
			name := fleetName("cfg", "member2")
			cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Data:       map[string]string{"k": "1"},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create %s: %v", name, err)
			}
			if cm.Name != name {
				t.Fatalf("create answered name %q, want %q", cm.Name, name)
			}
			inSim := func() map[string]string {
				var o *struct {
					Data map[string]string `json:"data"`
				}
				control(t, "get", map[string]any{"cluster": "member2", "resource": "configmaps", "ns": ns, "name": "cfg"}, &o)
				if o == nil {
					return nil
				}
				return o.Data
			}
			if d := inSim(); d["k"] != "1" {
				t.Fatalf("member2 holds %v after the create", d)
			}

			// update what get returned (the fleet name and the resourceVersion sent back as they came)
			cm, err = cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			before := cm.DeepCopy()
			cm.Data["k"] = "2"
			if cm, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
				t.Fatalf("update: %v", err)
			}
			if d := inSim(); d["k"] != "2" {
				t.Fatalf("member2 holds %v after the update", d)
			}
			// the resourceVersion from before the update is stale: a Conflict, as retry.RetryOnConflict expects
			before.Data["k"] = "stale"
			if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, before, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
				t.Fatalf("stale update: want Conflict, got %v", err)
			}

			// patch: strategic merge, JSON merge, JSON patch
			for i, p := range []struct {
				pt   types.PatchType
				body string
			}{
				{types.StrategicMergePatchType, `{"data":{"k":"3"}}`},
				{types.MergePatchType, `{"data":{"k":"4"}}`},
				{types.JSONPatchType, `[{"op":"replace","path":"/data/k","value":"5"}]`},
			} {
				got, err := cs.CoreV1().ConfigMaps(ns).Patch(ctx, name, p.pt, []byte(p.body), metav1.PatchOptions{})
				want := fmt.Sprint(3 + i)
				if err != nil || got.Data["k"] != want || got.Name != name {
					t.Fatalf("%s patch: %v %v", p.pt, err, got)
				}
				if d := inSim(); d["k"] != want {
					t.Fatalf("member2 holds %v after the %s patch", d, p.pt)
				}
			}

			// delete
			if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete: %v", err)
			}
			eventually(t, 10*time.Second, func() bool { return inSim() == nil }, func() string { return "member2 still holds cfg" })

			// scale and status subresources of a Deployment created by fleet name in member3
			dname := fleetName("app", "member3")
			labels := map[string]string{"app": "app-" + format.name}
			dep := &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: dname},
				Spec: appsv1.DeploymentSpec{
					Replicas: ptr.To[int32](1),
					Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
					},
				},
			}
			if _, err := cs.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
				t.Fatalf("create deployment: %v", err)
			}
			// the Scale carries the Deployment's resourceVersion: read-modify-write, retried on a Conflict (the
			// simulated controllers write the Deployment's status meanwhile) as client-go's retry package does
			err = retry.RetryOnConflict(settleBackoff, func() error {
				sc, err := cs.AppsV1().Deployments(ns).GetScale(ctx, dname, metav1.GetOptions{})
				if err != nil {
					return err
				}
				if sc.Name != dname {
					return fmt.Errorf("get scale answered name %q", sc.Name)
				}
				sc.Spec.Replicas = 4
				sc2, err := cs.AppsV1().Deployments(ns).UpdateScale(ctx, dname, sc, metav1.UpdateOptions{})
				if err == nil && sc2.Spec.Replicas != 4 {
					return fmt.Errorf("update scale answered %+v", sc2)
				}
				if err != nil {
					t.Logf("update scale with rv %s: %v", sc.ResourceVersion, err)
				}
				return err
			})
			if err != nil {
				t.Fatalf("scale: %v", err)
			}
			var simDep *struct {
				Spec struct {
					Replicas int `json:"replicas"`
				} `json:"spec"`
			}
			control(t, "get", map[string]any{"cluster": "member3", "resource": "deployments", "ns": ns, "name": "app"}, &simDep)
			if simDep == nil || simDep.Spec.Replicas != 4 {
				t.Fatalf("member3's deployment after the scale: %+v", simDep)
			}
			// status: UpdateStatus writes status only (a spec change in the same body is ignored)
			err = retry.RetryOnConflict(settleBackoff, func() error {
				cur, err := cs.AppsV1().Deployments(ns).Get(ctx, dname, metav1.GetOptions{})
				if err != nil {
					return err
				}
				cur.Status.Conditions = append(cur.Status.Conditions, appsv1.DeploymentCondition{
					Type: "FleetChecked", Status: corev1.ConditionTrue, Reason: "ClientGo", Message: format.name,
				})
				cur.Spec.Replicas = ptr.To[int32](9)
				upd, err := cs.AppsV1().Deployments(ns).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
				if err != nil {
					return err
				}
				if upd.Name != dname || *upd.Spec.Replicas != 4 || !hasCondition(upd, "FleetChecked") {
					return fmt.Errorf("update status answered %s replicas %d conditions %v", upd.Name, *upd.Spec.Replicas, upd.Status.Conditions)
				}
				return nil
			})
			if err != nil {
				t.Fatalf("update status: %v", err)
			}
			// (not read back: the simulated deployment controller rewrites the whole status meanwhile)
			if err := cs.AppsV1().Deployments(ns).Delete(ctx, dname, metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete deployment: %v", err)
			}
		})
	}
}

// the simulated deployment controller writes a new Deployment's status several times while its pods
// start: read-modify-write loops retry a Conflict over a few seconds
var settleBackoff = wait.Backoff{Steps: 12, Duration: 50 * time.Millisecond, Factor: 1.5, Jitter: 0.2}

func hasCondition(d *appsv1.Deployment, typ string) bool {
	for _, c := range d.Status.Conditions {
		if string(c.Type) == typ {
			return true
		}
	}
	return false
}
