"""Take the repair cases of two peers' published test suites as data.

    python3 extract.py JSON_REPAIR_CHECKOUT JSONREPAIR_CHECKOUT

JSON_REPAIR_CHECKOUT is a checkout of the Python `json_repair` (MIT), JSONREPAIR_CHECKOUT
one of the JS `jsonrepair` (ISC) with `typescript` installed beside it (`npm install
typescript` in that directory). Writes `json_repair.jsonl` and `jsonrepair.jsonl` here:
one case a line, {"input", "expected", "at"}; "expected" is the peer's output as JSON
text, or null where the peer's test says it gives up (raises, or returns nothing).

Only the facts are taken: each assertion's input and expected output, read from the test
files' syntax trees (Python) or by running the test file against stand-ins that record
what `jsonrepair` is given and what the test expects (JS). No peer code runs.
"""

import ast
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

PY_FILES = [
    "test_parse_array.py",
    "test_parse_comment.py",
    "test_parse_number.py",
    "test_parse_object.py",
    "test_parse_string.py",
    "test_json_repair.py",
]

# Keyword arguments that change only the output's form or how the peer gets there:
# cases with any other (streaming, logging, schemas, strict mode, file input) are left out.
PY_FORMAT_ONLY = {"return_objects", "ensure_ascii", "indent", "skip_json_loads"}


def python_cases(root):
    cases = []
    for name in PY_FILES:
        path = os.path.join(root, "tests", name)
        tree = ast.parse(open(path, encoding="utf-8").read())
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare)):
                continue
            cmp = node.test
            if len(cmp.ops) != 1 or not isinstance(cmp.ops[0], ast.Eq):
                continue
            call = cmp.left
            if not isinstance(call, ast.Call):
                continue
            func = call.func
            fname = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if fname != "repair_json" or len(call.args) != 1:
                continue
            kw = {k.arg: k.value for k in call.keywords}
            if set(kw) - PY_FORMAT_ONLY:
                continue
            try:
                text = ast.literal_eval(call.args[0])
                expected = ast.literal_eval(cmp.comparators[0])
                objects = ast.literal_eval(kw["return_objects"]) if "return_objects" in kw else False
            except (ValueError, SyntaxError):
                continue
            if not isinstance(text, str):
                continue
            if objects:
                if expected == "" or expected is None and "null" not in text:
                    out = None
                else:
                    try:
                        out = json.dumps(expected, ensure_ascii=False, allow_nan=False)
                    except ValueError:
                        continue
            else:
                if not isinstance(expected, str):
                    continue
                out = expected if expected.strip() != "" else None
            cases.append({"input": text, "expected": out, "at": f"tests/{name}:{node.lineno}"})
    return cases


JS_SHIM = r"""
const ts = require(process.argv[2] + '/node_modules/typescript');
const fs = require('fs');
let src = fs.readFileSync(process.argv[2] + '/src/index.test.ts', 'utf8');
src = src.replace(/^import .*$/mg, '');
const js = ts.transpileModule(src, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2020 } }).outputText;
const cases = [];
let lastInput;
function jsonRepairRegular(text) { lastInput = text; return { __input: text }; }
function jsonrepairCore() { return { transform() {}, flush() {} }; }
class JSONRepairError extends Error {}
function record(input, expected) {
  cases.push({ input, expected });
}
function expect(v) {
  return {
    toBe(y) { if (v && v.__input !== undefined) record(v.__input, y); },
    toEqual(y) { if (v && v.__input !== undefined) record(v.__input, y); },
    toThrow() { lastInput = undefined; try { v(); } catch (e) {} if (lastInput !== undefined) record(lastInput, null); },
  };
}
const describe = (name, fn) => fn();
describe.each = (impls) => (name, fn) => fn(impls[0]);
// A test that uses the output further (parses it, say) is left with what it recorded.
const test = (name, fn) => { try { fn(); } catch (e) {} };
test.skip = () => {};
describe.skip = () => {};
new Function('describe', 'test', 'expect', 'jsonRepairRegular', 'jsonrepairCore', 'JSONRepairError', 'console', 'exports', 'require', js)(
  describe, test, expect, jsonRepairRegular, jsonrepairCore, JSONRepairError, { log() {} }, {}, require);
process.stdout.write(JSON.stringify(cases));
"""


def js_cases(root):
    shim = os.path.join(HERE, ".extract_shim.js")
    open(shim, "w").write(JS_SHIM)
    try:
        out = subprocess.run(["node", shim, os.path.abspath(root)], check=True, capture_output=True, text=True).stdout
    finally:
        os.remove(shim)
    cases = []
    for i, c in enumerate(json.loads(out)):
        if not isinstance(c["input"], str):
            continue
        exp = c["expected"]
        if exp is not None and not isinstance(exp, str):
            continue
        cases.append({"input": c["input"], "expected": exp, "at": f"src/index.test.ts#{i + 1}"})
    return cases


def write(name, cases):
    seen = set()
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        for c in cases:
            key = (c["input"], c["expected"])
            if key in seen:
                continue
            seen.add(key)
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    print(f"{name}: {len(seen)} cases")


if __name__ == "__main__":
    write("json_repair.jsonl", python_cases(sys.argv[1]))
    write("jsonrepair.jsonl", js_cases(sys.argv[2]))
