#!/usr/bin/python3
"""Checks the packaging files that cannot run here (no container engine, no
Kubernetes): the compose file and the Kubernetes manifests parse as YAML and
every file they reference exists; each Containerfile's COPY sources exist,
its base is Debian 12, it runs as a non-root user with a health check; each
Kubernetes object has the fields it needs (apiVersion, kind, metadata.name,
selectors matching the pod template's labels, readiness probes, the config
map the pods read), and the set holds Deployments for the engines and
observers, a DaemonSet for the agents and PodDisruptionBudgets that select
pods of a Deployment.

usage: tests/packaging/manifests.py --repo ROOT --build-dir DIR
Prints one line per check; exits 1 when any failed, 2 on bad usage.
"""
import argparse
import os
import re
import sys

import yaml

failures = []


def check(ok, what):
    print(("  ok    " if ok else "  FAIL  ") + what)
    if not ok:
        failures.append(what)
    return ok


def skip(what):
    print("  skip  " + what)


def load_all(path):
    try:
        with open(path) as f:
            docs = [d for d in yaml.safe_load_all(f) if d is not None]
        check(True, f"{os.path.relpath(path)}: parses as YAML ({len(docs)} document(s))")
        return docs
    except (OSError, yaml.YAMLError) as e:
        check(False, f"{path}: does not parse: {e}")
        return []


# ---------------------------------------------------------------------------
# Containerfiles
# ---------------------------------------------------------------------------

def containerfile(path, repo, build_dir):
    args, lines = {}, []
    path = os.path.relpath(path, repo)
    with open(os.path.join(repo, path)) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            m = re.match(r"ARG\s+(\w+)=(.*)", line)
            if m:
                args[m.group(1)] = m.group(2)
            lines.append(line)
    check(not any(l.endswith("\\") for l in lines), f"{path}: no continuation lines (rootfs.sh reads it line by line)")

    def subst(s):
        return re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), m.group(0)), s)
    instr = [(l.split(None, 1)[0].upper(), subst(l.split(None, 1)[1] if " " in l else "")) for l in lines]
    kinds = [k for k, _ in instr]
    froms = [a for k, a in instr if k == "FROM"]
    check(len(froms) == 1 and re.match(r"(docker\.io/library/)?debian:12(-slim)?$", froms[0]) is not None,
          f"{path}: FROM Debian 12 ({froms})")
    users = [a for k, a in instr if k == "USER"]
    check(len(users) >= 1 and users[-1].split(":")[0] not in ("root", "0"), f"{path}: runs as a non-root user ({users})")
    check("HEALTHCHECK" in kinds and "ENTRYPOINT" in kinds, f"{path}: has a HEALTHCHECK and an ENTRYPOINT")
    check(any(k == "RUN" and "deploy/container/install.sh" not in a and a.strip() == "/usr/local/lib/converge/install.sh"
              for k, a in instr), f"{path}: RUNs the shared install script")
    web_missing = not os.path.exists(os.path.join(build_dir, "converge-web"))
    for k, a in instr:
        if k != "COPY":
            continue
        words = a.split()
        for src in words[:-1]:
            if src.startswith("--"):
                check(False, f"{path}: COPY flags are not supported by rootfs.sh: {src}")
                continue
            real = os.path.join(build_dir, src[len("build/"):]) if src.startswith("build/") else os.path.join(repo, src)
            if web_missing and os.path.basename(src) == "converge-web":
                skip(f"{path}: COPY source {src}: converge-web is not built")
                continue
            check(os.path.exists(real), f"{path}: COPY source {src} exists")


# ---------------------------------------------------------------------------
# compose
# ---------------------------------------------------------------------------

def compose(path, repo):
    docs = load_all(path)
    path = os.path.relpath(path, repo)
    if not check(len(docs) == 1 and isinstance(docs[0].get("services"), dict), f"{path}: one document with services"):
        return
    base = os.path.dirname(path)
    services = docs[0]["services"]
    for want in ("redis", "kafka", "engine", "observer"):
        check(want in services, f"{path}: a service {want}")
    for name, svc in services.items():
        check("image" in svc or "build" in svc, f"{path}: service {name} has an image or a build")
        build = svc.get("build")
        if isinstance(build, dict):
            ctx = os.path.normpath(os.path.join(base, build.get("context", ".")))
            check(os.path.isdir(ctx), f"{path}: service {name}: build context {ctx} exists")
            df = os.path.join(ctx, build.get("dockerfile", "Dockerfile"))
            check(os.path.isfile(df), f"{path}: service {name}: {os.path.relpath(df, repo)} exists")
        for dep in svc.get("depends_on", {}) or {}:
            check(dep in services, f"{path}: service {name} depends on {dep}, a service of the file")
        for env_file in ([svc["env_file"]] if isinstance(svc.get("env_file"), str) else svc.get("env_file", [])):
            check(os.path.isfile(os.path.join(base, env_file)), f"{path}: service {name}: env_file {env_file} exists")
        if name in ("engine", "observer"):
            env = svc.get("environment", {})
            check(isinstance(env, dict) and "CONVERGE_REDIS" in env and "CONVERGE_KAFKA" in env,
                  f"{path}: service {name} gets CONVERGE_REDIS and CONVERGE_KAFKA")


