package clientgo

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// client-go's leader election (tools/leaderelection) with a LeaseLock through the fleet's root: a plain
// Lease name at the root is one object in the control plane, so three candidates see one lock. The
// elector creates the Lease if absent (one create wins, the others get AlreadyExists), renews it with
// optimistic updates (a stale resourceVersion is a Conflict) and takes over only after LeaseDuration
// without an observed renewal. Exactly one leader at a time; when the leader stops renewing (its context
// cancelled without releasing, as a crashed process), another takes over.
func TestLeaderElection(t *testing.T) {
	ns := namespace(t, "election")
	var mu sync.Mutex
	leading := map[string]bool{}
	maxLeaders := 0
	cancels := map[string]context.CancelFunc{}
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		id := fmt.Sprintf("candidate-%d", i)
		lock := &resourcelock.LeaseLock{
			LeaseMeta:  metavCfg(ns, "fleet-controller"),
			Client:     clientset(t, protoType).CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: id},
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancels[id] = cancel
		wg.Add(1)
		go func() {
			defer wg.Done()
			leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
				Lock:          lock,
				LeaseDuration: 3 * time.Second,
				RenewDeadline: 2 * time.Second,
				RetryPeriod:   300 * time.Millisecond,
				Callbacks: leaderelection.LeaderCallbacks{
					OnStartedLeading: func(context.Context) {
						mu.Lock()
						leading[id] = true
						n := 0
						for _, l := range leading {
							if l {
								n++
							}
						}
						maxLeaders = max(maxLeaders, n)
						mu.Unlock()
					},
					OnStoppedLeading: func() {
						mu.Lock()
						leading[id] = false
						mu.Unlock()
					},
				},
			})
		}()
	}
	t.Cleanup(func() {
		for _, c := range cancels {
			c()
		}
		wg.Wait()
	})
	leader := func() string {
		mu.Lock()
		defer mu.Unlock()
		for id, l := range leading {
			if l {
				return id
			}
		}
		return ""
	}
	eventually(t, 30*time.Second, func() bool { return leader() != "" }, func() string { return "no leader" })
	first := leader()
	// the leader dies: it stops renewing (no release); mark it gone at once so an overlap would show
	mu.Lock()
	leading[first] = false
	mu.Unlock()
	cancels[first]()
	eventually(t, 30*time.Second, func() bool { l := leader(); return l != "" && l != first },
		func() string { return "no failover from " + first })
	second := leader()
	// the Lease in the control plane names the new holder and counts the transition
	eventually(t, 15*time.Second, func() bool {
		rec, _, err := (&resourcelock.LeaseLock{LeaseMeta: metavCfg(ns, "fleet-controller"), Client: clientset(t, "").CoordinationV1()}).Get(context.Background())
		return err == nil && rec.HolderIdentity == second && rec.LeaderTransitions >= 1
	}, func() string { return "the Lease does not name " + second })
	mu.Lock()
	defer mu.Unlock()
	if maxLeaders != 1 {
		t.Fatalf("%d leaders at once", maxLeaders)
	}
}
