// A controller for the whole fleet: controller-runtime's manager pointed at fleet-apiserver's root URL
// watches Deployments in every cluster and annotates each one, in its own cluster, with the replica
// count it observed (package annotator). Run it against the demo (`npm start`):
//
//	go run . --server http://127.0.0.1:8080 --selector app=web
//
// or with a kubeconfig context (`--context fleet`, from `--kubeconfig FILE`, KUBECONFIG or ~/.kube/config). With --leader-elect,
// several copies elect one leader through a Lease in the control plane.
package main

import (
	"flag"
	"fmt"
	"os"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"fleet-apiserver/examples/controller/annotator"
)

func main() {
	server := flag.String("server", "", "the fleet's URL (e.g. http://127.0.0.1:8080); default: the kubeconfig's")
	context := flag.String("context", "", "the kubeconfig context (e.g. fleet)")
	selector := flag.String("selector", "", "a label selector limiting the Deployments cached and reconciled")
	fieldSel := flag.String("field-selector", "", "a field selector limiting them (e.g. metadata.namespace=shop)")
	leaderElect := flag.Bool("leader-elect", false, "elect one leader among copies (a Lease in --election-namespace)")
	electionNs := flag.String("election-namespace", "default", "where the leader election's Lease lives")
	identity := flag.String("identity", "", "this copy's name (default: the host name)")
	flag.Parse()
	ctrl.SetLogger(zap.New())

	cfg, err := config(*server, *context)
	if err != nil {
		fail(err)
	}
	id := *identity
	if id == "" {
		id, _ = os.Hostname()
	}
	byObject := cache.ByObject{}
	if *selector != "" {
		if byObject.Label, err = labels.Parse(*selector); err != nil {
			fail(err)
		}
	}
	if *fieldSel != "" {
		if byObject.Field, err = fields.ParseSelector(*fieldSel); err != nil {
			fail(err)
		}
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Cache:                   cache.Options{ByObject: map[client.Object]cache.ByObject{&appsv1.Deployment{}: byObject}},
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		LeaderElection:          *leaderElect,
		LeaderElectionID:        "fleet-annotator",
		LeaderElectionNamespace: *electionNs,
	})
	if err != nil {
		fail(err)
	}
	r := &annotator.Reconciler{Client: mgr.GetClient(), Identity: id, Reconciled: func(name, cluster string) {
		fmt.Printf("annotated %s (cluster %s)\n", name, cluster)
	}}
	if err := r.SetupWithManager(mgr, "fleet-annotator", controller.Options{}); err != nil {
		fail(err)
	}
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		fail(err)
	}
}

// config is the fleet's URL as it is, or a kubeconfig context (controller-runtime's --kubeconfig flag, or
// KUBECONFIG, or ~/.kube/config) with --server overriding its server.
func config(server, context string) (*rest.Config, error) {
	if server != "" && context == "" {
		return &rest.Config{Host: server}, nil
	}
	cfg, err := ctrlconfig.GetConfigWithContext(context)
	if err != nil {
		return nil, err
	}
	if server != "" {
		cfg.Host = server
	}
	return cfg, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "fleet-annotator:", err)
	os.Exit(1)
}
