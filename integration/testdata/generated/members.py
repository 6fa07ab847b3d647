#!/usr/bin/env python3
"""Puppet's report YAML -> the members pippet's report is held to (integration/testdata/generated)."""
import json, sys, yaml, base64

class L(yaml.SafeLoader): pass
def multi(loader, suffix, node):
    if isinstance(node, yaml.MappingNode): return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode): return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)
L.add_multi_constructor('!', multi); L.add_multi_constructor('tag:', multi)
def binary(loader, node):
    return base64.b64decode(loader.construct_scalar(node)).decode()
L.add_constructor('tag:yaml.org,2002:binary', binary)

r = yaml.load(open(sys.argv[1]), Loader=L)
out = {"status": r["status"], "statuses": {}, "logs": [], "metrics": {}}
SK = ("title", "resource_type", "containment_path", "tags", "provider_used", "changed", "failed", "skipped",
      "out_of_sync", "failed_to_restart", "change_count", "out_of_sync_count", "corrective_change")
EK = ("audited", "property", "previous_value", "desired_value", "historical_value", "message", "name", "status", "redacted", "corrective_change")
left = 0
for ref, s in r["resource_statuses"].items():
    if s["resource_type"] in ("Schedule", "Filebucket"):
        left += 1  # puppet apply's own resources, not the manifest's
        continue
    st = {k: s[k] for k in SK}
    st["events"] = [{k: e.get(k) for k in EK} for e in s["events"]]
    out["statuses"][ref] = st
for l in r["logs"]:
    if l["message"].startswith(("Applied catalog in", "Compiled catalog for")):
        continue
    out["logs"].append({"level": l["level"], "source": l["source"], "message": l["message"], "tags": l["tags"]})
for name in ("resources", "events", "changes"):
    out["metrics"][name] = {v[0]: v[2] for v in r["metrics"][name]["values"]}
out["metrics"]["resources"]["total"] -= left
json.dump(out, sys.stdout, indent=1, sort_keys=True)
print()
