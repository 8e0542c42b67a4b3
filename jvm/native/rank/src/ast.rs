//! Quickwit query AST (JSON, as tantivy4java's `SplitQuery.toQueryAstJson()` writes it) to a
//! tantivy `Query`, for scoring.
//!
//! The node types that carry text relevance are converted the way Quickwit converts them
//! (`full_text`, `term`, `bool`, `boost`, `match_all`, `match_none`), including Quickwit's
//! simplification of boolean trees, since it changes scores (a `match_all` clause adds 1.0 to
//! a score unless simplified away). Every other node (range, wildcard, regex, term_set, exists,
//! ...), or a text node over a field this index cannot score, is a clause that the JVM matches
//! itself: here it is replaced by a clause that adds nothing to a score and does not restrict
//! (see [`Ctx`]), and the conversion is reported as not exact.

use serde_json::Value;
use tantivy::query::{
    AllQuery, BooleanQuery, BoostQuery, ConstScoreQuery, EmptyQuery, Occur, PhraseQuery, Query,
    TermQuery,
};
use tantivy::schema::{Field, FieldType, IndexRecordOption};
use tantivy::tokenizer::TokenStream;
use tantivy::{Index, Term};

use crate::node::{self, FullText, MinimumShouldMatch, Obj};

/// Where a node sits, which decides what replaces it when it cannot be converted here.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Ctx {
    /// A `must` or `filter` clause: replaced by `ConstScoreQuery(AllQuery, 0.0)` (matches every
    /// doc, scores 0).
    Required,
    /// A `should` clause or the root: replaced by `EmptyQuery` (matches nothing, adds nothing).
    Optional,
    /// A `must_not` clause: the whole clause is dropped.
    Excluded,
}

/// The result of converting an AST: the query, and whether it matches exactly the docs the
/// JVM's own execution of the same AST matches (false when any node was replaced).
pub struct Converted {
    pub query: Box<dyn Query>,
    pub exact: bool,
}

/// Converts `json` (a query AST) against `index`. Errors are messages naming the fault: JSON
/// that does not parse, or a node of a known type that is malformed.
pub fn convert(index: &Index, json: &str) -> Result<Converted, String> {
    let value = node::parse(json)?;
    let mut conv = Converter { index, replaced: 0 };
    let node = conv.node(&value, Ctx::Optional, "$")?;
    let query = match node {
        Some(n) => n.simplify().into_query(),
        None => Box::new(EmptyQuery),
    };
    Ok(Converted {
        query,
        exact: conv.replaced == 0,
    })
}

/// Quickwit's `TantivyQueryAst`: a tree that is simplified before it becomes a tantivy query.
enum Node {
    Bool(BoolNode),
    Leaf(Box<dyn Query>),
    All,
    None,
}

#[derive(Default)]
struct BoolNode {
    must: Vec<Node>,
    must_not: Vec<Node>,
    should: Vec<Node>,
    filter: Vec<Node>,
    minimum_should_match: Option<usize>,
}

impl Node {
    fn leaf<Q: Query>(q: Q) -> Node {
        Node::Leaf(Box::new(q))
    }

    fn is_all(&self) -> bool {
        matches!(self, Node::All)
    }

    fn is_none(&self) -> bool {
        matches!(self, Node::None)
    }

    fn simplify(self) -> Node {
        match self {
            Node::Bool(b) => b.simplify(),
            other => other,
        }
    }

    fn into_query(self) -> Box<dyn Query> {
        match self {
            Node::Bool(b) => b.into_query(),
            Node::Leaf(q) => q,
            Node::All => Box::new(AllQuery),
            Node::None => Box::new(EmptyQuery),
        }
    }
}

/// Removes the nodes `pred` selects, keeping one when `stop_before_empty` and one is left
/// (Quickwit's `remove_with_guard`, with its swap_remove order).
fn remove_with_guard(nodes: &mut Vec<Node>, pred: fn(&Node) -> bool, stop_before_empty: bool) {
    let mut i = 0;
    while i < nodes.len() {
        if stop_before_empty && nodes.len() == 1 {
            break;
        }
        if pred(&nodes[i]) {
            nodes.swap_remove(i);
        } else {
            i += 1;
        }
    }
}

