//! A JSON Schema document turned into a flat list of nodes, without recursion: a worklist
//! of (schema value, node to fill), and `$ref`s to the same document resolved by JSON
//! Pointer, each target compiled once.

use std::collections::HashMap;

use serde_json::{Map, Number, Value};

use super::SchemaError;

/// A type bit per JSON type `type` can name. `integer` is a number with no fraction.
pub(crate) mod ty {
    pub const NULL: u8 = 1;
    pub const BOOLEAN: u8 = 2;
    pub const INTEGER: u8 = 4;
    /// Any number (an integer is one too).
    pub const NUMBER: u8 = 8;
    pub const STRING: u8 = 16;
    pub const ARRAY: u8 = 32;
    pub const OBJECT: u8 = 64;
    pub const ALL: u8 = 127;
}

/// A bound on a number: the limit and whether it is exclusive.
#[derive(Clone, Debug)]
pub(crate) struct Bound {
    pub limit: Number,
    pub exclusive: bool,
}

/// One compiled schema: every assertion it makes on an instance, and the node indices of
/// the subschemas it applies. Absent keywords are `None` / empty.
#[derive(Clone, Debug, Default)]
pub(crate) struct Node {
    /// `false`: nothing is valid here.
    pub never: bool,
    /// The allowed types (`ALL` when `type` is absent).
    pub types: u8,
    /// The schema names a type and asserts nothing else (a message about an `anyOf` of
    /// such schemas can say "expected string or null").
    pub only_type: bool,
    pub enumeration: Option<Vec<Value>>,
    pub constant: Option<Value>,
    pub minimum: Option<Bound>,
    pub maximum: Option<Bound>,
    pub multiple_of: Option<Number>,
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    /// Schemas for the first items, by position (`prefixItems`, or `items` as an array).
    pub prefix_items: Vec<u32>,
    /// The schema for the items after the prefix (`items`, or `additionalItems`).
    pub items: Option<u32>,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    pub unique_items: bool,
    pub contains: Option<u32>,
    pub min_contains: u64,
    pub max_contains: Option<u64>,
    pub properties: Vec<(String, u32)>,
    pub required: Vec<String>,
    /// The schema for members not in `properties` (unset when `patternProperties`, which
    /// is not checked, makes "additional" unknowable).
    pub additional: Option<u32>,
    pub property_names: Option<u32>,
    pub min_properties: Option<u64>,
    pub max_properties: Option<u64>,
    /// `dependentRequired` (and `dependencies` with an array): when the key is present, so
    /// must these be.
    pub dependent_required: Vec<(String, Vec<String>)>,
    /// `dependentSchemas` (and `dependencies` with a schema): when the key is present, the
    /// object must match the schema.
    pub dependent_schemas: Vec<(String, u32)>,
    /// `allOf` and `$ref` targets: all must match.
    pub all_of: Vec<u32>,
    pub any_of: Vec<u32>,
    pub one_of: Vec<u32>,
    pub not: Option<u32>,
    /// `if`, `then`, `else`.
    pub condition: Option<(u32, Option<u32>, Option<u32>)>,
}

/// Keywords this validator does not check (regular expressions, dynamic references,
/// unevaluated members); a schema that uses one is checked for everything else.
const UNCHECKED: &[&str] = &[
    "pattern",
    "patternProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "$dynamicRef",
    "$recursiveRef",
];

