//! The native part of the Python module `toolstream` (`toolstream._toolstream`); the
//! Pythonic wrappers (iterator adapters, typing) are in `toolstream/__init__.py`.
//!
//! Every event and verdict crosses as a dict built from the crate's `Serialize` forms, so
//! the Python dicts have exactly the fields of `toolstream inspect --json` and
//! `toolstream classify --json`. The GIL is released while bytes are parsed; a Rust panic
//! reaches Python as an exception (PyO3's `PanicException`), never an abort.

#![deny(missing_docs)]

use std::sync::Arc;

use bytes::Bytes;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyInt, PyList, PyString, PyTuple};
use serde_json::Value;

use toolstream::assemble::{Event, Policy};
use toolstream::classify::{self, Phase, Provider};
use toolstream::json::{self, Mode};
use toolstream::pipeline;
use toolstream::provider::Format;
use toolstream::text_calls::{self, Family};

create_exception!(
    _toolstream,
    ToolstreamError,
    PyException,
    "A JSON error: `kind` (e.g. `invalid_number`), `offset` (the absolute byte offset), `value_index`."
);

/// A serde_json value as the Python object `json.loads` would give.
fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                // The literal (serde_json's arbitrary_precision keeps it): an integer of any
                // size is a Python int and anything else a float, as `json.loads` decides.
                let text = n.to_string();
                let builtins = py.import("builtins")?;
                if text.bytes().all(|b| b == b'-' || b.is_ascii_digit()) {
                    builtins.getattr("int")?.call1((text,))?
                } else {
                    builtins.getattr("float")?.call1((text,))?
                }
            }
        }
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(a) => {
            let list = PyList::empty(py);
            for x in a {
                list.append(to_py(py, x)?)?;
            }
            list.into_any()
        }
        Value::Object(o) => {
            let d = PyDict::new(py);
            for (k, x) in o {
                d.set_item(k, to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}

/// A Python object (dict, list, str, int, float, bool, None) as JSON, via `json.dumps`'s
/// rules.
fn from_py(o: &Bound<'_, PyAny>) -> PyResult<Value> {
    let json = o.py().import("json")?;
    let text: String = json.call_method1("dumps", (o,))?.extract()?;
    serde_json::from_str(&text).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// An event as its `inspect --json` dict; a tool call also carries `arguments_raw`, the
/// exact argument bytes.
fn event_dict<'py>(py: Python<'py>, e: &Event) -> PyResult<Bound<'py, PyAny>> {
    if let Event::ToolCall(c) = e {
        // Built here: the arguments' exact bytes may hold what a JSON value of serde_json
        // cannot (a number out of a float's range); `arguments` is then their text.
        let mut v = serde_json::json!({
            "type": "tool_call", "index": c.index, "part": c.part, "id": c.id, "name": c.name,
        });
        // As the CLI: where the id came from, when toolstream made it.
        match &c.id_source {
            toolstream::assemble::IdSource::Provider => {}
            toolstream::assemble::IdSource::Split { of } => {
                v["id_source"] = "split".into();
                v["id_from"] = of.as_str().into();
            }
            toolstream::assemble::IdSource::Text => v["id_source"] = "text".into(),
        }
        let d = to_py(py, &v)?;
        match serde_json::from_slice::<serde_json::Value>(&c.arguments) {
            Ok(a) => d.set_item("arguments", to_py(py, &a)?)?,
            Err(_) => d.set_item("arguments", String::from_utf8_lossy(&c.arguments))?,
        }
        d.set_item("arguments_raw", PyBytes::new(py, &c.arguments))?;
        if !c.repairs.is_empty() {
            let repairs = serde_json::to_value(&c.repairs)
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            d.set_item("repairs", to_py(py, &repairs)?)?;
        }
        return Ok(d);
    }
    let v = serde_json::to_value(e).map_err(|e| PyValueError::new_err(e.to_string()))?;
    to_py(py, &v)
}

fn json_error(e: &json::Error) -> PyErr {
    let err = ToolstreamError::new_err(e.to_string());
    Python::with_gil(|py| {
        let v = err.value(py);
        let _ = v.setattr("kind", e.kind().as_str());
        let _ = v.setattr("offset", e.offset());
        let _ = v.setattr("value_index", e.value_index());
    });
    err
}

fn format_of(name: Option<&str>) -> PyResult<Option<Format>> {
    match name {
        None | Some("auto") => Ok(None),
        Some(n) => Format::from_name(n)
            .map(Some)
            .ok_or_else(|| PyValueError::new_err(format!("unknown format '{n}'"))),
    }
}

/// The pipeline: bytes of a provider's streaming response in, events out.
#[pyclass(module = "toolstream._toolstream")]
struct Stream {
    inner: Option<pipeline::Stream>,
}

#[pymethods]
impl Stream {
    /// `text_calls` (`"auto"` or a family: `hermes`, `qwen3_coder`, `glm45`, `mistral`,
    /// `llama`, `kimi_k2`, `deepseek`, `minimax_m2`, `gpt_oss`, `pythonic`, `cohere`, `step3`,
    /// `granite`, `longcat`, `seed_oss`, `internlm`, `jamba`, `gemma4`, `json`, `phi4_mini`,
    /// `sarashina`, `inkling`, `olmo3`, `granite_20b_fc`, `kimi_k3`, `hy_v4`)
    /// takes the calls a model wrote into its text out of it, for the tools `tools` declares
    /// (the request body, or its tools list): required with it, since only declared tools
    /// are taken. With
    /// `repair=True` and `tools`, a call is also coerced by its tool's declared schema
    /// where a string stands for the number, boolean, object or array the schema says.
    #[new]
    #[pyo3(signature = (format=None, *, max_calls=None, preview=false, text_calls=None, tools=None, repair=false))]
    fn new(
        format: Option<&str>,
        max_calls: Option<usize>,
        preview: bool,
        text_calls: Option<&str>,
        tools: Option<&Bound<'_, PyAny>>,
        repair: bool,
    ) -> PyResult<Self> {
        let mut policy = Policy::default();
        if let Some(n) = max_calls {
            policy.max_calls = n;
        }
        policy.preview = preview;
        if repair {
            policy.repair = toolstream::repair::RepairPolicy::all();
        }
        let mut stream = pipeline::Stream::with_policy(format_of(format)?, policy);
        // The request body (or its tools list) as a request.
        let request = match tools {
            Some(t) => {
                let mut request = from_py(t)?;
                if request.is_array() {
                    request = serde_json::json!({ "tools": request });
                }
                Some(request)
            }
            None => None,
        };
        if let (true, Some(request)) = (repair, &request) {
            // With repair on, calls are coerced by their declared schemas too.
            let schemas = toolstream::schema::Tools::from_request(request)
                .map_err(|e| PyValueError::new_err(format!("tools: {e}")))?;
            stream = stream.with_schemas(schemas);
        }
        if let Some(family) = text_calls {
            let family = match family {
                "auto" => None,
                name => Some(Family::from_name(name).ok_or_else(|| {
                    PyValueError::new_err(format!("unknown text-call family '{name}'"))
                })?),
            };
            let request = request.as_ref().ok_or_else(|| {
                PyValueError::new_err(
                    "text_calls needs tools= (the request body or its tools): only calls to \
                     declared tools are taken out of the text",
                )
            })?;
            stream = stream.with_text_calls(family, text_calls::Tools::from_request(request));
        }
        Ok(Stream {
            inner: Some(stream),
        })
    }

    /// Push the next chunk; the events it completed.
    fn push<'py>(&mut self, py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyList>> {
        let s = self
            .inner
            .as_mut()
            .ok_or_else(|| PyValueError::new_err("push after finish"))?;
        let chunk = Bytes::copy_from_slice(data);
        let mut events = Vec::new();
        unlocked(py, chunk.len(), || s.push(chunk, &mut events));
        let out = PyList::empty(py);
        for e in &events {
            out.append(event_dict(py, e)?)?;
        }
        Ok(out)
    }

    /// End of stream: the events the end completes, `end` last.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let s = self
            .inner
            .take()
            .ok_or_else(|| PyValueError::new_err("finish called twice"))?;
        let mut events = Vec::new();
        py.allow_threads(|| s.finish(&mut events));
        let out = PyList::empty(py);
        for e in &events {
            out.append(event_dict(py, e)?)?;
        }
        Ok(out)
    }

    /// The live view of call `index`'s arguments (with `preview=True`).
    fn preview<'py>(&self, py: Python<'py>, index: u32) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self.inner.as_ref().and_then(|s| s.preview(index)) {
            Some(v) => Ok(Some(to_py(py, v)?)),
            None => Ok(None),
        }
    }

    /// The detected (or given) format's name, once known.
    #[getter]
    fn format(&self) -> Option<&'static str> {
        self.inner.as_ref()?.format().map(Format::as_str)
    }
}