impl BoolNode {
    /// Whether a `must` or `filter` clause matches nothing (so the whole node does).
    fn required_has_none(&self) -> bool {
        self.must
            .iter()
            .chain(self.filter.iter())
            .any(Node::is_none)
    }

    /// Quickwit's `TantivyBoolQuery::simplify`: the same match set and the same scores as
    /// Quickwit computes for the same AST.
    fn simplify(mut self) -> Node {
        let simplify_all = |v: Vec<Node>| v.into_iter().map(Node::simplify).collect::<Vec<_>>();
        self.must = simplify_all(self.must);
        self.should = simplify_all(self.should);
        self.must_not = simplify_all(self.must_not);
        self.filter = simplify_all(self.filter);

        if self.required_has_none() {
            return Node::None;
        }
        if self.should.is_empty()
            && self.must.is_empty()
            && self.filter.is_empty()
            && self.must_not.is_empty()
            && self.minimum_should_match.unwrap_or(0) == 0
        {
            return Node::All;
        }

        let mut new_must = Vec::with_capacity(self.must.len());
        for must in std::mem::take(&mut self.must) {
            match must {
                Node::Bool(mut b) if b.should.is_empty() && b.minimum_should_match.is_none() => {
                    new_must.append(&mut b.must);
                    self.filter.append(&mut b.filter);
                    self.must_not.append(&mut b.must_not);
                }
                other => new_must.push(other),
            }
        }
        self.must = new_must;

        let mut new_filter = Vec::with_capacity(self.filter.len());
        for filter in std::mem::take(&mut self.filter) {
            match filter {
                Node::Bool(mut b) if b.should.is_empty() && b.minimum_should_match.is_none() => {
                    new_filter.append(&mut b.must);
                    new_filter.append(&mut b.filter);
                    self.must_not.append(&mut b.must_not);
                }
                other => new_filter.push(other),
            }
        }
        self.filter = new_filter;

        if self.minimum_should_match.is_none() {
            let mut new_should = Vec::with_capacity(self.should.len());
            for should in std::mem::take(&mut self.should) {
                match should {
                    Node::Bool(mut b)
                        if b.must.is_empty()
                            && b.filter.is_empty()
                            && b.must_not.is_empty()
                            && b.minimum_should_match.is_none() =>
                    {
                        new_should.append(&mut b.should);
                    }
                    other => new_should.push(other),
                }
            }
            self.should = new_should;
        }

        remove_with_guard(&mut self.must, Node::is_all, true);
        let mut no_positive_so_far = self.must.is_empty();
        remove_with_guard(&mut self.filter, Node::is_all, no_positive_so_far);
        no_positive_so_far &= self.filter.is_empty();
        if !self.filter.is_empty() {
            remove_with_guard(&mut self.must, Node::is_all, false);
        }
        remove_with_guard(&mut self.should, Node::is_none, no_positive_so_far);
        no_positive_so_far &= self.should.is_empty();
        remove_with_guard(&mut self.must_not, Node::is_none, no_positive_so_far);

        if self.required_has_none() {
            return Node::None;
        }
        if self.must_not.iter().any(Node::is_all) {
            return Node::None;
        }
        let has_positive =
            !(self.must.is_empty() && self.should.is_empty() && self.filter.is_empty());
        if !has_positive {
            if self.minimum_should_match.unwrap_or(0) > 0 {
                return Node::None;
            }
            if self.must_not.iter().all(Node::is_none) {
                return Node::All;
            }
            self.must.push(Node::All);
        } else {
            let n = self.must.len() + self.should.len() + self.must_not.len() + self.filter.len();
            if n == 1 && self.minimum_should_match.is_none() {
                if let Some(node) = self.must.pop().or_else(|| self.should.pop()) {
                    return node;
                }
            }
        }
        Node::Bool(self)
    }