/// `type` and the keywords that assert nothing.
const ANNOTATIONS: &[&str] = &[
    "type",
    "nullable",
    "title",
    "description",
    "default",
    "examples",
    "format",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// Compiled nodes (index 0 is the root), the keywords seen but not checked (with where),
/// and nothing borrowed from the document.
pub(crate) fn compile(doc: &Value) -> Result<(Vec<Node>, Vec<String>), SchemaError> {
    let mut c = Compiler {
        doc,
        nodes: vec![Node::default()],
        work: vec![(doc, 0, String::new())],
        refs: HashMap::new(),
        unchecked: Vec::new(),
    };
    while let Some((schema, at, pointer)) = c.work.pop() {
        let node = c.node(schema, &pointer)?;
        c.nodes[at as usize] = node;
    }
    c.unchecked.sort();
    Ok((c.nodes, c.unchecked))
}

struct Compiler<'d> {
    doc: &'d Value,
    nodes: Vec<Node>,
    /// Subschemas still to compile: the value, its node, its JSON Pointer in the document.
    work: Vec<(&'d Value, u32, String)>,
    /// `$ref` targets already given a node, by pointer.
    refs: HashMap<String, u32>,
    unchecked: Vec<String>,
}

fn err(pointer: &str, message: impl Into<String>) -> SchemaError {
    SchemaError {
        pointer: pointer.to_string(),
        message: message.into(),
    }
}

/// `pointer/key`, escaped as RFC 6901 says.
fn child(pointer: &str, key: &str) -> String {
    let mut p = String::with_capacity(pointer.len() + key.len() + 1);
    p.push_str(pointer);
    push_step(&mut p, key);
    p
}

/// Append `/key` to a JSON Pointer, with `~` and `/` escaped (RFC 6901).
pub(crate) fn push_step(p: &mut String, key: &str) {
    p.push('/');
    for ch in key.chars() {
        match ch {
            '~' => p.push_str("~0"),
            '/' => p.push_str("~1"),
            c => p.push(c),
        }
    }
}

impl<'d> Compiler<'d> {
    /// A new node for a subschema, compiled later.
    fn sub(&mut self, schema: &'d Value, pointer: String) -> u32 {
        let at = self.nodes.len() as u32;
        self.nodes.push(Node::default());
        self.work.push((schema, at, pointer));
        at
    }

    fn subs(&mut self, v: &'d Value, pointer: &str) -> Result<Vec<u32>, SchemaError> {
        match v {
            Value::Array(a) if !a.is_empty() => Ok(a
                .iter()
                .enumerate()
                .map(|(i, s)| self.sub(s, child(pointer, &i.to_string())))
                .collect()),
            _ => Err(err(pointer, "must be a non-empty array of schemas")),
        }
    }

    /// The node a `$ref` points to: a JSON Pointer into this document (`#`, `#/$defs/x`).
    /// Anything else (another document, an anchor) is recorded as unchecked and allows
    /// everything.
    fn reference(&mut self, r: &str, pointer: &str) -> Result<Option<u32>, SchemaError> {
        let frag = r
            .strip_prefix('#')
            .filter(|f| f.is_empty() || f.starts_with('/'));
        let Some(frag) = frag else {
            let schema = pointer.strip_suffix("/$ref").unwrap_or(pointer);
            self.unchecked.push(format!("{schema}: $ref {r}"));
            return Ok(None);
        };
        // The fragment is percent-encoded (RFC 3986) around an RFC 6901 pointer.
        let frag =
            percent_decode(frag).ok_or_else(|| err(pointer, "bad percent-encoding in $ref"))?;
        if let Some(&at) = self.refs.get(&frag) {
            return Ok(Some(at));
        }
        let target = self.doc.pointer(&frag).ok_or_else(|| {
            err(
                pointer,
                format!("$ref {r} points to nothing in this schema"),
            )
        })?;
        let at = self.sub(target, frag.clone());
        self.refs.insert(frag, at);
        Ok(Some(at))
    }

    fn node(&mut self, schema: &'d Value, pointer: &str) -> Result<Node, SchemaError> {
        let mut n = Node {
            types: ty::ALL,
            ..Node::default()
        };
        let o = match schema {
            Value::Bool(b) => {
                n.never = !b;
                return Ok(n);
            }
            Value::Object(o) => o,
            _ => return Err(err(pointer, "a schema must be an object or a boolean")),
        };
        for key in UNCHECKED {
            if o.contains_key(*key) {
                self.unchecked.push(format!("{pointer}: {key}"));
            }
        }
        let at = |k: &str| child(pointer, k);
        if let Some(t) = o.get("type") {
            n.types = types(t, &at("type"))?;
            n.only_type = o.keys().all(|k| ANNOTATIONS.contains(&k.as_str()));
        }
        // OpenAPI 3.0 (Gemini's Schema): `nullable: true` also allows null.
        if o.get("nullable") == Some(&Value::Bool(true)) {
            n.types |= ty::NULL;
        }
        if let Some(e) = o.get("enum") {
            match e {
                Value::Array(a) => n.enumeration = Some(a.clone()),
                _ => return Err(err(&at("enum"), "must be an array")),
            }
        }
        n.constant = o.get("const").cloned();
        scalars(&mut n, o, pointer)?;
        self.arrays(&mut n, o, pointer)?;
        self.objects(&mut n, o, pointer)?;
        self.applicators(&mut n, o, pointer)?;
        Ok(n)
    }

    /// The array keywords.
    fn arrays(
        &mut self,
        n: &mut Node,
        o: &'d Map<String, Value>,
        pointer: &str,
    ) -> Result<(), SchemaError> {
        let at = |k: &str| child(pointer, k);
        match (o.get("prefixItems"), o.get("items")) {
            (Some(p), items) => {
                n.prefix_items = self.subs(p, &at("prefixItems"))?;
                if let Some(i) = items {
                    n.items = Some(self.sub(i, at("items")));
                }
            }
            (None, Some(Value::Array(a))) => {
                n.prefix_items = a
                    .iter()
                    .enumerate()
                    .map(|(i, s)| self.sub(s, child(&at("items"), &i.to_string())))
                    .collect();
                if let Some(i) = o.get("additionalItems") {
                    n.items = Some(self.sub(i, at("additionalItems")));
                }
            }
            (None, Some(i)) => n.items = Some(self.sub(i, at("items"))),
            (None, None) => {}
        }
        n.min_items = count(o, "minItems", pointer)?;
        n.max_items = count(o, "maxItems", pointer)?;
        n.unique_items = match o.get("uniqueItems") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(err(&at("uniqueItems"), "must be a boolean")),
        };
        if let Some(c) = o.get("contains") {
            n.contains = Some(self.sub(c, at("contains")));
            n.min_contains = count(o, "minContains", pointer)?.unwrap_or(1);
            n.max_contains = count(o, "maxContains", pointer)?;
        }
        Ok(())
    }

    /// The object keywords.
    fn objects(
        &mut self,
        n: &mut Node,
        o: &'d Map<String, Value>,
        pointer: &str,
    ) -> Result<(), SchemaError> {
        let at = |k: &str| child(pointer, k);
        if let Some(p) = o.get("properties") {
            let Value::Object(p) = p else {
                return Err(err(&at("properties"), "must be an object"));
            };
            for (k, s) in p {
                let node = self.sub(s, child(&at("properties"), k));
                n.properties.push((k.clone(), node));
            }
        }
        if let Some(r) = o.get("required") {
            n.required = strings(r, &at("required"))?;
        }
        if let Some(a) = o.get("additionalProperties") {
            if o.contains_key("patternProperties") {
                self.unchecked.push(format!(
                    "{pointer}: additionalProperties (beside patternProperties)"
                ));
            } else {
                n.additional = Some(self.sub(a, at("additionalProperties")));
            }
        }
        if let Some(s) = o.get("propertyNames") {
            n.property_names = Some(self.sub(s, at("propertyNames")));
        }
        n.min_properties = count(o, "minProperties", pointer)?;
        n.max_properties = count(o, "maxProperties", pointer)?;
        for key in ["dependentRequired", "dependentSchemas", "dependencies"] {
            let Some(d) = o.get(key) else { continue };
            let Value::Object(d) = d else {
                return Err(err(&at(key), "must be an object"));
            };
            for (k, v) in d {
                let p = child(&at(key), k);
                match (key, v) {
                    ("dependentSchemas", _)
                    | ("dependencies", Value::Object(_) | Value::Bool(_)) => {
                        let node = self.sub(v, p);
                        n.dependent_schemas.push((k.clone(), node));
                    }
                    _ => n.dependent_required.push((k.clone(), strings(v, &p)?)),
                }
            }
        }
        Ok(())
    }

    /// The applicators: `$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`.
    fn applicators(
        &mut self,
        n: &mut Node,
        o: &'d Map<String, Value>,
        pointer: &str,
    ) -> Result<(), SchemaError> {
        let at = |k: &str| child(pointer, k);
        if let Some(r) = o.get("$ref") {
            let Value::String(r) = r else {
                return Err(err(&at("$ref"), "must be a string"));
            };
            if let Some(node) = self.reference(r, &at("$ref"))? {
                n.all_of.push(node);
            }
        }
        if let Some(a) = o.get("allOf") {
            let subs = self.subs(a, &at("allOf"))?;
            n.all_of.extend(subs);
        }
        if let Some(a) = o.get("anyOf") {
            n.any_of = self.subs(a, &at("anyOf"))?;
        }
        if let Some(a) = o.get("oneOf") {
            n.one_of = self.subs(a, &at("oneOf"))?;
        }
        if let Some(s) = o.get("not") {
            n.not = Some(self.sub(s, at("not")));
        }
        if let Some(i) = o.get("if") {
            let cond = self.sub(i, at("if"));
            let then = o.get("then").map(|s| self.sub(s, at("then")));
            let otherwise = o.get("else").map(|s| self.sub(s, at("else")));
            n.condition = Some((cond, then, otherwise));
        }
        Ok(())
    }
}

