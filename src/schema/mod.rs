//! Do a call's name and arguments match the tools the request declared?
//!
//! The assembler hands out arguments that are valid JSON; whether they are what the tool
//! takes is the next question, and the next most common way a model's call fails: a
//! required property left out, a string where the schema wants an integer, a value outside
//! an `enum`, a tool name that was never declared. Such a call should go back to the model
//! with precise feedback ([`crate::classify::classify_mismatch`]), not be run and not
//! sent to another provider.
//!
//! [`Tools::from_request`] reads the tool declarations of any supported provider's request
//! (OpenAI chat and Responses, Anthropic, Gemini, Bedrock Converse, Ollama), and
//! [`Tools::check`] checks a call against them:
//!
//! ```
//! use serde_json::json;
//! use toolstream::schema::{Mismatch, Tools};
//!
//! let request = json!({"tools": [{"type": "function", "function": {
//!     "name": "write_file",
//!     "parameters": {
//!         "type": "object",
//!         "properties": {
//!             "path": {"type": "string"},
//!             "mode": {"enum": ["create", "append"]}
//!         },
//!         "required": ["path", "mode"],
//!         "additionalProperties": false
//!     }
//! }}]});
//! let tools = Tools::from_request(&request)?;
//! assert!(tools.check("write_file", br#"{"path":"a.txt","mode":"append"}"#).is_ok());
//!
//! let Err(Mismatch::Invalid(violations)) = tools.check("write_file", br#"{"mode":"overwrite"}"#)
//! else { panic!() };
//! let said: Vec<String> = violations.iter().map(|v| v.to_string()).collect();
//! assert_eq!(said, [
//!     "at the top level: missing required property `path`",
//!     r#"at /mode: must be one of "create", "append", got "overwrite""#,
//! ]);
//! assert!(matches!(tools.check("read_file", b"{}"), Err(Mismatch::UnknownTool { .. })));
//! # Ok::<(), toolstream::schema::SchemaError>(())
//! ```
//!
//! What is checked: JSON Schema's assertions as draft 2020-12 defines them (`type`, `enum`,
//! `const`, the number, string-length, array and object keywords, `required`,
//! `additionalProperties`, `propertyNames`, `dependentRequired` / `dependentSchemas` and
//! draft 7's `dependencies`, `allOf` / `anyOf` / `oneOf` / `not`, `if` / `then` / `else`,
//! `$ref` to a JSON Pointer in the same schema, such as the `#/$defs/...` that pydantic
//! writes), with what older drafts and providers write: `items` as an array with
//! `additionalItems` (draft 7), a boolean `exclusiveMinimum` (draft 4), OpenAPI's
//! `nullable` and Gemini's upper-case type names and counts written as strings. `$ref`
//! applies beside its sibling keywords (2019-09 and later). `format` is an annotation, as
//! in 2020-12. Not checked, and listed by [`Schema::unchecked`] where a schema uses them:
//! `pattern` and `patternProperties` (regular expressions), `unevaluatedProperties` /
//! `unevaluatedItems`, dynamic and non-local references. Numbers compare by value, exactly
//! for integers; `multipleOf` on fractions allows a relative rounding error of 10⁻⁹.
//!
//! No recursion: schemas are compiled from a worklist and instances checked with an
//! explicit stack, under a budget of steps ([`Schema::with_budget`]), so a hostile schema
//! or instance can neither overflow the stack nor run without end.

mod compile;
mod validate;

use std::fmt;

use serde_json::Value;

/// One way an instance does not match: where, which keyword, and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The JSON Pointer (RFC 6901) of the value in the arguments: `""` for the whole
    /// object, `/edits/2/line` for a member of an item.
    pub path: String,
    /// The schema keyword that failed (`required`, `type`, `enum`, ...).
    pub keyword: &'static str,
    /// What was wrong, for a person or a model to read.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "at the top level: {}", self.message)
        } else {
            write!(f, "at {}: {}", self.path, self.message)
        }
    }
}

/// A schema that could not be compiled: where in it, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    /// The JSON Pointer of the offending keyword in the schema (or the request).
    pub pointer: String,
    /// What is wrong with it.
    pub message: String,
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "schema at {:?}: {}", self.pointer, self.message)
    }
}

impl std::error::Error for SchemaError {}

/// The deepest schema kept as declared ([`Schema::declared`]).
pub const MAX_KEPT_DEPTH: usize = 64;

/// How deep a value nests, read without recursion.
fn depth(v: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(v, 1usize)];
    while let Some((v, d)) = stack.pop() {
        deepest = deepest.max(d);
        if d > MAX_KEPT_DEPTH {
            return d;
        }
        match v {
            Value::Array(a) => stack.extend(a.iter().map(|x| (x, d + 1))),
            Value::Object(o) => stack.extend(o.values().map(|x| (x, d + 1))),
            _ => {}
        }
    }
    deepest
}