    fn into_query(self) -> Box<dyn Query> {
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (occur, nodes) in [
            (Occur::Must, self.must),
            (Occur::MustNot, self.must_not),
            (Occur::Should, self.should),
        ] {
            for n in nodes {
                clauses.push((occur, n.into_query()));
            }
        }
        for n in self.filter {
            clauses.push((
                Occur::Must,
                Box::new(ConstScoreQuery::new(n.into_query(), 0.0)),
            ));
        }
        match self.minimum_should_match {
            Some(m) => Box::new(BooleanQuery::with_minimum_required_clauses(clauses, m)),
            None => Box::new(BooleanQuery::new(clauses)),
        }
    }
}

struct Converter<'a> {
    index: &'a Index,
    /// How many nodes were replaced because they cannot be scored here.
    replaced: usize,
}

/// What a text node resolves to: the field and how it is indexed.
struct TextField {
    field: Field,
    record: IndexRecordOption,
}

impl<'a> Converter<'a> {
    /// The replacement of a node that cannot be converted here, for its context.
    fn neutral(&mut self, ctx: Ctx) -> Option<Node> {
        self.replaced += 1;
        match ctx {
            Ctx::Required => Some(Node::leaf(ConstScoreQuery::new(Box::new(AllQuery), 0.0))),
            Ctx::Optional => Some(Node::leaf(EmptyQuery)),
            Ctx::Excluded => None,
        }
    }

    fn node(&mut self, v: &Value, ctx: Ctx, path: &str) -> Result<Option<Node>, String> {
        let (obj, typ) = node::typed(v, path)?;
        match typ {
            "bool" => self.bool_node(obj, ctx, path),
            "boost" => {
                let underlying = node::underlying(obj, path)?;
                let boost = obj
                    .get("boost")
                    .or_else(|| obj.get("score"))
                    .and_then(Value::as_f64)
                    .ok_or_else(|| format!("boost node at {path} has no numeric \"boost\""))?;
                // A replacement under a boost stays neutral: 0 * boost = 0, nothing * boost =
                // nothing.
                let inner = self.node(underlying, ctx, &format!("{path}.underlying"))?;
                Ok(inner.map(|n| {
                    let q = n.simplify().into_query();
                    Node::leaf(BoostQuery::new(q, boost as f32))
                }))
            }
            "match_all" => Ok(Some(Node::All)),
            "match_none" => Ok(Some(Node::None)),
            "full_text" => self.full_text(obj, ctx, path),
            "term" => self.term(obj, ctx, path),
            _ => Ok(self.neutral(ctx)),
        }
    }

    fn bool_node(&mut self, obj: &Obj, ctx: Ctx, path: &str) -> Result<Option<Node>, String> {
        let mut b = BoolNode::default();
        for (key, child_ctx) in node::BOOL_CLAUSES {
            for (i, child) in node::clauses(obj, key, path)?.iter().enumerate() {
                let child_path = format!("{path}.{key}[{i}]");
                let before = self.replaced;
                let node = self.node(child, child_ctx, &child_path)?;
                // A must_not clause with a replaced node anywhere under it could exclude docs
                // that the JVM keeps: the whole clause is dropped.
                let node = if child_ctx == Ctx::Excluded && self.replaced != before {
                    None
                } else {
                    node
                };
                if let Some(n) = node {
                    match key {
                        "must" => b.must.push(n),
                        "filter" => b.filter.push(n),
                        "should" => b.should.push(n),
                        _ => b.must_not.push(n),
                    }
                }
            }
        }
        match node::minimum_should_match(obj) {
            MinimumShouldMatch::Absent => {}
            MinimumShouldMatch::Count(m) => b.minimum_should_match = Some(m),
            MinimumShouldMatch::Other => return Ok(self.neutral(ctx)),
        }
        Ok(Some(Node::Bool(b)))
    }

