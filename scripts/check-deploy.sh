#!/usr/bin/env bash
# `make check-deploy`: checks every recipe in deploy/ with the tool that owns its format, offline:
#   Kubernetes manifests  kubernetes-validate --strict (PyPI; ships the schemas, needs no cluster)
#   systemd unit          systemd-analyze verify (any warning fails)
#   nginx config          nginx -t on the recipe wrapped by scripts/nginx-conf.sh
# Each checker is also shown a broken copy and must reject it, so a checker that accepts anything fails
# this script. Prints "check-deploy: N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
py=${FLIPBOOK_PYTHON:-$here/.build/venv/bin/python3}
validate="$(dirname "$py")/kubernetes-validate"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { echo "ok   $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; [ -n "${2:-}" ] && sed 's/^/     /' <<<"$2"; failed=$((failed + 1)); }

if [ ! -x "$validate" ]; then
  bad "kubernetes-validate not installed in $(dirname "$py") (run make venv)"
else
  for f in "$here"/deploy/kubernetes/*.yaml; do
    if out=$("$validate" --strict --quiet "$f" 2>&1); then ok "kubernetes-validate ${f#$here/}"; else bad "kubernetes-validate ${f#$here/}" "$out"; fi
  done
  sed 's/containerPort: 8080/containerPort: "http-port"/' "$here/deploy/kubernetes/serve.yaml" > "$work/broken.yaml"
  if "$validate" --strict --quiet "$work/broken.yaml" >/dev/null 2>&1; then bad "kubernetes-validate accepted a string containerPort"; else ok "kubernetes-validate rejects a broken manifest"; fi
  # The Indexed Job must take its shard from the completion index, in the $(VAR) form Kubernetes expands.
  job="$here/deploy/kubernetes/convert-job.yaml"
  if grep -q 'completionMode: Indexed' "$job" && grep -q -- '- \$(JOB_COMPLETION_INDEX)/8' "$job" \
     && grep -q 'completions: 8' "$job" && grep -q "job-completion-index" "$job"; then ok "convert job shards by \$(JOB_COMPLETION_INDEX)/8 over 8 completions"
  else bad "convert job: Indexed, completions 8 and --shard \$(JOB_COMPLETION_INDEX)/8 expected"; fi
fi

# KEDA's ScaledObject is a custom resource (no schema in kubernetes-validate): check its shape, and that it
# scales the worker Deployment on a count of available jobs. The query itself runs against a real PostgreSQL
# in WorkerQueueTests (scenario app).
if out=$("$py" - "$here/deploy/keda/worker-scaledobject.yaml" "$here/deploy/kubernetes/worker.yaml" <<'PY' 2>&1
import sys, yaml
docs = list(yaml.safe_load_all(open(sys.argv[1])))
deployment = yaml.safe_load(open(sys.argv[2]))
auth = next(d for d in docs if d["kind"] == "TriggerAuthentication")
scaled = next(d for d in docs if d["kind"] == "ScaledObject")
assert all(d["apiVersion"] == "keda.sh/v1alpha1" for d in docs), "apiVersion"
spec = scaled["spec"]
assert spec["scaleTargetRef"]["name"] == deployment["metadata"]["name"], "scaleTargetRef must name the worker Deployment"
(trigger,) = spec["triggers"]
assert trigger["type"] == "postgresql", trigger["type"]
assert trigger["authenticationRef"]["name"] == auth["metadata"]["name"], "authenticationRef"
assert {p["parameter"] for p in auth["spec"]["secretTargetRef"]} == {"connection"}, "connection secret"
query = trigger["metadata"]["query"]
assert "flipbook.jobs" in query and "state = 'available'" in query, query
assert int(trigger["metadata"]["targetQueryValue"]) > 0
assert 0 <= spec["minReplicaCount"] < spec["maxReplicaCount"]
PY
); then ok "keda ScaledObject scales flipbook-worker on available jobs"; else bad "keda ScaledObject" "$out"; fi

# systemd-analyze wants the ExecStart binary to exist: point it at this build's flipbook (or /bin/true).
bin="$here/.build/debug/flipbook"; [ -x "$bin" ] || bin=/bin/true
for name in flipbook flipbook-worker; do
  unit="$work/$name.service"
  sed "s#/usr/local/bin/flipbook#$bin#" "$here/deploy/systemd/$name.service" > "$unit"
  out=$(systemd-analyze verify "$unit" 2>&1); rc=$?
  if [ $rc -eq 0 ] && [ -z "$out" ]; then ok "systemd-analyze verify deploy/systemd/$name.service"; else bad "systemd-analyze verify deploy/systemd/$name.service" "$out"; fi
done
unit="$work/flipbook.service"
sed 's/^TimeoutStopSec=.*/TimeoutStopSec=soon/' "$unit" > "$work/broken.service"
out=$(systemd-analyze verify "$work/broken.service" 2>&1)
if [ -n "$out" ]; then ok "systemd-analyze flags a broken unit"; else bad "systemd-analyze said nothing about TimeoutStopSec=soon"; fi

conf="$work/nginx"
"$here/scripts/nginx-conf.sh" "$conf" 18080 18081 18082 > "$work/nginx.conf"
if out=$(nginx -t -p "$conf" -c "$work/nginx.conf" -e "$conf/logs/error.log" 2>&1); then ok "nginx -t deploy/nginx/flipbook.conf"; else bad "nginx -t deploy/nginx/flipbook.conf" "$out"; fi
sed 's/proxy_cache_lock on;/proxy_cache_lock maybe;/' "$work/nginx.conf" > "$work/broken.conf"
if nginx -t -p "$conf" -c "$work/broken.conf" -e "$conf/logs/error.log" >/dev/null 2>&1; then bad "nginx -t accepted a broken config"; else ok "nginx -t rejects a broken config"; fi

echo "check-deploy: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
