#!/usr/bin/env bash
# Builds the e2e control plane (etcd, kube-apiserver, kube-controller-manager), the real node's kubelet,
# kube-proxy and kube-scheduler, kubectl at the same version, the client-go probe and the controller-runtime
# status-apply client (module statusapply) from the Go modules under test/e2e/go, once, plus etcd v3.5 (module
# etcd35, linked as etcd-3.5) for the storage conformance run on the oldest supported etcd, and helm (module helm,
# cmd/helm through go.mod's tool directive) for the chart's tests. Binaries land outside
# the clone, in
# $E2E_CACHE_DIR (default ~/.cache/website-apiserver/e2e), in a folder per module keyed by its pinned
# version and a hash of its go.mod, go.sum and sources, so a clean clone reuses them and a version bump
# rebuilds. Prints the folder that holds all the binaries. With E2E_BUILD_CHECK_ONLY=1 it builds nothing and
# exits 3 when something is not built yet (the benchmark uses that to skip its CRD baseline).
set -euo pipefail
here="$(cd "$(dirname "$0")/../go" && pwd)"
cache="${E2E_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/website-apiserver/e2e}"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=readonly -trimpath -buildvcs=false"
# go.sum is committed, so no checksum database lookups are needed (the proxy here has none for some tags).
export GONOSUMDB="${GONOSUMDB:-*}" GOFLAGS="$GOFLAGS"

key() { # <module dir> <version>: version plus a short hash of what the build reads
  (cd "$here/$1" && cat go.mod go.sum $(find . -name '*.go' | sort)) | sha256sum | cut -c1-12 | sed "s/^/$2-/"
}
build() { # <module dir> <version> <ldflags> <package>...
  local dir="$1" version="$2" ldflags="$3"; shift 3
  local out="$cache/$dir/$(key "$dir" "$version")"
  if [ -f "$out/.complete" ]; then echo "$out"; return; fi
  if [ "${E2E_BUILD_CHECK_ONLY:-}" = 1 ]; then echo "$dir $version is not built" >&2; exit 3; fi
  mkdir -p "$out"
  local started=$SECONDS
  # Inside $(...) errexit does not apply, so a failed build must stop here, before .complete is written.
  (cd "$here/$dir" && go build -ldflags "$ldflags" -o "$out/" "$@") >&2 || { echo "building $dir $version failed" >&2; exit 1; }
  echo "built $dir $version in $((SECONDS - started)) s" >&2
  touch "$out/.complete"
  echo "$out"
}

modversion() { # <module dir> <module path>: the version go.mod requires
  awk -v m="$2" '$1 == m { print $2 } $1 == "require" && $2 == m { print $3 }' "$here/$1/go.mod" | head -1
}
k8s_version="$(modversion k8s k8s.io/kubernetes)"
minor="$(echo "$k8s_version" | cut -d. -f2)"
p=k8s.io/component-base/version c=k8s.io/client-go/pkg/version
k8s_ldflags="-s -w -X $p.gitVersion=$k8s_version -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $c.gitVersion=$k8s_version -X $c.gitMajor=1 -X $c.gitMinor=$minor"
etcd_version="$(modversion etcd go.etcd.io/etcd/server/v3)"
etcd35_version="$(modversion etcd35 go.etcd.io/etcd/server/v3)"
cr_version="$(modversion statusapply sigs.k8s.io/controller-runtime)"
helm_version="$(modversion helm helm.sh/helm/v3)"
[ -n "$k8s_version" ] && [ -n "$etcd_version" ] && [ -n "$etcd35_version" ] && [ -n "$cr_version" ] && [ -n "$helm_version" ] || { echo "cannot read the pinned versions from the go.mod files" >&2; exit 1; }

etcd_dir="$(build etcd "$etcd_version" "-s -w" .)"
etcd35_dir="$(build etcd35 "$etcd35_version" "-s -w" .)"
probe_dir="$(build probe "$k8s_version" "-s -w" .)"
k8s_dir="$(build k8s "$k8s_version" "$k8s_ldflags" ./cmd/kube-apiserver ./cmd/kube-controller-manager ./cmd/kubelet \
  ./cmd/kube-proxy ./cmd/kube-scheduler ./cmd/kubectl)"
# After k8s: it shares k8s.io/api and client-go at the same versions, so most of it comes from Go's build cache.
statusapply_dir="$(build statusapply "$cr_version" "-s -w" .)"
# As helm's Makefile does: its version string, and the Kubernetes version of its client-go as the default for
# .Capabilities.KubeVersion (helm template, lint's deprecation rules; unset it is v1.20.0). Both are in the folder's key.
helm_kube="$(modversion helm k8s.io/client-go | awk -F. '{ print $2 }')"
[ -n "$helm_kube" ] || { echo "cannot read client-go's version from test/e2e/go/helm/go.mod" >&2; exit 1; }
helm_ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$helm_version -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for pkg in pkg/lint/rules pkg/chartutil; do helm_ldflags="$helm_ldflags -X helm.sh/helm/v3/$pkg.k8sVersionMajor=1 -X helm.sh/helm/v3/$pkg.k8sVersionMinor=$helm_kube"; done
helm_dir="$(build helm "$helm_version-kube1.$helm_kube" "$helm_ldflags" helm.sh/helm/v3/cmd/helm)"

bin="$cache/bin-$(echo "$etcd_dir $etcd35_dir $probe_dir $k8s_dir $statusapply_dir $helm_dir" | sha256sum | cut -c1-12)"
mkdir -p "$bin"
ln -sf "$etcd_dir/etcd" "$bin/etcd"
ln -sf "$etcd35_dir/etcd35" "$bin/etcd-3.5"
ln -sf "$probe_dir/probe" "$bin/informer-probe"
ln -sf "$statusapply_dir/statusapply" "$bin/status-apply"
ln -sf "$helm_dir/helm" "$bin/helm"
ln -sf "$k8s_dir/kube-apiserver" "$bin/kube-apiserver"
for b in kube-controller-manager kubelet kube-proxy kube-scheduler kubectl; do ln -sf "$k8s_dir/$b" "$bin/$b"; done
echo "$k8s_version" > "$bin/kubernetes-version"
echo "$bin"