    /// The indexed text field named `name`, or None when this index has no such field or
    /// cannot score it (not text, not indexed).
    fn text_field(&self, name: &str) -> Option<TextField> {
        let schema = self.index.schema();
        let field = schema.get_field(name).ok()?;
        match schema.get_field_entry(field).field_type() {
            FieldType::Str(opts) => opts.get_indexing_options().map(|ix| TextField {
                field,
                record: ix.index_option(),
            }),
            _ => None,
        }
    }

    fn term(&mut self, obj: &Obj, ctx: Ctx, path: &str) -> Result<Option<Node>, String> {
        let name = node::field_name(obj, path)?;
        let value = match obj.get("value") {
            Some(Value::String(s)) => s.clone(),
            _ => return Ok(self.neutral(ctx)),
        };
        let Some(tf) = self.text_field(name) else {
            return Ok(self.neutral(ctx));
        };
        let term = Term::from_field_text(tf.field, &value);
        let record = IndexRecordOption::WithFreqs.downgrade(tf.record);
        Ok(Some(Node::leaf(TermQuery::new(term, record))))
    }

    fn full_text(&mut self, obj: &Obj, ctx: Ctx, path: &str) -> Result<Option<Node>, String> {
        let ft = FullText::read(obj, path)?;
        let Some(tf) = self.text_field(ft.field) else {
            return Ok(self.neutral(ctx));
        };
        let analyzer = match ft.tokenizer() {
            Some(tokenizer) => self.index.tokenizers().get(tokenizer),
            None => self.index.tokenizer_for_field(tf.field).ok(),
        };
        // A tokenizer this index does not know (one registered by the writer only): the JVM's
        // own matching decides.
        let Some(mut analyzer) = analyzer else {
            return Ok(self.neutral(ctx));
        };
        let mut terms: Vec<(usize, Term)> = Vec::new();
        let mut stream = analyzer.token_stream(ft.text);
        while stream.advance() {
            let token = stream.token();
            terms.push((token.position, Term::from_field_text(tf.field, &token.text)));
        }
        drop(stream);

        if terms.is_empty() {
            return Ok(Some(if ft.zero_terms_match_all() {
                Node::All
            } else {
                Node::None
            }));
        }
        if terms.len() == 1 {
            let term = terms.pop().expect("one term").1;
            let record = IndexRecordOption::WithFreqs.downgrade(tf.record);
            return Ok(Some(Node::leaf(TermQuery::new(term, record))));
        }

        let term_queries = |terms: Vec<(usize, Term)>| -> Vec<Node> {
            terms
                .into_iter()
                .map(|(_, t)| Node::leaf(TermQuery::new(t, tf.record)))
                .collect()
        };
        match ft.mode_type() {
            Some("phrase_fallback_to_intersection") => {
                if tf.record.has_positions() {
                    Ok(Some(Node::leaf(PhraseQuery::new_with_offset(terms))))
                } else {
                    Ok(Some(Node::Bool(BoolNode {
                        must: term_queries(terms),
                        ..Default::default()
                    })))
                }
            }
            Some("phrase") => {
                if !tf.record.has_positions() {
                    // Quickwit rejects a phrase over a field without positions.
                    return Ok(self.neutral(ctx));
                }
                Ok(Some(Node::leaf(PhraseQuery::new_with_offset_and_slop(
                    terms,
                    ft.slop() as u32,
                ))))
            }
            Some("bool") => {
                let children = term_queries(terms);
                match ft.operator().as_str() {
                    "and" => Ok(Some(Node::Bool(BoolNode {
                        must: children,
                        ..Default::default()
                    }))),
                    "or" => Ok(Some(Node::Bool(BoolNode {
                        should: children,
                        ..Default::default()
                    }))),
                    _ => Ok(self.neutral(ctx)),
                }
            }
            // bool_prefix and any mode not known here.
            _ => Ok(self.neutral(ctx)),
        }
    }
}
