#!/usr/bin/env bash
# Builds, once per version, what `make e2e` runs: the Pulumi CLI, the Kubernetes provider,
# etcd, the Kubernetes control plane and kubectl, kwok, Kueue and JobSet, all from source
# through the Go module proxy, and gathers the CRDs the stacks need from the same modules.
#
# Each part lands in $AISTACK_E2E_CACHE/<part>-<version>-<go version>/ (default
# ~/.cache/aistack-e2e), outside the clone: a fresh clone on the same machine finds it
# built, a new machine builds it cold. The seconds each build took are appended to
# build-times.tsv there (docs/e2e.md records them). Prints the cache's env file last.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env disable=SC1091
source "$here/versions.env"
cache=${AISTACK_E2E_CACHE:-$HOME/.cache/aistack-e2e}
go_version=$(go env GOVERSION)
mkdir -p "$cache"

part_dir() { echo "$cache/$1-$2-$go_version"; }

# build PART VERSION STEP: runs STEP DIR VERSION into a fresh DIR unless DIR is complete.
build() {
    local part=$1 version=$2 step=$3 dir start
    dir=$(part_dir "$part" "$version")
    if [ -f "$dir/.built" ]; then
        echo "e2e: $part $version (cached)"
        return
    fi
    rm -rf "$dir"
    mkdir -p "$dir/bin" "$dir/src"
    start=$SECONDS
    "$step" "$dir" "$version"
    printf '%s\t%s\t%s\t%s\t%s\n' "$part" "$version" "$((SECONDS - start))" "$go_version" \
        "$(date -u +%FT%TZ)" >>"$cache/build-times.tsv"
    touch "$dir/.built"
    echo "e2e: $part $version built in $((SECONDS - start)) s"
}

# The directory the module proxy's copy of MODULE@VERSION is unpacked in (read-only).
module_dir() { (cd "$1" && go mod download -json "$2" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])'); }

# A module of our own that requires the programs to build (`go get -tool`). Building a
# program as a dependency ignores its own go.mod's replace directives, so each one that
# points at another module (not at a directory of its repository) is carried over, and
# each that points at a directory of the repository (Kubernetes' staging modules) is
# replaced by the module of that name at STAGING_VERSION.
wrapper() {
    local src=$1 go_directive=$2 main=$3 staging_version=${4:-}
    printf 'module aistack.dev/e2e/wrapper\n\ngo %s\n' "$go_directive" >"$src/go.mod"
    local gomod
    gomod=$(cd "$src" && go mod download -json "$main" | python3 -c 'import json,sys; print(json.load(sys.stdin)["GoMod"])')
    python3 - "$gomod" "$staging_version" <<'PY' | while read -r edit; do (cd "$src" && go mod edit "$edit"); done
import json, subprocess, sys
gomod, staging = sys.argv[1], sys.argv[2]
spec = json.loads(subprocess.run(["go", "mod", "edit", "-json", gomod], check=True,
                                 capture_output=True, text=True).stdout)
for replace in spec.get("Replace") or []:
    old, new = replace["Old"]["Path"], replace["New"]
    if new.get("Version"):
        print(f"-replace={old}={new['Path']}@{new['Version']}")
    elif staging and new["Path"].startswith("./staging/"):
        print(f"-replace={old}={old}@{staging}")
PY
}

pulumi_cli() {
    local dir=$1 v=$2
    wrapper "$dir/src" 1.26.6 "github.com/pulumi/pulumi/pkg/v3@$v"
    cd "$dir/src"
    go get -tool "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi@$v" "github.com/pulumi/pulumi/sdk/v3@$v"
    go build -trimpath -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$v" \
        -o "$dir/bin/pulumi" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi
}

# The YAML language host: Pulumi YAML programs through the real CLI (the Python, Node.js and
# Go hosts are not served by the proxy).
pulumi_yaml() {
    local dir=$1 v=$2
    wrapper "$dir/src" 1.24.7 "github.com/pulumi/pulumi-yaml@$v"
    cd "$dir/src"
    go get -tool "github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml@$v"
    go build -trimpath -ldflags "-s -w -X github.com/pulumi/pulumi-yaml/pkg/version.Version=$v" \
        -o "$dir/bin/pulumi-language-yaml" github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml
}