/// The number and string keywords.
fn scalars(n: &mut Node, o: &Map<String, Value>, pointer: &str) -> Result<(), SchemaError> {
    let at = |k: &str| child(pointer, k);
    n.minimum = bound(o, "minimum", "exclusiveMinimum", pointer)?;
    n.maximum = bound(o, "maximum", "exclusiveMaximum", pointer)?;
    if let Some(m) = o.get("multipleOf") {
        match m {
            Value::Number(x) if x.as_f64().is_some_and(|f| f > 0.0) => {
                n.multiple_of = Some(x.clone())
            }
            _ => return Err(err(&at("multipleOf"), "must be a number above 0")),
        }
    }
    // Strings.
    n.min_length = count(o, "minLength", pointer)?;
    n.max_length = count(o, "maxLength", pointer)?;
    Ok(())
}

/// `type`: a name or an array of names. Names are matched without regard to case: Gemini's
/// Schema spells them `STRING`, `OBJECT`, ...
fn types(t: &Value, pointer: &str) -> Result<u8, SchemaError> {
    let one = |name: &Value| -> Result<u8, SchemaError> {
        let Value::String(name) = name else {
            return Err(err(pointer, "a type must be a string"));
        };
        Ok(match name.to_ascii_lowercase().as_str() {
            "null" => ty::NULL,
            "boolean" => ty::BOOLEAN,
            "integer" => ty::INTEGER,
            "number" => ty::NUMBER | ty::INTEGER,
            "string" => ty::STRING,
            "array" => ty::ARRAY,
            "object" => ty::OBJECT,
            _ => return Err(err(pointer, format!("unknown type {name:?}"))),
        })
    };
    match t {
        Value::Array(a) => a.iter().try_fold(0, |acc, name| Ok(acc | one(name)?)),
        name => one(name),
    }
}