/// The default budget of checking steps per instance (see [`Schema::with_budget`]).
pub const DEFAULT_BUDGET: usize = 1 << 20;

/// A compiled JSON Schema.
#[derive(Clone, Debug)]
pub struct Schema {
    nodes: Vec<compile::Node>,
    unchecked: Vec<String>,
    budget: usize,
    /// The schema as declared, when it is shallow enough to keep as a tree (for coercion
    /// by the declared types, [`crate::repair::coerce`]).
    raw: Option<std::sync::Arc<Value>>,
}

impl Schema {
    /// Compile a schema (an object or a boolean).
    pub fn compile(schema: &Value) -> Result<Schema, SchemaError> {
        let (nodes, unchecked) = compile::compile(schema)?;
        Ok(Schema {
            nodes,
            unchecked,
            budget: DEFAULT_BUDGET,
            // A tree's clone and drop recurse: a schema nested deeper than any tool's is
            // not kept (its calls are not coerced).
            raw: (depth(schema) <= MAX_KEPT_DEPTH).then(|| std::sync::Arc::new(schema.clone())),
        })
    }

    /// The same schema with another budget: the most (schema, value) pairs one check may
    /// visit. A check that needs more fails with one violation of keyword `budget`
    /// (default [`DEFAULT_BUDGET`], far above what tool arguments need).
    pub fn with_budget(mut self, budget: usize) -> Schema {
        self.budget = budget;
        self
    }

    /// Keywords the schema uses that are not checked, each with its JSON Pointer
    /// (`/properties/id: pattern`). Empty when the check is complete.
    pub fn unchecked(&self) -> &[String] {
        &self.unchecked
    }

    /// Every violation of the schema by `instance`, in the order of the instance's
    /// members and the schema's keywords. Empty when it matches.
    pub fn validate(&self, instance: &Value) -> Vec<Violation> {
        match validate::validate(&self.nodes, instance, self.budget) {
            Ok(v) => v,
            Err(validate::NoAnswer::Budget) => vec![Violation {
                path: String::new(),
                keyword: "budget",
                message: format!(
                    "checking needed more than {} steps; the schema or the value is too complex",
                    self.budget
                ),
            }],
            Err(validate::NoAnswer::Cycle(path)) => vec![Violation {
                path,
                keyword: "$ref",
                message: "the schema refers back to itself for this value without end \
                          (a $ref cycle that never descends into the value); it has no answer"
                    .to_string(),
            }],
        }
    }

    /// Whether `instance` matches.
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.validate(instance).is_empty()
    }

    /// The schema as it was declared; `None` for one nested deeper than
    /// [`MAX_KEPT_DEPTH`].
    pub fn declared(&self) -> Option<&Value> {
        self.raw.as_deref()
    }
}

/// Why a call does not match the declared tools.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mismatch {
    /// No tool of that name was declared.
    UnknownTool {
        /// The name the model called.
        name: String,
        /// The declared names, in declaration order.
        known: Vec<String>,
    },
    /// The arguments do not match the tool's parameters.
    Invalid(Vec<Violation>),
    /// The arguments are not JSON serde_json reads (past its nesting limit of 128); the
    /// message says why.
    Unreadable(String),
}

impl fmt::Display for Mismatch {
    /// What the model is told: the unknown name and the known ones, or each violation on
    /// its own line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::UnknownTool { name, known } => {
                write!(f, "there is no tool named `{name}`; the tools are ")?;
                if known.is_empty() {
                    return f.write_str("none");
                }
                for (i, k) in known.iter().enumerate() {
                    write!(f, "{}`{k}`", if i == 0 { "" } else { ", " })?;
                }
                Ok(())
            }
            Mismatch::Invalid(violations) => {
                for (i, v) in violations.iter().enumerate() {
                    write!(f, "{}{v}", if i == 0 { "" } else { "\n" })?;
                }
                Ok(())
            }
            Mismatch::Unreadable(m) => f.write_str(m),
        }
    }
}

/// The tools a request declared: each name with its compiled parameter schema.
#[derive(Clone, Debug, Default)]
pub struct Tools {
    tools: Vec<(String, Schema)>,
}

impl Tools {
    /// No tools.
    pub fn new() -> Tools {
        Tools::default()
    }

    /// Declare a tool (a later declaration of the same name replaces the earlier one).
    pub fn insert(&mut self, name: impl Into<String>, parameters: Schema) {
        let name = name.into();
        match self.tools.iter_mut().find(|(n, _)| *n == name) {
            Some(t) => t.1 = parameters,
            None => self.tools.push((name, parameters)),
        }
    }

