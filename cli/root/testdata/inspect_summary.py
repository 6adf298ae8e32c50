"""Reads an Inspect eval log with Inspect's own reader and prints what the
scripts of testdata/inspect check, one fact a line:

    log STATUS MODEL TASK samples=N epochs=N ids=ID,ID
    score NAME METRIC=VALUE ...
    sample ID EPOCH roles=R,R,... calls=FN,FN errors=N score=V input=TEXT
    meta ID EPOCH KEY=VALUE  (mecha's metadata, sorted)
    usage ID EPOCH MODEL in=N out=N
    output ID EPOCH STOP COMPLETION
    reasoning ID EPOCH TEXT  (each reasoning block, as ContentReasoning)
    toolerror ID EPOCH TYPE MESSAGE  (each failed call's ToolCallError)

Its header alone is read too (as "inspect view" lists logs), and must
agree on the samples' count.
"""
import json
import sys

from inspect_ai._util.content import ContentReasoning
from inspect_ai.log import read_eval_log

path = sys.argv[1]
log = read_eval_log(path)
head = read_eval_log(path, header_only=True)
assert head.samples is None and head.results.total_samples == len(log.samples), "header disagrees"
ids = ",".join(str(i) for i in log.eval.dataset.sample_ids)
print(f"log {log.status} {log.eval.model} {log.eval.task} samples={len(log.samples)} epochs={log.eval.config.epochs} ids={ids}")
for s in log.results.scores:
    metrics = " ".join(f"{k}={v.value:.3f}" for k, v in sorted(s.metrics.items()))
    print(f"score {s.name} {metrics}".rstrip())
for s in log.samples:
    calls = [c.function for m in s.messages if m.role == "assistant" for c in (m.tool_calls or [])]
    errors = sum(1 for m in s.messages if m.role == "tool" and m.error is not None)
    score = ",".join(f"{k}:{v.value}" for k, v in (s.scores or {}).items()) or "-"
    text = s.input if isinstance(s.input, str) else "(messages)"
    print(f"sample {s.id} {s.epoch} roles={','.join(m.role for m in s.messages)} calls={','.join(calls)} errors={errors} score={score} input={text}")
    for k in sorted(s.metadata):
        v = s.metadata[k]
        print(f"meta {s.id} {s.epoch} {k}={json.dumps(v, sort_keys=True) if not isinstance(v, str) else v}")
    for model, u in sorted(s.model_usage.items()):
        print(f"usage {s.id} {s.epoch} {model} in={u.input_tokens} out={u.output_tokens}")
    for m in s.messages:
        if m.role == "assistant" and not isinstance(m.content, str):
            for c in m.content:
                if isinstance(c, ContentReasoning):
                    print(f"reasoning {s.id} {s.epoch} {c.reasoning}")
        if m.role == "tool" and m.error is not None:
            print(f"toolerror {s.id} {s.epoch} {m.error.type} {m.error.message}")
    stop = s.output.choices[0].stop_reason if s.output.choices else "-"
    print(f"output {s.id} {s.epoch} {stop} {s.output.completion}")
    if s.error:
        print(f"error {s.id} {s.epoch} {s.error.message}")
