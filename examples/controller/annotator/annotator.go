// Package annotator is a controller-runtime reconciler written for the fleet: it watches Deployments at
// the fleet's root (every cluster of the fleet through one cache) and writes back, into the cluster each
// Deployment lives in, an annotation saying which replica count it saw and who reconciled it. Nothing in
// it knows about clusters: the fleet names objects `<name>.clusterspace.<cluster>` and routes every verb
// on such a name to its cluster, so the plain controller-runtime client does the right thing.
package annotator

import (
	"context"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
)

const (
	// ReplicasAnnotation holds the spec.replicas the reconciler last saw.
	ReplicasAnnotation = "fleet.example.io/observed-replicas"
	// ByAnnotation names the reconciler (its identity) that wrote ReplicasAnnotation.
	ByAnnotation = "fleet.example.io/reconciled-by"
	// ClusterLabel is the label under which the fleet shows an object's cluster.
	ClusterLabel = "fleet.karmada.io/cluster"
)

// Reconciler annotates Deployments with the replica count it observed.
type Reconciler struct {
	Client   client.Client
	Identity string
	// Reconciled, if set, is told every Deployment written (for tests and logs).
	Reconciled func(fleetName, cluster string)
}

// Reconcile reads the Deployment by its fleet name and patches the annotations into its cluster.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var d appsv1.Deployment
	if err := r.Client.Get(ctx, req.NamespacedName, &d); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	replicas := "1"
	if d.Spec.Replicas != nil {
		replicas = strconv.Itoa(int(*d.Spec.Replicas))
	}
	if d.Annotations[ReplicasAnnotation] == replicas {
		return ctrl.Result{}, nil
	}
	base := d.DeepCopy()
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	d.Annotations[ReplicasAnnotation] = replicas
	d.Annotations[ByAnnotation] = r.Identity
	// a merge patch carrying the resourceVersion: a concurrent change is a Conflict and a requeue
	if err := r.Client.Patch(ctx, &d, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{Requeue: true}, nil
		}
		return ctrl.Result{}, err
	}
	if r.Reconciled != nil {
		r.Reconciled(d.Name, d.Labels[ClusterLabel])
	}
	return ctrl.Result{}, nil
}

// SetupWithManager registers the reconciler for Deployments under the controller name `name`.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, name string, opts controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).Named(name).For(&appsv1.Deployment{}).WithOptions(opts).Complete(r)
}
