//! Checking an instance against compiled nodes, without recursion.
//!
//! Every (node, instance) pair to check is a frame in an arena; a stack holds the frames
//! still to expand. Expanding a frame runs its node's own assertions and adds a frame for
//! each subschema it applies; `anyOf`, `oneOf`, `not`, `if` and `contains` get a group
//! frame that counts how many of its children matched. Frames are expanded depth first, so
//! the violations a frame's subtree reports are one contiguous run at the end of the list,
//! which a group drops when its outcome does not depend on them (a failed alternative of
//! an `anyOf` that another alternative satisfied). A budget on frames bounds the work.

use std::cmp::Ordering;
use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher};

use serde_json::{Number, Value};

use super::compile::{ty, Bound, Node};
use super::Violation;

/// The instance a frame checks: a JSON value, or an object's key (for `propertyNames`),
/// which is checked as a string.
#[derive(Clone, Copy)]
enum Inst<'v> {
    Value(&'v Value),
    Key(&'v str),
}

impl<'v> Inst<'v> {
    fn types(self) -> u8 {
        match self {
            Inst::Key(_) => ty::STRING,
            Inst::Value(v) => match v {
                Value::Null => ty::NULL,
                Value::Bool(_) => ty::BOOLEAN,
                Value::Number(n) if is_integer(n) => ty::INTEGER | ty::NUMBER,
                Value::Number(_) => ty::NUMBER,
                Value::String(_) => ty::STRING,
                Value::Array(_) => ty::ARRAY,
                Value::Object(_) => ty::OBJECT,
            },
        }
    }
    /// The instance's type as a message names it (`integer` for a number without a
    /// fraction).
    fn name(self) -> String {
        let t = self.types();
        type_name(if t & ty::INTEGER != 0 { ty::INTEGER } else { t })
    }
    fn equals(self, v: &Value) -> bool {
        match self {
            Inst::Key(k) => matches!(v, Value::String(s) if s == k),
            Inst::Value(i) => json_eq(i, v),
        }
    }
    fn show(self) -> String {
        match self {
            Inst::Key(k) => show(&Value::String(k.to_string())),
            Inst::Value(v) => show(v),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A node's own assertions and every subschema it applies: all must hold.
    Node(u32),
    /// At least one child must match.
    AnyOf,
    /// Exactly one child must match.
    OneOf,
    /// The one child must not match.
    Not,
    /// `if` (its one child) decides whether `then` or `else` applies next.
    If {
        then: Option<u32>,
        otherwise: Option<u32>,
        decided: bool,
    },
    /// Between `min` and `max` children (the array's items) must match.
    Contains { min: u64, max: Option<u64> },
}

struct Frame<'v> {
    kind: Kind,
    inst: Inst<'v>,
    /// The instance's location: an index into `Run::paths`.
    path: u32,
    parent: u32,
    /// Children not yet complete.
    pending: u32,
    /// Children that matched.
    matched: u32,
    /// Children (of all kinds) added.
    children: u32,
    /// A `Node` frame's own assertion or a child failed.
    failed: bool,
    /// Length of the violation list when the frame was expanded.
    mark: usize,
    /// How many frames above this one check the same instance (in-place applicators:
    /// `$ref`, `allOf`, `anyOf`, `if`...). Past twice the number of nodes some node
    /// repeats on the chain, and a node applied to the same value twice on one chain
    /// applies itself again without end.
    chain: u32,
}

/// One step of an instance location: a member's key or an item's index, after the
/// location at `parent`.
#[derive(Clone, Copy)]
enum Step<'v> {
    Root,
    Key(&'v str),
    Index(usize),
}

const NO_PARENT: u32 = u32::MAX;
/// The mark of a group frame none of whose children has been expanded yet.
const UNMARKED: usize = usize::MAX;

struct Run<'s, 'v> {
    nodes: &'s [Node],
    frames: Vec<Frame<'v>>,
    stack: Vec<u32>,
    paths: Vec<(u32, Step<'v>)>,
    out: Vec<Violation>,
    budget: usize,
    /// The longest chain of frames on one instance that has no cycle.
    max_chain: u32,
    /// The instance location where a cycle was found.
    cycle: Option<u32>,
}

/// Why a check gave no answer.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NoAnswer {
    /// The budget of frames ran out.
    Budget,
    /// The schema applies itself to the value at this JSON Pointer without end (a `$ref`
    /// cycle that never descends into the instance).
    Cycle(String),
}

/// Check `instance` against `nodes` (the root is node 0). `Err` when no answer exists (a
/// cycle) or the budget of frames ran out before one.
pub(crate) fn validate(
    nodes: &[Node],
    instance: &Value,
    budget: usize,
) -> Result<Vec<Violation>, NoAnswer> {
    let mut r = Run {
        nodes,
        frames: Vec::new(),
        stack: Vec::new(),
        paths: vec![(NO_PARENT, Step::Root)],
        out: Vec::new(),
        budget,
        max_chain: u32::try_from(nodes.len()).unwrap_or(u32::MAX / 4) * 2 + 1,
        cycle: None,
    };
    r.add(Kind::Node(0), Inst::Value(instance), 0, NO_PARENT);
    while let Some(f) = r.stack.pop() {
        if r.frames.len() > r.budget {
            return Err(NoAnswer::Budget);
        }
        r.expand(f);
        if let Some(path) = r.cycle {
            return Err(NoAnswer::Cycle(r.pointer(path)));
        }
    }
    Ok(r.out)
}

impl<'s, 'v> Run<'s, 'v> {
    /// A frame checked when the stack reaches it.
    fn add(&mut self, kind: Kind, inst: Inst<'v>, path: u32, parent: u32) {
        let at = self.frame(kind, inst, path, parent);
        self.stack.push(at);
    }

    /// A new frame, counted by its parent, not yet on the stack.
    fn frame(&mut self, kind: Kind, inst: Inst<'v>, path: u32, parent: u32) -> u32 {
        let at = self.frames.len() as u32;
        // A child on the same location and the same kind of instance checks the same
        // value as its parent (a key's frames are on a location of their own).
        let chain = match self.frames.get(parent as usize) {
            Some(p)
                if p.path == path
                    && matches!(
                        (p.inst, inst),
                        (Inst::Value(_), Inst::Value(_)) | (Inst::Key(_), Inst::Key(_))
                    ) =>
            {
                p.chain + 1
            }
            _ => 0,
        };
        if chain > self.max_chain {
            self.cycle = Some(path);
        }
        self.frames.push(Frame {
            kind,
            inst,
            path,
            parent,
            pending: 0,
            matched: 0,
            children: 0,
            failed: false,
            mark: UNMARKED,
            chain,
        });
        if parent != NO_PARENT {
            let p = &mut self.frames[parent as usize];
            p.pending += 1;
            p.children += 1;
        }
        at
    }

    fn step(&mut self, path: u32, step: Step<'v>) -> u32 {
        self.paths.push((path, step));
        (self.paths.len() - 1) as u32
    }

    fn pointer(&self, mut path: u32) -> String {
        let mut steps = Vec::new();
        while path != NO_PARENT {
            let (parent, step) = self.paths[path as usize];
            steps.push(step);
            path = parent;
        }
        let mut p = String::new();
        for step in steps.iter().rev() {
            match step {
                Step::Root => {}
                Step::Index(i) => {
                    p.push('/');
                    p.push_str(&i.to_string());
                }
                Step::Key(k) => super::compile::push_step(&mut p, k),
            }
        }
        p
    }

    fn fail(&mut self, f: u32, keyword: &'static str, message: String) {
        self.frames[f as usize].failed = true;
        let path = self.pointer(self.frames[f as usize].path);
        self.out.push(Violation {
            path,
            keyword,
            message,
        });
    }

    /// Run a frame's own checks and add its children, which are then taken in the order
    /// they were added (the instance's members and items in order, the schema's keywords
    /// in order). A group frame is not expanded: its mark is taken when its first child
    /// is, and from then until it completes only its children's subtrees report.
    fn expand(&mut self, f: u32) {
        let parent = self.frames[f as usize].parent;
        if parent != NO_PARENT && self.frames[parent as usize].mark == UNMARKED {
            self.frames[parent as usize].mark = self.out.len();
        }
        // The frame holds itself open while it adds children, some of which (an empty
        // `contains`) may complete at once.
        let fr = &mut self.frames[f as usize];
        fr.mark = self.out.len();
        fr.pending += 1;
        let (kind, inst, path) = (fr.kind, fr.inst, fr.path);
        let before = self.stack.len();
        if let Kind::Node(n) = kind {
            self.node(f, n, inst, path);
        }
        self.stack[before..].reverse();
        let fr = &mut self.frames[f as usize];
        fr.pending -= 1;
        if fr.pending == 0 {
            self.complete(f);
        }
    }

    /// A frame whose children are all complete: its outcome goes to its parent, which may
    /// complete in turn.
    fn complete(&mut self, mut f: u32) {
        loop {
            let fr = &self.frames[f as usize];
            let (kind, matched, children, mark) = (fr.kind, fr.matched, fr.children, fr.mark);
            let ok = match kind {
                Kind::Node(_) => !fr.failed,
                Kind::AnyOf => matched > 0,
                Kind::OneOf => matched == 1,
                Kind::Not => matched == 0,
                Kind::If {
                    then,
                    otherwise,
                    decided: false,
                } => {
                    // `if` is only a test: its violations are not the instance's.
                    self.out.truncate(mark);
                    let next = if matched == 1 { then } else { otherwise };
                    let fr = &mut self.frames[f as usize];
                    fr.kind = Kind::If {
                        then,
                        otherwise,
                        decided: true,
                    };
                    fr.matched = 0;
                    if let Some(next) = next {
                        let (inst, path) = (fr.inst, fr.path);
                        self.add(Kind::Node(next), inst, path, f);
                        return;
                    }
                    true
                }
                Kind::If { .. } => matched == 1,
                Kind::Contains { min, max } => {
                    let m = matched as u64;
                    m >= min && max.is_none_or(|max| m <= max)
                }
            };
            // What a group's children reported is replaced by the group's own verdict.
            match kind {
                Kind::AnyOf | Kind::OneOf | Kind::Not | Kind::Contains { .. } => {
                    self.out.truncate(mark);
                    if !ok {
                        let message = self.group_message(f, kind, matched, children);
                        let keyword = match kind {
                            Kind::AnyOf => "anyOf",
                            Kind::OneOf => "oneOf",
                            Kind::Not => "not",
                            _ => "contains",
                        };
                        let path = self.pointer(self.frames[f as usize].path);
                        self.out.push(Violation {
                            path,
                            keyword,
                            message,
                        });
                    }
                }
                _ => {}
            }
            let parent = self.frames[f as usize].parent;
            if parent == NO_PARENT {
                return;
            }
            let p = &mut self.frames[parent as usize];
            if ok {
                p.matched += 1;
            } else {
                p.failed = true;
            }
            p.pending -= 1;
            if p.pending > 0 {
                return;
            }
            f = parent;
        }
    }

    fn group_message(&self, f: u32, kind: Kind, matched: u32, children: u32) -> String {
        let inst = self.frames[f as usize].inst;
        match kind {
            Kind::AnyOf => {
                // The common case, `Optional[str]` and kin: alternatives that only name types.
                let names: Option<Vec<String>> = self
                    .alternatives(f)
                    .map(|n| {
                        let node = &self.nodes[n as usize];
                        node.only_type.then(|| type_name(node.types))
                    })
                    .collect();
                match names {
                    Some(names) => format!("expected {}, got {}", names.join(" or "), inst.name()),
                    None => format!("matches none of the {children} alternatives of anyOf"),
                }
            }
            Kind::OneOf if matched == 0 => {
                format!("matches none of the {children} alternatives of oneOf")
            }
            Kind::OneOf => format!(
                "matches {matched} of the {children} alternatives of oneOf, where exactly one must match"
            ),
            Kind::Not => "matches the schema under `not`, which it must not".to_string(),
            Kind::Contains { min, max } => match max {
                Some(max) if matched as u64 > max => {
                    format!("has {matched} items matching `contains`, at most {max} allowed")
                }
                _ => format!("has {matched} items matching `contains`, at least {min} needed"),
            },
            _ => String::new(),
        }
    }

    /// The node indices of a group frame's children.
    fn alternatives(&self, f: u32) -> impl Iterator<Item = u32> + '_ {
        // A group's children were added right after it, before anything else.
        let children = self.frames[f as usize].children;
        (f + 1..f + 1 + children).filter_map(|c| match self.frames[c as usize].kind {
            Kind::Node(n) => Some(n),
            _ => None,
        })
    }

    /// A group frame with a child per node, all on the same instance.
    fn group(&mut self, f: u32, kind: Kind, nodes: &[u32], inst: Inst<'v>, path: u32) {
        let g = self.frame(kind, inst, path, f);
        for &n in nodes {
            self.add(Kind::Node(n), inst, path, g);
        }
    }

    fn node(&mut self, f: u32, n: u32, inst: Inst<'v>, path: u32) {
        let nodes = self.nodes;
        let node = &nodes[n as usize];
        if node.never {
            self.fail(f, "false", "no value is allowed here".to_string());
            return;
        }
        let t = inst.types();
        if t & node.types == 0 {
            let message = format!("expected {}, got {}", type_name(node.types), inst.name());
            self.fail(f, "type", message);
        }
        if let Some(e) = &node.enumeration {
            if !e.iter().any(|v| inst.equals(v)) {
                let allowed: Vec<String> = e.iter().map(show).collect();
                let message = format!("must be one of {}, got {}", allowed.join(", "), inst.show());
                self.fail(f, "enum", message);
            }
        }
        if let Some(c) = &node.constant {
            if !inst.equals(c) {
                let message = format!("must be {}, got {}", show(c), inst.show());
                self.fail(f, "const", message);
            }
        }
        match inst {
            Inst::Key(k) => self.string(f, node, k),
            Inst::Value(Value::String(s)) => self.string(f, node, s),
            Inst::Value(Value::Number(x)) => self.number(f, node, x),
            Inst::Value(Value::Array(a)) => self.array(f, node, inst, a, path),
            Inst::Value(Value::Object(o)) => self.object(f, node, inst, o, path),
            _ => {}
        }
        for &s in &node.all_of {
            self.add(Kind::Node(s), inst, path, f);
        }
        if !node.any_of.is_empty() {
            self.group(f, Kind::AnyOf, &node.any_of, inst, path);
        }
        if !node.one_of.is_empty() {
            self.group(f, Kind::OneOf, &node.one_of, inst, path);
        }
        if let Some(s) = node.not {
            self.group(f, Kind::Not, &[s], inst, path);
        }
        if let Some((cond, then, otherwise)) = node.condition {
            let kind = Kind::If {
                then,
                otherwise,
                decided: false,
            };
            self.group(f, kind, &[cond], inst, path);
        }
    }

    fn string(&mut self, f: u32, node: &Node, s: &str) {
        if node.min_length.is_none() && node.max_length.is_none() {
            return;
        }
        let len = s.chars().count() as u64;
        let bounds = (node.min_length, node.max_length);
        self.count(f, len, bounds, ("minLength", "maxLength"), "characters");
    }

    /// A count (of characters, items or properties) against its lower and upper bound.
    fn count(
        &mut self,
        f: u32,
        len: u64,
        (min, max): (Option<u64>, Option<u64>),
        (kw_min, kw_max): (&'static str, &'static str),
        noun: &str,
    ) {
        if let Some(min) = min.filter(|&m| len < m) {
            self.fail(
                f,
                kw_min,
                format!("must have at least {min} {noun}, has {len}"),
            );
        }
        if let Some(max) = max.filter(|&m| len > m) {
            self.fail(
                f,
                kw_max,
                format!("must have at most {max} {noun}, has {len}"),
            );
        }
    }

    fn number(&mut self, f: u32, node: &Node, x: &Number) {
        let outside = |b: &Bound, below: bool| {
            let o = cmp_numbers(x, &b.limit);
            match (below, b.exclusive) {
                (true, false) => o == Ordering::Less,
                (true, true) => o != Ordering::Greater,
                (false, false) => o == Ordering::Greater,
                (false, true) => o != Ordering::Less,
            }
        };
        let bounds = [
            (
                &node.minimum,
                true,
                ("minimum", ">="),
                ("exclusiveMinimum", ">"),
            ),
            (
                &node.maximum,
                false,
                ("maximum", "<="),
                ("exclusiveMaximum", "<"),
            ),
        ];
        for (bound, below, inclusive, exclusive) in bounds {
            if let Some(b) = bound.as_ref().filter(|b| outside(b, below)) {
                let (keyword, op) = if b.exclusive { exclusive } else { inclusive };
                self.fail(f, keyword, format!("must be {op} {}, got {x}", b.limit));
            }
        }
        if let Some(m) = node.multiple_of.as_ref().filter(|m| !multiple_of(x, m)) {
            self.fail(
                f,
                "multipleOf",
                format!("must be a multiple of {m}, got {x}"),
            );
        }
    }

    fn array(&mut self, f: u32, node: &Node, inst: Inst<'v>, a: &'v [Value], path: u32) {
        let len = a.len() as u64;
        self.count(
            f,
            len,
            (node.min_items, node.max_items),
            ("minItems", "maxItems"),
            "items",
        );
        if node.unique_items {
            if let Some((i, j)) = first_duplicate(a) {
                self.fail(
                    f,
                    "uniqueItems",
                    format!("items {i} and {j} are equal, and items must be unique"),
                );
            }
        }
        for (i, item) in a.iter().enumerate() {
            let schema = node.prefix_items.get(i).copied().or(node.items);
            if let Some(s) = schema {
                let p = self.step(path, Step::Index(i));
                self.add(Kind::Node(s), Inst::Value(item), p, f);
            }
        }
        if let Some(c) = node.contains {
            let kind = Kind::Contains {
                min: node.min_contains,
                max: node.max_contains,
            };
            // Not `group`: each child checks another item.
            let g = self.frame(kind, inst, path, f);
            for (i, item) in a.iter().enumerate() {
                let p = self.step(path, Step::Index(i));
                self.add(Kind::Node(c), Inst::Value(item), p, g);
            }
            if a.is_empty() {
                // No child will complete the group; `f` is held open by `expand`.
                self.frames[g as usize].mark = self.out.len();
                self.complete(g);
            }
        }
    }

    /// `required` and `dependentRequired`: the properties missing.
    fn required(&mut self, f: u32, node: &Node, o: &serde_json::Map<String, Value>) {
        for r in &node.required {
            if !o.contains_key(r) {
                self.fail(f, "required", format!("missing required property `{r}`"));
            }
        }
        for (k, needs) in &node.dependent_required {
            if o.contains_key(k) {
                for r in needs.iter().filter(|r| !o.contains_key(*r)) {
                    self.fail(
                        f,
                        "dependentRequired",
                        format!("property `{k}` requires property `{r}`, which is missing"),
                    );
                }
            }
        }
    }

    fn object(
        &mut self,
        f: u32,
        node: &Node,
        inst: Inst<'v>,
        o: &'v serde_json::Map<String, Value>,
        path: u32,
    ) {
        let len = o.len() as u64;
        let bounds = (node.min_properties, node.max_properties);
        self.count(
            f,
            len,
            bounds,
            ("minProperties", "maxProperties"),
            "properties",
        );
        self.required(f, node, o);
        let mut unexpected = Vec::new();
        for (k, v) in o {
            let declared = node.properties.iter().find(|(name, _)| name == k);
            let schema = match declared {
                Some(&(_, s)) => Some(s),
                None => node.additional,
            };
            if let Some(s) = schema {
                if declared.is_none() && self.nodes[s as usize].never {
                    // `additionalProperties: false`: one message naming the allowed ones.
                    unexpected.push(k.as_str());
                    continue;
                }
                let p = self.step(path, Step::Key(k));
                self.add(Kind::Node(s), Inst::Value(v), p, f);
            }
            if let Some(s) = node.property_names {
                let p = self.step(path, Step::Key(k));
                self.add(Kind::Node(s), Inst::Key(k), p, f);
            }
        }
        if !unexpected.is_empty() {
            self.fail(
                f,
                "additionalProperties",
                unexpected_message(&unexpected, node),
            );
        }
        for (k, s) in &node.dependent_schemas {
            if o.contains_key(k) {
                self.add(Kind::Node(*s), inst, path, f);
            }
        }
    }
}

/// `additionalProperties: false`'s one message for the properties not declared, naming the
/// allowed ones.
fn unexpected_message(unexpected: &[&str], node: &Node) -> String {
    let quoted = |names: &mut dyn Iterator<Item = &str>| {
        names
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let allowed = quoted(&mut node.properties.iter().map(|(k, _)| k.as_str()));
    format!(
        "unexpected {} {}; allowed: {}",
        if unexpected.len() == 1 {
            "property"
        } else {
            "properties"
        },
        quoted(&mut unexpected.iter().copied()),
        if allowed.is_empty() { "none" } else { &allowed }
    )
}

/// The name of a type set, as a message says it: `string`, `number`, `string or null`.
fn type_name(t: u8) -> String {
    const NAMES: [(u8, &str); 7] = [
        (ty::NULL, "null"),
        (ty::BOOLEAN, "boolean"),
        (ty::INTEGER, "integer"),
        (ty::NUMBER, "number"),
        (ty::STRING, "string"),
        (ty::ARRAY, "array"),
        (ty::OBJECT, "object"),
    ];
    // `number` covers `integer`.
    let t = if t & ty::NUMBER != 0 {
        t & !ty::INTEGER
    } else {
        t
    };
    let names: Vec<&str> = NAMES
        .iter()
        .filter(|(b, _)| t & b != 0)
        .map(|(_, n)| *n)
        .collect();
    names.join(" or ")
}

fn is_integer(n: &Number) -> bool {
    n.is_i64()
        || n.is_u64()
        || n.as_f64()
            .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
}

/// Numbers compared by exact value: as integers when both are integers (any `i64`/`u64`,
/// or an integral `f64` below 2^127, all of which convert exactly), else as `f64`. The
/// `f64` comparison is exact here too: a float that is not integral is below 2^53 in
/// magnitude, where every integer it could be compared with either converts exactly or
/// lies beyond it on the same side. So `2^63 + 1` is above the float `2^63`, though it
/// rounds to it.
pub(crate) fn cmp_numbers(a: &Number, b: &Number) -> Ordering {
    match (exact_integer(a), exact_integer(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => {
            let (x, y) = (
                a.as_f64().unwrap_or(f64::NAN),
                b.as_f64().unwrap_or(f64::NAN),
            );
            x.partial_cmp(&y).unwrap_or(Ordering::Equal)
        }
    }
}

/// The number as an exact integer, where it is one that `i128` holds exactly.
fn exact_integer(n: &Number) -> Option<i128> {
    if let Some(i) = n.as_i64() {
        return Some(i128::from(i));
    }
    if let Some(u) = n.as_u64() {
        return Some(i128::from(u));
    }
    let f = n.as_f64()?;
    // 2^127: every integral float below it is an exact i128; -0.0 becomes 0.
    (f.fract() == 0.0 && f.abs() < 1.7014118346046923e38).then_some(f as i128)
}

fn multiple_of(x: &Number, m: &Number) -> bool {
    if let (Some(x), Some(m)) = (x.as_u64(), m.as_u64()) {
        return x % m == 0;
    }
    if let (Some(x), Some(m)) = (x.as_i64(), m.as_i64()) {
        return x % m == 0;
    }
    let (x, m) = (
        x.as_f64().unwrap_or(f64::NAN),
        m.as_f64().unwrap_or(f64::NAN),
    );
    let q = x / m;
    if !q.is_finite() {
        return false;
    }
    // A float quotient off an integer by rounding alone (0.3 / 0.1) still counts.
    (q - q.round()).abs() <= q.abs().max(1.0) * 1e-9
}

/// JSON equality: numbers by value (`1` equals `1.0`), objects regardless of member order.
/// Walks both values with its own stack (no recursion).
pub(crate) fn json_eq(a: &Value, b: &Value) -> bool {
    let mut stack = vec![(a, b)];
    while let Some((a, b)) = stack.pop() {
        match (a, b) {
            (Value::Null, Value::Null) => {}
            (Value::Bool(x), Value::Bool(y)) if x == y => {}
            (Value::Number(x), Value::Number(y)) if cmp_numbers(x, y) == Ordering::Equal => {}
            (Value::String(x), Value::String(y)) if x == y => {}
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
                stack.extend(x.iter().zip(y.iter()));
            }
            (Value::Object(x), Value::Object(y)) if x.len() == y.len() => {
                for (k, v) in x {
                    match y.get(k) {
                        Some(w) => stack.push((v, w)),
                        None => return false,
                    }
                }
            }
            _ => return false,
        }
    }
    true
}

/// A number by its exact value, for hashing: the integer where [`exact_integer`] gives
/// one, else the float's bits. Two numbers have equal keys exactly when [`cmp_numbers`]
/// calls them equal.
#[derive(PartialEq, Eq, Hash)]
enum NumberKey {
    Int(i128),
    Float(u64),
}

fn number_key(n: &Number) -> NumberKey {
    match exact_integer(n) {
        Some(i) => NumberKey::Int(i),
        None => NumberKey::Float(n.as_f64().unwrap_or(f64::NAN).to_bits()),
    }
}

/// Hash a value so that values [`json_eq`] calls equal hash the same: numbers by
/// [`number_key`], object members in key order whatever the map's own order. Walks the
/// value with its own stack.
fn hash_value(v: &Value, h: &mut impl Hasher) {
    enum Item<'a> {
        Value(&'a Value),
        Key(&'a str),
    }
    let mut stack = vec![Item::Value(v)];
    while let Some(item) = stack.pop() {
        let v = match item {
            Item::Key(k) => {
                k.hash(h);
                continue;
            }
            Item::Value(v) => v,
        };
        match v {
            Value::Null => h.write_u8(0),
            Value::Bool(b) => (1u8, *b).hash(h),
            Value::Number(n) => (2u8, number_key(n)).hash(h),
            Value::String(s) => (3u8, s.as_str()).hash(h),
            Value::Array(a) => {
                (4u8, a.len()).hash(h);
                stack.extend(a.iter().rev().map(Item::Value));
            }
            Value::Object(o) => {
                (5u8, o.len()).hash(h);
                let mut members: Vec<_> = o.iter().collect();
                members.sort_unstable_by(|a, b| a.0.cmp(b.0));
                for (k, v) in members.into_iter().rev() {
                    stack.push(Item::Value(v));
                    stack.push(Item::Key(k));
                }
            }
        }
    }
}

/// The first pair of equal items: the least `j` equal to an earlier item, with the least
/// such `i`. Items are bucketed by [`hash_value`] (randomly keyed, so a hostile array cannot
/// fill one bucket) and compared only within a bucket: linear in the array's size where
/// comparing every pair was quadratic (100 000 items, 5·10⁹ comparisons).
fn first_duplicate(a: &[Value]) -> Option<(usize, usize)> {
    let keys = RandomState::new();
    let mut buckets: HashMap<u64, Vec<usize>> = HashMap::with_capacity(a.len());
    for (j, item) in a.iter().enumerate() {
        let mut h = keys.build_hasher();
        hash_value(item, &mut h);
        let bucket = buckets.entry(h.finish()).or_default();
        if let Some(&i) = bucket.iter().find(|&&i| json_eq(&a[i], item)) {
            return Some((i, j));
        }
        bucket.push(j);
    }
    None
}

/// A value for a message, cut to about 60 bytes.
fn show(v: &Value) -> String {
    let mut s = v.to_string();
    if s.len() > 60 {
        let mut end = 57;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The definition: every pair compared, in order.
    fn first_duplicate_by_pairs(a: &[Value]) -> Option<(usize, usize)> {
        (1..a.len()).find_map(|j| (0..j).find(|&i| json_eq(&a[i], &a[j])).map(|i| (i, j)))
    }

    /// Small values with many equal pairs: numbers written as integers and as floats,
    /// objects built in either member order.
    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (0i64..3).prop_map(Value::from),
            (0i64..3).prop_map(|i| Value::from(i as f64)),
            Just(Value::from(0.5)),
            Just(Value::from(-0.0)),
            Just(Value::from(u64::MAX)),
            Just(Value::from(i64::MIN)),
            Just(Value::from(9_223_372_036_854_775_808.0)),
            Just(Value::from(9_223_372_036_854_775_809u64)),
            prop_oneof![Just("a"), Just("b")].prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 12, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                prop::collection::vec((prop_oneof![Just("x"), Just("y")], inner), 0..3).prop_map(
                    |m| {
                        let mut o = serde_json::Map::new();
                        for (k, v) in m.into_iter().rev() {
                            o.insert(k.to_string(), v);
                        }
                        Value::Object(o)
                    }
                ),
            ]
        })
    }

    proptest! {
        #[test]
        fn first_duplicate_agrees_with_comparing_every_pair(
            a in prop::collection::vec(value(), 0..12)
        ) {
            prop_assert_eq!(first_duplicate(&a), first_duplicate_by_pairs(&a));
        }
    }

    #[test]
    fn numbers_are_equal_by_exact_value() {
        let eq = |a: Value, b: Value| json_eq(&a, &b);
        assert!(eq(Value::from(1), Value::from(1.0)));
        assert!(eq(Value::from(0), Value::from(-0.0)));
        assert!(eq(Value::from(u64::MAX), Value::from(u64::MAX)));
        assert!(eq(
            Value::from(1u64 << 63),
            Value::from(9_223_372_036_854_775_808.0)
        ));
        // 2^63 + 1 rounds to 2^63 as a float, but is another number.
        assert!(!eq(
            Value::from((1u64 << 63) + 1),
            Value::from(9_223_372_036_854_775_808.0)
        ));
        assert!(!eq(Value::from((1u64 << 63) + 1), Value::from(1u64 << 63)));
        assert!(!eq(Value::from(-1), Value::from(u64::MAX)));
        assert!(!eq(Value::from(0.5), Value::from(0)));
    }

    #[test]
    fn numbers_are_ordered_by_exact_value() {
        let cmp = |a: Value, b: Value| cmp_numbers(a.as_number().unwrap(), b.as_number().unwrap());
        let two_63 = Value::from(9_223_372_036_854_775_808.0);
        assert_eq!(
            cmp(Value::from((1u64 << 63) + 1), two_63.clone()),
            Ordering::Greater
        );
        assert_eq!(
            cmp(two_63.clone(), Value::from((1u64 << 63) + 1)),
            Ordering::Less
        );
        assert_eq!(cmp(Value::from(1u64 << 63), two_63), Ordering::Equal);
        assert_eq!(
            cmp(Value::from(i64::MIN), Value::from(u64::MAX)),
            Ordering::Less
        );
        assert_eq!(cmp(Value::from(-1), Value::from(-0.5)), Ordering::Less);
        assert_eq!(cmp(Value::from(3), Value::from(2.5)), Ordering::Greater);
        assert_eq!(
            cmp(Value::from(u64::MAX), Value::from(1e300)),
            Ordering::Less
        );
        assert_eq!(
            cmp(Value::from(i64::MIN), Value::from(-1e300)),
            Ordering::Greater
        );
    }
}
