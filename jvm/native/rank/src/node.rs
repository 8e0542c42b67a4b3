//! Reading the nodes of a Quickwit query AST (JSON): what ast.rs (to score) and snippet.rs (to
//! highlight) both take from a node, with the same errors. The walkers decide what a node
//! becomes; here is only how its parts are read.

use serde_json::{Map, Value};

use crate::ast::Ctx;

/// A JSON object: a node, or a node's `params` or `mode`.
pub type Obj = Map<String, Value>;

/// The clauses of a `bool` node, in the order they are walked, with the context of each.
pub const BOOL_CLAUSES: [(&str, Ctx); 4] = [
    ("must", Ctx::Required),
    ("filter", Ctx::Required),
    ("should", Ctx::Optional),
    ("must_not", Ctx::Excluded),
];

/// Parses a query AST.
pub fn parse(json: &str) -> Result<Value, String> {
    serde_json::from_str(json).map_err(|e| format!("query AST is not valid JSON: {e}"))
}

/// The node `v` at `path` as an object, and its `type`.
pub fn typed<'v>(v: &'v Value, path: &str) -> Result<(&'v Obj, &'v str), String> {
    let obj = v
        .as_object()
        .ok_or_else(|| format!("query AST node at {path} is not a JSON object: {v}"))?;
    let typ = obj
        .get("type")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("query AST node at {path} has no string \"type\""))?;
    Ok((obj, typ))
}

/// The node under a `boost` node.
pub fn underlying<'v>(obj: &'v Obj, path: &str) -> Result<&'v Value, String> {
    obj.get("underlying")
        .ok_or_else(|| format!("boost node at {path} has no \"underlying\""))
}

/// The `field` a `term` or `full_text` node names.
pub fn field_name<'v>(obj: &'v Obj, path: &str) -> Result<&'v str, String> {
    obj.get("field")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("query AST node at {path} has no string \"field\""))
}

/// The children of a `bool` node's clause `key` (none when absent or null).
pub fn clauses<'v>(obj: &'v Obj, key: &str, path: &str) -> Result<&'v [Value], String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(other) => Err(format!(
            "bool node at {path} has a non-array \"{key}\": {other}"
        )),
    }
}

/// A `bool` node's `minimum_should_match`.
pub enum MinimumShouldMatch {
    Absent,
    Count(usize),
    /// A percentage or another form Quickwit may accept: not converted.
    Other,
}

pub fn minimum_should_match(obj: &Obj) -> MinimumShouldMatch {
    match obj.get("minimum_should_match") {
        None | Some(Value::Null) => MinimumShouldMatch::Absent,
        Some(v) => match v.as_u64() {
            Some(m) => MinimumShouldMatch::Count(m as usize),
            None => MinimumShouldMatch::Other,
        },
    }
}

/// A `full_text` node's parts.
pub struct FullText<'v> {
    pub field: &'v str,
    pub text: &'v str,
    params: Option<&'v Obj>,
}

impl<'v> FullText<'v> {
    pub fn read(obj: &'v Obj, path: &str) -> Result<FullText<'v>, String> {
        let field = field_name(obj, path)?;
        let text = obj
            .get("text")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("full_text node at {path} has no string \"text\""))?;
        let params = match obj.get("params") {
            Some(Value::Object(p)) => Some(p),
            None | Some(Value::Null) => None,
            Some(other) => {
                return Err(format!(
                    "full_text node at {path} has non-object \"params\": {other}"
                ))
            }
        };
        Ok(FullText {
            field,
            text,
            params,
        })
    }

    fn param(&self, key: &str) -> Option<&'v Value> {
        self.params.and_then(|p| p.get(key))
    }

    fn mode(&self) -> Option<&'v Obj> {
        self.param("mode").and_then(Value::as_object)
    }

    /// `params.tokenizer`, when it names one.
    pub fn tokenizer(&self) -> Option<&'v str> {
        self.param("tokenizer").and_then(Value::as_str)
    }

    /// Whether no token matches everything (`zero_terms_query: all`), rather than nothing.
    pub fn zero_terms_match_all(&self) -> bool {
        matches!(
            self.param("zero_terms_query").and_then(Value::as_str),
            Some("all") | Some("match_all") | Some("MatchAll")
        )
    }

    /// `params.mode.type`.
    pub fn mode_type(&self) -> Option<&'v str> {
        self.mode()
            .and_then(|m| m.get("type"))
            .and_then(Value::as_str)
    }

    /// A phrase's slop: `params.mode.slop`, else `params.slop`, else 0.
    pub fn slop(&self) -> u64 {
        self.mode()
            .and_then(|m| m.get("slop"))
            .or_else(|| self.param("slop"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    }

    /// A bool mode's `operator`, lower-cased ("" when absent).
    pub fn operator(&self) -> String {
        self.mode()
            .and_then(|m| m.get("operator"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_ascii_lowercase()
    }
}