/// Strict incremental splitting of concatenated JSON values.
#[pyclass(module = "toolstream._toolstream")]
struct Splitter {
    inner: Option<json::Splitter>,
}

#[pymethods]
impl Splitter {
    #[new]
    #[pyo3(signature = (*, any=false))]
    fn new(any: bool) -> Self {
        let mode = if any { Mode::Any } else { Mode::Objects };
        Splitter {
            inner: Some(json::Splitter::new(mode)),
        }
    }

    /// Push bytes; each value completed by them, as its exact bytes.
    fn push<'py>(&mut self, py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyList>> {
        let s = self
            .inner
            .as_mut()
            .ok_or_else(|| PyValueError::new_err("push after finish"))?;
        let chunk = Bytes::copy_from_slice(data);
        let mut values = Vec::new();
        let r = unlocked(py, chunk.len(), || s.push(chunk, &mut values));
        let out = PyList::empty(py);
        for v in &values {
            out.append(PyBytes::new(py, v.bytes()))?;
        }
        r.map_err(|e| json_error(&e))?;
        Ok(out)
    }

    /// End of input: the last value (a top-level number), or None; raises on a
    /// truncation.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let s = self
            .inner
            .take()
            .ok_or_else(|| PyValueError::new_err("finish called twice"))?;
        match s.finish() {
            Ok(v) => Ok(v.map(|v| PyBytes::new(py, v.bytes()))),
            Err(e) => Err(json_error(&e)),
        }
    }
}

