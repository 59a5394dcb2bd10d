// status-apply does what a controller-runtime controller does to report one condition of its own on a Website:
// client.Status().Apply with an unstructured apply configuration holding only that condition, under its own field
// owner, through kube-apiserver. It prints the object the server answered as one JSON line on stdout; on failure
// it prints {"error", "reason", "code"} on stderr and exits 1 (2 for bad arguments). Published modules only.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of kube-apiserver")
	apiVersion := flag.String("api-version", "extensions.example.com/v1", "apiVersion of the apply configuration")
	kind := flag.String("kind", "Website", "kind of the apply configuration")
	namespace := flag.String("namespace", "", "namespace of the object")
	name := flag.String("name", "", "name of the object")
	owner := flag.String("field-owner", "", "field manager (client.FieldOwner)")
	force := flag.Bool("force", true, "client.ForceOwnership, as controllers apply")
	condType := flag.String("type", "", "condition type")
	condStatus := flag.String("status", "True", "condition status: True, False or Unknown")
	reason := flag.String("reason", "", "condition reason")
	message := flag.String("message", "", "condition message")
	transition := flag.String("last-transition-time", "", "condition lastTransitionTime (RFC 3339; default now)")
	generation := flag.Int64("observed-generation", -1, "condition observedGeneration (omitted when negative)")
	timeout := flag.Duration("timeout", 30*time.Second, "timeout of the whole run")
	flag.Parse()
	if *kubeconfig == "" || *namespace == "" || *name == "" || *owner == "" || *condType == "" {
		fmt.Fprintln(os.Stderr, "status-apply: -kubeconfig, -namespace, -name, -field-owner and -type are required")
		os.Exit(2)
	}
	// controller-runtime complains on stderr after 30 s when no logger was set; this program has nothing to log.
	log.SetLogger(logr.Discard())

	cond := map[string]interface{}{"type": *condType, "status": *condStatus}
	if *reason != "" {
		cond["reason"] = *reason
	}
	if *message != "" {
		cond["message"] = *message
	}
	if *transition == "" {
		*transition = time.Now().UTC().Format(time.RFC3339)
	}
	cond["lastTransitionTime"] = *transition
	if *generation >= 0 {
		cond["observedGeneration"] = *generation
	}
	u := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": *apiVersion,
		"kind":       *kind,
		"metadata":   map[string]interface{}{"name": *name, "namespace": *namespace},
		"status":     map[string]interface{}{"conditions": []interface{}{cond}},
	}}

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := run(ctx, *kubeconfig, u, *owner, *force); err != nil {
		out := map[string]interface{}{"error": err.Error()}
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			out["reason"], out["code"] = status.Status().Reason, status.Status().Code
		}
		b, _ := json.Marshal(out)
		fmt.Fprintln(os.Stderr, string(b))
		os.Exit(1)
	}
	b, err := json.Marshal(u.Object)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(string(b))
}

func run(ctx context.Context, kubeconfig string, u *unstructured.Unstructured, owner string, force bool) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	opts := []client.SubResourceApplyOption{client.FieldOwner(owner)}
	if force {
		opts = append(opts, client.ForceOwnership)
	}
	// The response is decoded into u, so u is the object as the server holds it after the apply.
	return c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), opts...)
}
