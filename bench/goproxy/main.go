// Reference reverse proxy for `npm run bench`: net/http/httputil.ReverseProxy (the building block of
// Karmada's cluster proxy, via k8s.io/apimachinery's UpgradeAwareHandler) in front of one upstream.
//
// It strips an optional path prefix, so the benchmark can send the very same path it sends to the
// fleet (`/clusterspaces/member1/api/v1/...`). The upstream transport keeps as many idle keep-alive
// connections as the benchmark opens, so Go is measured at its best, not throttled by
// http.DefaultTransport's 2 idle connections per host.
//
// Standard library only, Go 1.19 compatible (Debian's golang-go). Prints "listening <url>" once ready.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	target := flag.String("target", "", "upstream base URL, e.g. http://127.0.0.1:8081")
	strip := flag.String("strip-prefix", "", "path prefix removed before forwarding, e.g. /clusterspaces/member1")
	idle := flag.Int("idle-conns", 256, "idle keep-alive connections kept to the upstream")
	flag.Parse()
	if *target == "" {
		fmt.Fprintln(os.Stderr, "goproxy: -target is required")
		os.Exit(2)
	}
	u, err := url.Parse(*target)
	if err != nil {
		log.Fatalf("goproxy: bad -target: %v", err)
	}

	transport := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        *idle,
		MaxIdleConnsPerHost: *idle,
		IdleConnTimeout:     90 * time.Second,
		// kube's transports ask for gzip only when the client did; keep bytes as they come
		DisableCompression: true,
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.Transport = transport
	proxy.ErrorLog = log.New(os.Stderr, "goproxy: ", 0)
	proxy.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		// a client that hung up (the load generator stopping mid-request) is not worth a log line
		if !errors.Is(err, context.Canceled) {
			proxy.ErrorLog.Printf("%s %s: %v", r.Method, r.URL.Path, err)
		}
		w.WriteHeader(http.StatusBadGateway)
	}

	prefix := strings.TrimSuffix(*strip, "/")
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if prefix != "" {
			if r.URL.Path != prefix && !strings.HasPrefix(r.URL.Path, prefix+"/") {
				http.NotFound(w, r)
				return
			}
			r.URL.Path = strings.TrimPrefix(r.URL.Path, prefix)
			if r.URL.Path == "" {
				r.URL.Path = "/"
			}
			r.URL.RawPath = ""
		}
		proxy.ServeHTTP(w, r)
	})

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("goproxy: listen: %v", err)
	}
	fmt.Printf("listening http://%s\n", ln.Addr().String())
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 60 * time.Second}
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		log.Fatalf("goproxy: %v", err)
	}
}