# The provider embeds a schema its `go generate` writes, so it builds from a writable copy
# of its module, with its SDK (a directory of its repository) taken from the proxy.
kubernetes_provider() {
    local dir=$1 v=$2 module
    printf 'module aistack.dev/e2e/wrapper\n\ngo 1.24.7\n' >"$dir/src/go.mod"
    module=$(module_dir "$dir/src" "github.com/pulumi/pulumi-kubernetes/provider/v4@$v")
    cp -r "$module" "$dir/src/provider"
    chmod -R u+w "$dir/src/provider"
    cd "$dir/src/provider"
    go mod edit -dropreplace=github.com/pulumi/pulumi-kubernetes/sdk/v4
    go mod download github.com/pulumi/pulumi-kubernetes/sdk/v4
    GOFLAGS=-mod=mod go mod tidy
    (cd cmd/pulumi-resource-kubernetes && VERSION="$v" go run generate.go)
    go build -trimpath -ldflags "-s -w -X github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version=$v" \
        -o "$dir/bin/pulumi-resource-kubernetes" ./cmd/pulumi-resource-kubernetes
}

kubernetes() {
    local dir=$1 v=$2 minor staging
    minor=$(echo "$v" | cut -d. -f2)
    staging="v0.${v#v1.}"
    wrapper "$dir/src" 1.26.0 "k8s.io/kubernetes@$v" "$staging"
    cd "$dir/src"
    local programs=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
    local program
    for program in "${programs[@]}"; do go get -tool "k8s.io/kubernetes/cmd/$program@$v"; done
    local stamp="" pkg
    for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        stamp+=" -X $pkg.gitVersion=$v -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
    done
    for program in "${programs[@]}"; do
        go build -trimpath -ldflags "-s -w$stamp" -o "$dir/bin/$program" "k8s.io/kubernetes/cmd/$program"
    done
}

etcd() {
    local dir=$1 v=$2 m
    wrapper "$dir/src" 1.26.0 "go.etcd.io/etcd/server/v3@$v"
    cd "$dir/src"
    # etcd's modules replace each other with directories of its repository: one version.
    go get -tool "go.etcd.io/etcd/server/v3@$v"
    for m in api/v3 client/pkg/v3 client/v3 pkg/v3; do go get "go.etcd.io/etcd/$m@$v"; done
    go build -trimpath -ldflags "-s -w" -o "$dir/bin/etcd" go.etcd.io/etcd/server/v3
}

# kwok fakes the GPU nodes' kubelets.
kwok() {
    local dir=$1 v=$2
    wrapper "$dir/src" 1.26.0 "sigs.k8s.io/kwok@$v"
    cd "$dir/src"
    go get -tool "sigs.k8s.io/kwok/cmd/kwok@$v"
    go build -trimpath -ldflags "-s -w" -o "$dir/bin/kwok" sigs.k8s.io/kwok/cmd/kwok
}

# kwok's stages (what a node and a pod go through), from its module's kustomize/stage:
# nodes become Ready and renew their Lease as a kubelet does (without it the node
# lifecycle controller marks them NotReady after its grace period and evicts their
# pods), pods become Running and Ready, Job pods complete. Written on every run, so a
# change here needs no rebuild of the cached binary.
kwok_stages() {
    local dir module stage
    dir=$(part_dir kwok "$1")
    module=$(module_dir "$dir/src" "sigs.k8s.io/kwok@$1")
    for stage in node/fast/node-initialize node/heartbeat-with-lease/node-heartbeat-with-lease \
        pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete; do
        cat "$module/kustomize/stage/$stage.yaml"
        echo "---"
    done >"$dir/stages.yaml"
}

