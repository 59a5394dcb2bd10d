// informer-probe runs a client-go shared informer (dynamic or metadata) on one resource and prints a JSON
// line per event on stdout, so the TypeScript e2e suite can assert on what a real reflector saw. client-go
// v0.35 uses watch-list (sendInitialEvents) by default, which is part of what is under test.
// -mode controller is a dynamic informer whose lister-watcher also prints a LIST line for every list and a
// WATCHLIST line for every watch that asks for initial events (what a re-list is), and which prints its cache
// as one CACHE line whenever it reads "dump" on stdin. It is a controller too: an object labelled loop=N gets
// status.observed N (a merge patch of /status, client-go's own retries), and a write that fails for good prints
// a WRITE_ERROR line.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

var out sync.Mutex

func emit(kind string, obj interface{}, msg string) {
	ev := map[string]interface{}{"type": kind, "ts": time.Now().UnixMilli()}
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
		ev["finalStateUnknown"] = true
	}
	if o, ok := obj.(metav1.Object); ok {
		ev["namespace"], ev["name"], ev["uid"], ev["resourceVersion"] = o.GetNamespace(), o.GetName(), string(o.GetUID()), o.GetResourceVersion()
		ev["goType"] = fmt.Sprintf("%T", obj)
	}
	if msg != "" {
		ev["error"] = msg
	}
	line, _ := json.Marshal(ev)
	out.Lock()
	defer out.Unlock()
	fmt.Println(string(line))
}

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file")
	resource := flag.String("resource", "websites.v1alpha1.extensions.example.com", "resource.version.group")
	namespace := flag.String("namespace", "", "namespace to watch; empty means all")
	mode := flag.String("mode", "dynamic", "dynamic or metadata")
	flag.Parse()

	gvr, _ := schema.ParseResourceArg(*resource)
	if gvr == nil {
		fmt.Fprintln(os.Stderr, "bad -resource")
		os.Exit(2)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}

	var informer cache.SharedIndexInformer
	var start func(<-chan struct{})
	var shutdown func()
	switch *mode {
	case "dynamic":
		f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dynamic.NewForConfigOrDie(cfg), 0, *namespace, nil)
		informer, start, shutdown = f.ForResource(*gvr).Informer(), f.Start, f.Shutdown
	case "controller":
		nri := dynamic.NewForConfigOrDie(cfg).Resource(*gvr)
		ri := nri.Namespace(*namespace)
		lw := &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				emit("LIST", nil, "resourceVersion="+o.ResourceVersion)
				return ri.List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				if o.SendInitialEvents != nil && *o.SendInitialEvents {
					emit("WATCHLIST", nil, "resourceVersion="+o.ResourceVersion)
				}
				return ri.Watch(ctx, o)
			},
		}
		informer = cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, cache.Indexers{})
		start = func(stop <-chan struct{}) { go informer.Run(stop) }
		shutdown = func() {}
		go dumpOnRequest(informer)
		reconcileStatus(nri, informer)
	case "metadata":
		f := metadatainformer.NewFilteredSharedInformerFactory(metadata.NewForConfigOrDie(cfg), 0, *namespace, nil)
		informer, start, shutdown = f.ForResource(*gvr).Informer(), f.Start, f.Shutdown
	default:
		fmt.Fprintln(os.Stderr, "bad -mode")
		os.Exit(2)
	}

	_ = informer.SetWatchErrorHandler(func(_ *cache.Reflector, err error) { emit("WATCH_ERROR", nil, err.Error()) })
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o interface{}) { emit("ADDED", o, "") },
		UpdateFunc: func(_, o interface{}) { emit("MODIFIED", o, "") },
		DeleteFunc: func(o interface{}) { emit("DELETED", o, "") },
	}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		emit("SYNC_FAILED", nil, "cache did not sync")
		os.Exit(1)
	}
	emit("SYNCED", nil, "")
	<-ctx.Done()
	shutdown()
}

// dumpOnRequest prints the informer's cache (namespace, name, uid, resourceVersion of each object) as one CACHE
// line each time stdin says "dump".
func dumpOnRequest(informer cache.SharedIndexInformer) {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if in.Text() != "dump" {
			continue
		}
		items := []map[string]string{}
		for _, o := range informer.GetStore().List() {
			if m, ok := o.(metav1.Object); ok {
				items = append(items, map[string]string{"namespace": m.GetNamespace(), "name": m.GetName(), "uid": string(m.GetUID()), "resourceVersion": m.GetResourceVersion()})
			}
		}
		line, _ := json.Marshal(map[string]interface{}{"type": "CACHE", "ts": time.Now().UnixMilli(), "items": items})
		out.Lock()
		fmt.Println(string(line))
		out.Unlock()
	}
}

// reconcileStatus writes status.observed = the loop label of each object whose status lags behind it, one object at
// a time from a queue the informer's events fill (the latest state is read from the cache when its turn comes).
func reconcileStatus(ri dynamic.NamespaceableResourceInterface, informer cache.SharedIndexInformer) {
	queue := make(chan string, 100000)
	enqueue := func(o interface{}) {
		if key, err := cache.MetaNamespaceKeyFunc(o); err == nil {
			queue <- key
		}
	}
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, o interface{}) { enqueue(o) },
	})
	go func() {
		for key := range queue {
			item, exists, err := informer.GetStore().GetByKey(key)
			if err != nil || !exists {
				continue
			}
			u := item.(*unstructured.Unstructured)
			want, err := strconv.ParseInt(u.GetLabels()["loop"], 10, 64)
			if err != nil {
				continue
			}
			if got, found, _ := unstructured.NestedInt64(u.Object, "status", "observed"); found && got == want {
				continue
			}
			body := []byte(fmt.Sprintf(`{"status":{"observed":%d}}`, want))
			_, err = ri.Namespace(u.GetNamespace()).Patch(context.Background(), u.GetName(), types.MergePatchType, body, metav1.PatchOptions{FieldManager: "probe-controller"}, "status")
			if err != nil {
				emit("WRITE_ERROR", u, err.Error())
			}
		}
	}()
}