/// The live view of a JSON value still arriving.
#[pyclass(module = "toolstream._toolstream")]
struct Preview {
    inner: json::Preview,
    /// The path of the last change and its Python tuple: a string growing delta after
    /// delta reports the same path each time, built once.
    last_path: Option<(Arc<[json::PathStep]>, Py<PyTuple>)>,
    /// The changes of a push, kept for the next one's (no allocation per push).
    changes: Vec<json::Change>,
}

#[pymethods]
impl Preview {
    #[new]
    #[pyo3(signature = (*, any=false))]
    fn new(any: bool) -> Self {
        let mode = if any { Mode::Any } else { Mode::Objects };
        Preview {
            inner: json::Preview::new(mode),
            last_path: None,
            changes: Vec::new(),
        }
    }

    /// Push bytes; the values they completed (as Python objects).
    fn push<'py>(&mut self, py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyList>> {
        let mut done = Vec::new();
        let p = &mut self.inner;
        let r = unlocked(py, data.len(), || p.push(data, &mut done));
        let out = PyList::empty(py);
        for v in &done {
            out.append(to_py(py, v)?)?;
        }
        r.map_err(|e| json_error(&e))?;
        Ok(out)
    }

    /// Push bytes; what they changed in the view, in order, as tuples: `("set", path,
    /// value)` (a value began: an object, array or string empty, a number or literal
    /// whole) and `("append", path, text)` (text added to a string). A path is a tuple of
    /// keys and indices, `()` for the root; a value that completes ends with its last
    /// change (the next value starts again from `()`). The cost is what the bytes add,
    /// not the view's size.
    fn update<'py>(&mut self, py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyList>> {
        let mut done = Vec::new();
        let mut changes = std::mem::take(&mut self.changes);
        let p = &mut self.inner;
        let r = unlocked(py, data.len(), || {
            p.push_changes(data, &mut done, &mut changes)
        });
        let mut items = Vec::with_capacity(changes.len());
        for c in changes.drain(..) {
            items.push(match c {
                json::Change::Set { path, value } => {
                    let path = self.py_path(py, path)?;
                    (intern!(py, "set"), path, to_py(py, &value)?).into_pyobject(py)?
                }
                json::Change::Append { path, text } => {
                    let path = self.py_path(py, path)?;
                    (intern!(py, "append"), path, PyString::new(py, &text)).into_pyobject(py)?
                }
                _ => continue,
            });
        }
        self.changes = changes;
        r.map_err(|e| json_error(&e))?;
        PyList::new(py, items)
    }

    /// The view of the value in progress, or None. Built anew on each call (Python objects
    /// are immutable): its cost is the view's size, so a caller that reads it after every
    /// delta pays that each time.
    fn partial<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self.inner.partial() {
            Some(v) => Ok(Some(to_py(py, v)?)),
            None => Ok(None),
        }
    }
}