    /// The tool declarations of a request body, or of its tools array, in any of these
    /// shapes (entries of other kinds, such as built-in server tools, are skipped):
    ///
    /// * OpenAI chat and Ollama: `tools: [{"type": "function", "function": {"name", "parameters"}}]`
    /// * OpenAI Responses: `tools: [{"type": "function", "name", "parameters"}]`
    /// * Anthropic: `tools: [{"name", "input_schema"}]`
    /// * Gemini: `tools: [{"functionDeclarations": [{"name", "parameters" or "parametersJsonSchema"}]}]`
    ///   (also `function_declarations`)
    /// * Bedrock Converse: `toolConfig: {"tools": [{"toolSpec": {"name", "inputSchema": {"json"}}}]}`
    ///
    /// A declaration without parameters takes any arguments.
    pub fn from_request(request: &Value) -> Result<Tools, SchemaError> {
        let (list, base) = match request {
            Value::Array(a) => (a, String::new()),
            Value::Object(o) => match (o.get("tools"), o.get("toolConfig")) {
                (Some(Value::Array(a)), _) => (a, "/tools".to_string()),
                (_, Some(Value::Object(c))) => match c.get("tools") {
                    Some(Value::Array(a)) => (a, "/toolConfig/tools".to_string()),
                    _ => return Err(bad("/toolConfig/tools", "must be an array")),
                },
                _ => return Err(bad("", "no `tools` array (nor `toolConfig.tools`)")),
            },
            _ => return Err(bad("", "must be a request object or a tools array")),
        };
        let mut tools = Tools::new();
        for (i, entry) in list.iter().enumerate() {
            let at = format!("{base}/{i}");
            let Value::Object(e) = entry else {
                return Err(bad(&at, "a tool must be an object"));
            };
            let mut declare = |name: Option<&Value>, schema: Option<&Value>, at: &str| {
                let Some(Value::String(name)) = name else {
                    return Err(bad(at, "a function needs a string `name`"));
                };
                let compiled =
                    Schema::compile(schema.unwrap_or(&Value::Bool(true))).map_err(|e| {
                        SchemaError {
                            pointer: format!("{at}{}", e.pointer),
                            message: e.message,
                        }
                    })?;
                tools.insert(name.clone(), compiled);
                Ok(())
            };
            if let Some(f) = e.get("function") {
                declare(
                    f.get("name"),
                    f.get("parameters"),
                    &format!("{at}/function"),
                )?;
            } else if let Some(spec) = e.get("toolSpec") {
                let schema = spec.get("inputSchema").and_then(|s| s.get("json"));
                declare(spec.get("name"), schema, &format!("{at}/toolSpec"))?;
            } else if let Some(decls) = e
                .get("functionDeclarations")
                .or_else(|| e.get("function_declarations"))
            {
                let Value::Array(decls) = decls else {
                    return Err(bad(&at, "functionDeclarations must be an array"));
                };
                for (j, d) in decls.iter().enumerate() {
                    let schema = d
                        .get("parametersJsonSchema")
                        .or_else(|| d.get("parameters"));
                    declare(
                        d.get("name"),
                        schema,
                        &format!("{at}/functionDeclarations/{j}"),
                    )?;
                }
            } else if e.contains_key("input_schema") {
                declare(e.get("name"), e.get("input_schema"), &at)?;
            } else if e.get("type") == Some(&Value::String("function".into())) {
                declare(e.get("name"), e.get("parameters"), &at)?;
            }
        }
        Ok(tools)
    }

    /// The declared names, in declaration order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|(n, _)| n.as_str())
    }

    /// The parameter schema of a tool.
    pub fn get(&self, name: &str) -> Option<&Schema> {
        self.tools.iter().find(|(n, _)| n == name).map(|(_, s)| s)
    }

    /// Check a call: its name must be declared and its arguments (the bytes of a JSON
    /// object, as [`assemble::ToolCall::arguments`](crate::assemble::ToolCall) has them)
    /// must match the tool's parameters.
    pub fn check(&self, name: &str, arguments: &[u8]) -> Result<(), Mismatch> {
        let Some(schema) = self.get(name) else {
            return Err(Mismatch::UnknownTool {
                name: name.to_string(),
                known: self.names().map(str::to_string).collect(),
            });
        };
        let value: Value =
            serde_json::from_slice(arguments).map_err(|e| Mismatch::Unreadable(e.to_string()))?;
        let violations = schema.validate(&value);
        if violations.is_empty() {
            Ok(())
        } else {
            Err(Mismatch::Invalid(violations))
        }
    }
}

fn bad(pointer: &str, message: &str) -> SchemaError {
    SchemaError {
        pointer: pointer.to_string(),
        message: message.to_string(),
    }
}
