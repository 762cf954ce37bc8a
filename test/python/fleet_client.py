"""Drives the fleet with Kubernetes' official Python client (Debian's python3-kubernetes).

Usage: fleet_client.py <server URL> <namespace to watch> [<configmap to create, by fleet name>]
FLEET_WATCH_SECONDS bounds the watch (default 8).
Over TLS, FLEET_CA_FILE names the CA to trust, FLEET_CERT_FILE and FLEET_KEY_FILE the client certificate
(or FLEET_TOKEN a bearer token).
Prints one JSON document: the pods listed across the fleet, one pod read back by its fleet name, and
the configmap events a watch saw while the test changed the clusters (the test writes
"WATCHING" to stderr's peer: this script prints a line on stderr once its watch is open).
"""
import json
import os
import sys

from kubernetes import client, watch


def main() -> None:
    server, namespace = sys.argv[1], sys.argv[2]
    cfg = client.Configuration()
    cfg.host = server
    if os.environ.get("FLEET_CA_FILE"):
        cfg.ssl_ca_cert = os.environ["FLEET_CA_FILE"]
        cfg.cert_file = os.environ.get("FLEET_CERT_FILE")
        cfg.key_file = os.environ.get("FLEET_KEY_FILE")
    if os.environ.get("FLEET_TOKEN"):
        cfg.api_key = {"authorization": "Bearer " + os.environ["FLEET_TOKEN"]}
    api = client.CoreV1Api(client.ApiClient(cfg))

    pods = api.list_pod_for_all_namespaces()
    names = sorted(f"{p.metadata.namespace}/{p.metadata.name}" for p in pods.items)
    # a pod of the watched namespace first: one elsewhere may be gone by the time it is read
    ours = sorted(pods.items, key=lambda p: p.metadata.namespace != namespace)
    member2 = next(p for p in ours if p.metadata.name.endswith(".clusterspace.member2"))
    read = api.read_namespaced_pod(member2.metadata.name, member2.metadata.namespace)

    cms = api.list_namespaced_config_map(namespace)
    rv = cms.metadata.resource_version
    print("WATCHING", file=sys.stderr, flush=True)
    seen = []
    w = watch.Watch()
    for ev in w.stream(
        api.list_namespaced_config_map, namespace=namespace, resource_version=rv, timeout_seconds=int(os.environ.get("FLEET_WATCH_SECONDS", "8"))
    ):
        seen.append({"type": ev["type"], "name": ev["object"].metadata.name, "rv": ev["object"].metadata.resource_version})
        if len({s["name"] for s in seen}) >= 3:
            w.stop()

    created = None
    if len(sys.argv) > 3:
        body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name=sys.argv[3]), data={"by": "python"})
        made = api.create_namespaced_config_map(namespace, body)
        created = {"name": made.metadata.name, "uid": made.metadata.uid, "rv": made.metadata.resource_version}

    print(
        json.dumps(
            {
                "created": created,
                "pods": names,
                "listRV": pods.metadata.resource_version,
                "read": {"name": read.metadata.name, "uid": read.metadata.uid, "labels": read.metadata.labels},
                "events": seen,
            }
        )
    )


if __name__ == "__main__":
    main()