impl Preview {
    /// A view path as a tuple of keys (str) and indices (int); the last one's tuple again
    /// when the path is the same.
    fn py_path<'py>(
        &mut self,
        py: Python<'py>,
        path: Arc<[json::PathStep]>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        if let Some((last, tuple)) = &self.last_path {
            if Arc::ptr_eq(last, &path) || *last == path {
                return Ok(tuple.bind(py).clone());
            }
        }
        let items: Vec<Bound<'py, PyAny>> = path
            .iter()
            .map(|s| match s {
                json::PathStep::Key(k) => PyString::new(py, k).into_any(),
                json::PathStep::Index(i) => PyInt::new(py, *i).into_any(),
            })
            .collect();
        let tuple = PyTuple::new(py, items)?;
        self.last_path = Some((path, tuple.clone().unbind()));
        Ok(tuple)
    }
}

/// Run `f` with the GIL released when `len` bytes are worth it: releasing and taking it
/// back costs more than parsing a delta of a few dozen bytes, and other threads gain
/// nothing from a pause that short.
fn unlocked<T: Send>(py: Python<'_>, len: usize, f: impl FnOnce() -> T + Send) -> T {
    if len >= UNLOCK_BYTES {
        py.allow_threads(f)
    } else {
        f()
    }
}

/// Pushes of this many bytes or more release the GIL while they are parsed.
const UNLOCK_BYTES: usize = 4096;

fn provider(name: &str) -> PyResult<Provider> {
    Provider::from_name(name)
        .ok_or_else(|| PyValueError::new_err(format!("unknown provider '{name}'")))
}

fn phase(name: Option<&str>) -> PyResult<Phase> {
    match name {
        None | Some("before_output") => Ok(Phase::BeforeOutput),
        Some("after_output") => Ok(Phase::AfterOutput),
        Some(p) => Err(PyValueError::new_err(format!("unknown phase '{p}'"))),
    }
}

fn verdict<'py>(py: Python<'py>, v: &classify::Verdict) -> PyResult<Bound<'py, PyAny>> {
    let j = serde_json::to_value(v).map_err(|e| PyValueError::new_err(e.to_string()))?;
    to_py(py, &j)
}

/// Classify an HTTP error response. `headers`: a mapping or (name, value) pairs.
#[pyfunction]
#[pyo3(signature = (provider_name, status, headers, body, *, attempt=0))]
fn classify_http<'py>(
    py: Python<'py>,
    provider_name: &str,
    status: u16,
    headers: &Bound<'py, PyAny>,
    body: &[u8],
    attempt: u32,
) -> PyResult<Bound<'py, PyAny>> {
    let items = if headers.hasattr("items")? {
        headers.call_method0("items")?
    } else {
        headers.clone()
    };
    let mut pairs: Vec<(String, String)> = Vec::new();
    for item in items.try_iter()? {
        let (n, v): (String, String) = item?.extract()?;
        pairs.push((n, v));
    }
    let v = classify::classify_response(
        provider(provider_name)?,
        status,
        pairs,
        body,
        attempt,
        &classify::Policy::default(),
    );
    verdict(py, &v)
}

/// Classify an error event inside a 200 stream (its JSON payload).
#[pyfunction]
#[pyo3(signature = (provider_name, payload, *, phase_name=None, attempt=0))]
fn classify_stream_error<'py>(
    py: Python<'py>,
    provider_name: &str,
    payload: &[u8],
    phase_name: Option<&str>,
    attempt: u32,
) -> PyResult<Bound<'py, PyAny>> {
    let v = classify::classify_stream_error(
        provider(provider_name)?,
        payload,
        phase(phase_name)?,
        attempt,
        &classify::Policy::default(),
    );
    verdict(py, &v)
}