# ---------------------------------------------------------------------------
# Kubernetes
# ---------------------------------------------------------------------------

def pod_workloads(objs):
    return [o for o in objs if o.get("kind") in ("Deployment", "DaemonSet", "StatefulSet")]


def k8s(k8s_dir, repo):
    kust_path = os.path.join(k8s_dir, "kustomization.yaml")
    kust = load_all(kust_path)
    files = []
    if check(len(kust) == 1 and kust[0].get("kind") == "Kustomization", f"{kust_path}: a Kustomization"):
        for res in kust[0].get("resources", []):
            p = os.path.join(k8s_dir, res)
            if check(os.path.isfile(p), f"{kust_path}: resource {res} exists"):
                files.append(p)
    listed = {os.path.basename(f) for f in files} | {"kustomization.yaml"}
    for f in sorted(os.listdir(k8s_dir)):
        if f.endswith((".yaml", ".yml")):
            check(f in listed, f"{k8s_dir}/{f}: listed in kustomization.yaml")
    objs = []
    for p in files:
        for d in load_all(p):
            d["_file"] = os.path.relpath(p, repo)
            objs.append(d)
    for o in objs:
        name = (o.get("metadata") or {}).get("name")
        check(bool(o.get("apiVersion")) and bool(o.get("kind")) and bool(name),
              f"{o['_file']}: {o.get('kind')} {name}: apiVersion, kind, metadata.name")
    configmaps = {o["metadata"]["name"] for o in objs if o.get("kind") == "ConfigMap"}
    images = {i["name"] for i in (kust[0].get("images", []) if kust else [])}
    for w in pod_workloads(objs):
        what = f"{w['_file']}: {w['kind']} {w['metadata']['name']}"
        spec = w.get("spec", {})
        sel = (spec.get("selector") or {}).get("matchLabels") or {}
        labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        check(bool(sel) and all(labels.get(k) == v for k, v in sel.items()),
              f"{what}: selector {sel} matches the template's labels")
        pod = (spec.get("template") or {}).get("spec") or {}
        check((pod.get("securityContext") or {}).get("runAsNonRoot") is True, f"{what}: runAsNonRoot")
        for c in pod.get("containers", []):
            cw = f"{what}: container {c.get('name')}"
            check(c.get("image") in images, f"{cw}: image {c.get('image')} is named in kustomization.yaml")
            probe = ((c.get("readinessProbe") or {}).get("exec") or {}).get("command") or []
            check(probe[:2] == ["converge-container", "health"], f"{cw}: readinessProbe runs converge-container health")
            for ef in c.get("envFrom", []):
                ref = (ef.get("configMapRef") or {}).get("name")
                check(ref in configmaps, f"{cw}: envFrom config map {ref} is defined")
    deployments = {o["metadata"]["name"]: o for o in objs if o.get("kind") == "Deployment"}
    for want in ("converge-engine", "converge-observer"):
        check(want in deployments, f"a Deployment {want}")
    check(any(o.get("kind") == "DaemonSet" and "agent" in o["metadata"]["name"] for o in objs),
          "a DaemonSet for the agents")
    pdbs = [o for o in objs if o.get("kind") == "PodDisruptionBudget"]
    check(len(pdbs) > 0, "a PodDisruptionBudget")
    for pdb in pdbs:
        sel = ((pdb.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
        hits = [n for n, d in deployments.items()
                if sel and all(d["spec"]["template"]["metadata"]["labels"].get(k) == v for k, v in sel.items())]
        check(len(hits) > 0, f"{pdb['_file']}: PodDisruptionBudget {pdb['metadata']['name']} selects {hits}")
    for svc in (o for o in objs if o.get("kind") == "Service"):
        sel = (svc.get("spec") or {}).get("selector") or {}
        check(any(all(w["spec"]["template"]["metadata"]["labels"].get(k) == v for k, v in sel.items())
                  for w in pod_workloads(objs)), f"{svc['_file']}: Service {svc['metadata']['name']} selects pods")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True)
    ap.add_argument("--build-dir", required=True)
    a = ap.parse_args()
    repo, build_dir = os.path.abspath(a.repo), os.path.abspath(a.build_dir)
    cdir = os.path.join(repo, "deploy/container")
    for role in ("engine", "observer", "agent", "web"):
        containerfile(os.path.join(cdir, f"Containerfile.{role}"), repo, build_dir)
    compose(os.path.join(cdir, "compose.yaml"), repo)
    k8s(os.path.join(repo, "deploy/k8s"), repo)
    print(f"  {len(failures)} failed" if failures else "  all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
