"""Which tools bring AgentDojo's injections in: an audit of mecha.toml.

    python audit.py [mecha.toml]

For every user task of every suite it plays the ground truth on the
environment with a canary in each injection place (as AgentDojo's attacks
find where to inject) and prints, per tool, the injection places its
results showed, and whether mecha.toml declares that tool `external`. It is
a check of the declarations after the fact, not their source: they were
written from the tools' descriptions.
"""

import sys
import tomllib
from pathlib import Path

from agentdojo.agent_pipeline.tool_execution import tool_result_to_str
from agentdojo.functions_runtime import FunctionsRuntime
from agentdojo.task_suite.load_suites import get_suites

BENCH = Path(__file__).resolve().parent


def main() -> int:
    decl = tomllib.loads(Path(sys.argv[1] if len(sys.argv) > 1 else BENCH / "mecha.toml").read_text())
    bad = 0
    for name, suite in get_suites("v1.2.2").items():
        caps = decl["mcp"]["servers"][name]["tool_capabilities"]
        canaries = {v: f"<CANARY---{v}--->" for v in suite.get_injection_vector_defaults()}
        seen: dict[str, set[str]] = {}
        for task in suite.user_tasks.values():
            env = task.init_environment(suite.load_and_inject_default_environment(canaries))
            runtime = FunctionsRuntime(suite.tools)
            for call in task.ground_truth(env.model_copy(deep=True)):
                result, _ = runtime.run_function(env, call.function, call.args)
                text = tool_result_to_str(result)
                for v, c in canaries.items():
                    if c in text:
                        seen.setdefault(call.function, set()).add(v)
        for tool, vs in sorted(seen.items()):
            ok = "external" in caps.get(tool, [])
            bad += not ok
            print(f"{name:<10} {tool:<34} {'external' if ok else 'NOT DECLARED EXTERNAL'}  {len(vs)} place(s): {', '.join(sorted(vs))}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