/// Classify a transport error by its message.
#[pyfunction]
#[pyo3(signature = (message, *, attempt=0))]
fn classify_transport<'py>(
    py: Python<'py>,
    message: &str,
    attempt: u32,
) -> PyResult<Bound<'py, PyAny>> {
    verdict(
        py,
        &classify::classify_transport(message, attempt, &classify::Policy::default()),
    )
}

/// Classify a failed tool call (a `tool_call_error` event's fields).
#[pyfunction]
#[pyo3(signature = (tool, kind, offset, raw, *, detail=None, attempt=0))]
fn classify_tool_failure<'py>(
    py: Python<'py>,
    tool: &str,
    kind: &str,
    offset: u64,
    raw: &[u8],
    detail: Option<&str>,
    attempt: u32,
) -> PyResult<Bound<'py, PyAny>> {
    use classify::ToolFailureKind as K;
    let kind = match kind {
        "syntax" => K::Syntax,
        "truncated" => K::Truncated,
        "not_object" => K::NotObject,
        "limit" => K::Limit,
        "schema" => K::Schema,
        "unknown_tool" => K::UnknownTool,
        "no_name" => K::NoName,
        "interrupted" => K::Interrupted,
        k => return Err(PyValueError::new_err(format!("unknown failure kind '{k}'"))),
    };
    let f = classify::ToolFailure {
        tool,
        kind,
        offset,
        raw,
        detail,
    };
    verdict(
        py,
        &classify::classify_tool_failure(&f, attempt, &classify::Policy::default()),
    )
}

/// Repair a request body's history (a dict): returns the repaired body and what changed.
#[pyfunction]
fn repair_request<'py>(
    py: Python<'py>,
    body: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyList>)> {
    let mut v = from_py(body)?;
    let found = toolstream::request::repair(&mut v);
    let out = PyList::empty(py);
    for f in &found {
        let d = PyDict::new(py);
        d.set_item("path", &f.path)?;
        d.set_item("problem", f.problem.as_str())?;
        d.set_item("tool", &f.tool)?;
        out.append(d)?;
    }
    Ok((to_py(py, &v)?, out))
}

/// Repair a tool call's broken arguments (`str` or `bytes`): closed-form mistakes only,
/// each change reported. `kinds`: the names of the kinds to repair (all when not given).
/// Returns `{"arguments": str, "repairs": [...]}` (the arguments as they came, with no
/// repairs, when they were valid), or, when refused, `{"arguments": None, "refused":
/// {"reason", "offset"}, "repairs": [the repairs tried]}`.
#[pyfunction]
#[pyo3(signature = (arguments, *, kinds=None))]
fn repair_arguments<'py>(
    py: Python<'py>,
    arguments: &Bound<'py, PyAny>,
    kinds: Option<Vec<String>>,
) -> PyResult<Bound<'py, PyDict>> {
    use toolstream::repair::{repair, RepairKind, RepairPolicy};
    let raw: Vec<u8> = if let Ok(s) = arguments.extract::<String>() {
        s.into_bytes()
    } else {
        arguments.extract::<Vec<u8>>()?
    };
    let policy = match kinds {
        None => RepairPolicy::all(),
        Some(names) => {
            let mut p = RepairPolicy::default();
            for n in &names {
                let k = RepairKind::from_name(n)
                    .ok_or_else(|| PyValueError::new_err(format!("no repair kind {n:?}")))?;
                p = p.with(k, true);
            }
            p
        }
    };
    let d = PyDict::new(py);
    let list = |repairs: &[toolstream::repair::Repair]| -> PyResult<Bound<'py, PyAny>> {
        let v = serde_json::to_value(repairs).map_err(|e| PyValueError::new_err(e.to_string()))?;
        to_py(py, &v)
    };
    match repair(&raw, policy) {
        Ok(r) => {
            d.set_item("arguments", String::from_utf8_lossy(&r.arguments))?;
            d.set_item("repairs", list(&r.repairs)?)?;
        }
        Err(r) => {
            d.set_item("arguments", py.None())?;
            let refused = PyDict::new(py);
            refused.set_item("reason", r.reason.as_str())?;
            refused.set_item("offset", r.offset)?;
            d.set_item("refused", refused)?;
            d.set_item("repairs", list(&r.tried)?)?;
        }
    }
    Ok(d)
}