/// A non-negative integer keyword. Gemini's Schema writes its int64 fields as strings
/// (`"maxItems": "5"`, the protobuf JSON mapping), so a string of digits is taken too.
fn count(o: &Map<String, Value>, key: &str, pointer: &str) -> Result<Option<u64>, SchemaError> {
    let bad = || err(&child(pointer, key), "must be a non-negative integer");
    match o.get(key) {
        None => Ok(None),
        Some(Value::Number(n)) => match (n.as_u64(), n.as_f64()) {
            (Some(u), _) => Ok(Some(u)),
            (None, Some(f)) if f >= 0.0 && f.fract() == 0.0 && f < u64::MAX as f64 => {
                Ok(Some(f as u64))
            }
            _ => Err(bad()),
        },
        Some(Value::String(s)) => s.parse().map(Some).map_err(|_| bad()),
        Some(_) => Err(bad()),
    }
}

/// `minimum` / `exclusiveMinimum` (or the maximum pair): the tighter of the two where both
/// are numbers (draft 6 and later), or draft 4's boolean `exclusiveMinimum` on `minimum`.
fn bound(
    o: &Map<String, Value>,
    inclusive: &str,
    exclusive: &str,
    pointer: &str,
) -> Result<Option<Bound>, SchemaError> {
    let number = |key: &str| -> Result<Option<Number>, SchemaError> {
        match o.get(key) {
            None | Some(Value::Bool(_)) if key == exclusive => Ok(None),
            None => Ok(None),
            Some(Value::Number(n)) => Ok(Some(n.clone())),
            Some(_) => Err(err(&child(pointer, key), "must be a number")),
        }
    };
    let inc = number(inclusive)?;
    let exc = number(exclusive)?;
    let draft4 = o.get(exclusive) == Some(&Value::Bool(true));
    let lower = inclusive == "minimum";
    Ok(match (inc, exc) {
        (None, None) => None,
        (Some(limit), None) => Some(Bound {
            limit,
            exclusive: draft4,
        }),
        (None, Some(limit)) => Some(Bound {
            limit,
            exclusive: true,
        }),
        (Some(i), Some(e)) => {
            // The exclusive one wins unless the inclusive one is strictly tighter.
            let tighter = match super::validate::cmp_numbers(&i, &e) {
                std::cmp::Ordering::Greater => lower,
                std::cmp::Ordering::Less => !lower,
                std::cmp::Ordering::Equal => false,
            };
            Some(if tighter {
                Bound {
                    limit: i,
                    exclusive: false,
                }
            } else {
                Bound {
                    limit: e,
                    exclusive: true,
                }
            })
        }
    })
}

fn strings(v: &Value, pointer: &str) -> Result<Vec<String>, SchemaError> {
    match v {
        Value::Array(a) => a
            .iter()
            .map(|s| match s {
                Value::String(s) => Ok(s.clone()),
                _ => Err(err(pointer, "must be an array of strings")),
            })
            .collect(),
        _ => Err(err(pointer, "must be an array of strings")),
    }
}

fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_string());
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}