kueue() {
    local dir=$1 v=$2 module
    wrapper "$dir/src" 1.26.0 "sigs.k8s.io/kueue@$v"
    cd "$dir/src"
    go get -tool "sigs.k8s.io/kueue/cmd/kueue@$v"
    go build -trimpath -ldflags "-s -w -X sigs.k8s.io/kueue/pkg/version.GitVersion=$v" -o "$dir/bin/kueue" sigs.k8s.io/kueue/cmd/kueue
    module=$(module_dir . "sigs.k8s.io/kueue@$v")
    mkdir -p "$dir/manifests"
    cp "$module"/config/components/crd/bases/*.yaml "$module/config/components/webhook/manifests.yaml" "$dir/manifests/"
}

jobset() {
    local dir=$1 v=$2 module
    wrapper "$dir/src" 1.26.0 "sigs.k8s.io/jobset@$v"
    cd "$dir/src"
    go get -tool "sigs.k8s.io/jobset@$v"
    go build -trimpath -ldflags "-s -w" -o "$dir/bin/jobset" sigs.k8s.io/jobset
    module=$(module_dir . "sigs.k8s.io/jobset@$v")
    mkdir -p "$dir/manifests/patches"
    cp "$module"/config/components/crd/bases/*.yaml "$module/config/components/webhook/manifests.yaml" "$dir/manifests/"
    # kustomize patches the pod webhooks to JobSet's own pods (an objectSelector).
    cp "$module"/config/components/webhook/patches/*.yaml "$dir/manifests/patches/"
}

# CRDs only: MODULE@VERSION's files under each given directory.
crds() {
    local dir=$1 v=$2 module
    shift 2
    printf 'module aistack.dev/e2e/wrapper\n\ngo 1.26.0\n' >"$dir/src/go.mod"
    module=$(module_dir "$dir/src" "$CRD_MODULE@$v")
    mkdir -p "$dir/manifests"
    for sub in $CRD_DIRS; do cp "$module/$sub"/*.yaml "$dir/manifests/"; done
}
gateway_api() { CRD_MODULE=sigs.k8s.io/gateway-api CRD_DIRS=config/crd/standard crds "$@"; }
prometheus_engine() { CRD_MODULE=github.com/GoogleCloudPlatform/prometheus-engine CRD_DIRS=charts/operator/crds crds "$@"; }
gke_gateway_api() { CRD_MODULE=github.com/GoogleCloudPlatform/gke-gateway-api CRD_DIRS=config/crd crds "$@"; }

build pulumi "$PULUMI_CLI" pulumi_cli
build pulumi-kubernetes "$PULUMI_KUBERNETES_PROVIDER" kubernetes_provider
build etcd "$ETCD" etcd
build pulumi-yaml "$PULUMI_YAML" pulumi_yaml
build kubernetes "$KUBERNETES" kubernetes
build kwok "$KWOK" kwok
kwok_stages "$KWOK"
build kueue "$KUEUE" kueue
build jobset "$JOBSET" jobset
build gateway-api "$GATEWAY_API" gateway_api
build prometheus-engine "$PROMETHEUS_ENGINE" prometheus_engine
build gke-gateway-api "$GKE_GATEWAY_API" gke_gateway_api

# What the harness reads (e2e/_parts.py): each part's directory, written into the clone
# (build/e2e/parts.env), so clones at different versions sharing one cache never read
# each other's list.
parts_env="$here/../../build/e2e/parts.env"
mkdir -p "$(dirname "$parts_env")"
{
    echo "PULUMI=$(part_dir pulumi "$PULUMI_CLI")"
    echo "PULUMI_KUBERNETES=$(part_dir pulumi-kubernetes "$PULUMI_KUBERNETES_PROVIDER")"
    echo "PULUMI_YAML=$(part_dir pulumi-yaml "$PULUMI_YAML")"
    echo "ETCD=$(part_dir etcd "$ETCD")"
    echo "KUBERNETES=$(part_dir kubernetes "$KUBERNETES")"
    echo "KWOK=$(part_dir kwok "$KWOK")"
    echo "KUEUE=$(part_dir kueue "$KUEUE")"
    echo "JOBSET=$(part_dir jobset "$JOBSET")"
    echo "GATEWAY_API=$(part_dir gateway-api "$GATEWAY_API")"
    echo "PROMETHEUS_ENGINE=$(part_dir prometheus-engine "$PROMETHEUS_ENGINE")"
    echo "GKE_GATEWAY_API=$(part_dir gke-gateway-api "$GKE_GATEWAY_API")"
} >"$parts_env"
echo "$parts_env"