/// A provider's stream as the proxy gives it to its client, bytes in, bytes out: every
/// call whole and validated the moment its arguments close, glued calls split (ids made in
/// the provider's shape), duplicates dropped, failed calls annotated, a cut stream ended
/// with an error in the provider's shape. `api` is `chat` (OpenAI chat completions and the
/// servers that speak it), `anthropic` (Messages) or `responses` (the OpenAI Responses
/// API), all streaming; for a Python gateway that holds the upstream's stream already.
/// With `text_calls` (`auto` or a family's name) and the `request` body (whose declared
/// tools are the calls taken), the calls written into the text are taken out of it.
#[pyclass(module = "toolstream._toolstream")]
struct Rewriter {
    inner: Option<toolstream::rewrite::Rewriter>,
}

#[pymethods]
impl Rewriter {
    #[new]
    #[pyo3(signature = (api, *, provider=None, keep_finish_reason=false, text_calls=None, request=None))]
    fn new(
        api: &str,
        provider: Option<&str>,
        keep_finish_reason: bool,
        text_calls: Option<&str>,
        request: Option<&[u8]>,
    ) -> PyResult<Self> {
        use toolstream::rewrite::text::{declared_tools, TextCalls, TextSetting};
        let provider = match provider {
            Some(p) => Provider::from_name(p)
                .ok_or_else(|| PyValueError::new_err(format!("unknown provider '{p}'")))?,
            None => Provider::Openai,
        };
        let api = toolstream::rewrite::Api::from_name(api).ok_or_else(|| {
            PyValueError::new_err(format!("unknown api '{api}' (chat, anthropic, responses)"))
        })?;
        let mode = match text_calls {
            Some(m) => TextCalls::from_name(m).ok_or_else(|| {
                PyValueError::new_err(format!("unknown text_calls '{m}' (off, auto, or a family)"))
            })?,
            None => TextCalls::Off,
        };
        let text = TextSetting::new(mode, request.map(declared_tools).unwrap_or_default());
        let inner = toolstream::rewrite::Rewriter::new(api, provider, keep_finish_reason, text);
        Ok(Rewriter { inner: Some(inner) })
    }

    /// Push upstream bytes; what the client gets now.
    fn push<'py>(&mut self, py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
        let r = self
            .inner
            .as_mut()
            .ok_or_else(|| PyValueError::new_err("push after finish"))?;
        let mut out = bytes::BytesMut::new();
        r.push(Bytes::copy_from_slice(data), &mut out);
        Ok(PyBytes::new(py, &out))
    }

    /// The upstream's body ended (`cut`: why it was cut, when it was); the rest of what
    /// the client gets.
    #[pyo3(signature = (cut=None))]
    fn finish<'py>(&mut self, py: Python<'py>, cut: Option<&str>) -> PyResult<Bound<'py, PyBytes>> {
        let r = self
            .inner
            .take()
            .ok_or_else(|| PyValueError::new_err("finish called twice"))?;
        let mut out = bytes::BytesMut::new();
        r.finish(cut, &mut out);
        Ok(PyBytes::new(py, &out))
    }
}

/// The module.
#[pymodule]
fn _toolstream(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Stream>()?;
    m.add_class::<Splitter>()?;
    m.add_class::<Preview>()?;
    m.add_class::<Rewriter>()?;
    m.add_function(wrap_pyfunction!(classify_http, m)?)?;
    m.add_function(wrap_pyfunction!(classify_stream_error, m)?)?;
    m.add_function(wrap_pyfunction!(classify_transport, m)?)?;
    m.add_function(wrap_pyfunction!(classify_tool_failure, m)?)?;
    m.add_function(wrap_pyfunction!(repair_request, m)?)?;
    m.add_function(wrap_pyfunction!(repair_arguments, m)?)?;
    m.add("ToolstreamError", m.py().get_type::<ToolstreamError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
