//! Highlights: the best fragment of one text value with what a query matched in it marked, as
//! Elasticsearch's highlighter returns it. See docs/highlights.md.
//!
//! tantivy's `SnippetGenerator` marks every occurrence of every term the query names: the words
//! of a phrase wherever they stand alone, the terms of a `must_not` clause, the terms of a clause
//! that did not match. So the marks are decided here, by evaluating the query against the value
//! the way the index matches it (the same tokenizers, Quickwit's boolean semantics, phrases by
//! position), and tantivy's generator only chooses the fragment: it is given the value's tokens
//! with the matched ones as its single "term", and picks the window of at most `max_chars`
//! characters holding the most of them (the first such window on a tie).
//!
//! A query is compiled once per (tokenizer, field, AST) and cached: the AST's clauses on the
//! field become a [`Plan`] (terms, phrases, wildcards); a clause on another field, or of a type
//! not evaluated here (range, regex, term_set, phrase_prefix, exists, ...), is replaced as the ranker replaces a
//! clause it cannot score (ast.rs): inside `must`/`filter` it matches every value and marks
//! nothing, inside `should` or at the root it matches nothing, and a `must_not` clause holding
//! one is dropped.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;
use tantivy::schema::Field;
use tantivy::snippet::SnippetGenerator;
use tantivy::tokenizer::{
    LowerCaser, RemoveLongFilter, TextAnalyzer, Token, TokenStream, Tokenizer, TokenizerManager,
    WhitespaceTokenizer,
};

use crate::ast::Ctx;
use crate::node::{self, FullText, MinimumShouldMatch, Obj};

/// How a highlight is rendered.
pub struct Render<'a> {
    /// The fragment's length limit in characters; 0 means the whole value.
    pub max_chars: usize,
    pub pre_tag: &'a str,
    pub post_tag: &'a str,
    /// Escape the value's text (not the tags) for HTML, as Elasticsearch's `encoder: html`.
    pub escape_html: bool,
}

/// The fragment of `text` (a value of `field`, cut by `tokenizer`) with what the query `ast`
/// matched marked, or None when the value does not match the query's clauses on `field` or
/// matches them without a term to mark (a match_all, a clause on another field).
pub fn snippet(
    tokenizer: &str,
    field: &str,
    ast: &str,
    text: &str,
    render: &Render,
) -> Result<Option<String>, String> {
    let (doc, marked) = evaluate(tokenizer, field, ast, text)?;
    let Some(mut marked) = marked else {
        return Ok(None);
    };
    if marked.is_empty() {
        return Ok(None);
    }
    marked.sort_unstable();
    marked.dedup();
    Ok(Some(fragment(&doc, text, &marked, render)))
}

/// The value cut into tokens, and the tokens to mark if it matches the query (else None).
fn evaluate(
    tokenizer: &str,
    field: &str,
    ast: &str,
    text: &str,
) -> Result<(Doc, Option<Vec<usize>>), String> {
    let plan = compiled(tokenizer, field, ast)?;
    let mut analyzer =
        value_analyzer(tokenizer).ok_or_else(|| format!("unknown tokenizer '{tokenizer}'"))?;
    let doc = Doc::new(&mut analyzer, text);
    let marked = plan.eval(&doc);
    Ok((doc, marked))
}

// ---- Tokenizers ------------------------------------------------------------------------------

/// The tokenizers query text is cut with: tantivy4java's split search's (see lib.rs).
fn query_tokenizers() -> &'static TokenizerManager {
    static MANAGER: OnceLock<TokenizerManager> = OnceLock::new();
    MANAGER.get_or_init(|| {
        let manager = TokenizerManager::default();
        crate::register_query_tokenizers_in(&manager);
        manager
    })
}

/// The analyzer a value is cut with, as tantivy4java indexed it: the query's, except that
/// `whitespace` lower-cases what it indexes (and not what it queries).
fn value_analyzer(name: &str) -> Option<TextAnalyzer> {
    if name == "whitespace" {
        return Some(
            TextAnalyzer::builder(WhitespaceTokenizer::default())
                .filter(RemoveLongFilter::limit(255))
                .filter(LowerCaser)
                .build(),
        );
    }
    query_tokenizers().get(name)
}

// ---- The query, compiled for one field -------------------------------------------------------

/// The query's clauses on one field, as they match a value of it.
#[derive(Debug)]
enum Plan {
    /// Matches, marks nothing (a match_all, or a `must` clause not evaluated here).
    All,
    /// Matches nothing.
    None,
    /// A token of exactly this text.
    Term(String),
    /// A token the wildcard pattern matches as a whole (`*` any run, `?` one character).
    Pattern(Vec<Glob>),
    /// Tokens at these offsets from one another, within `slop`.
    Phrase {
        terms: Vec<(usize, String)>,
        slop: u32,
    },
    /// `filter` clauses are in `must`: the same matches, and their terms are marked too.
    Bool {
        must: Vec<Plan>,
        should: Vec<Plan>,
        must_not: Vec<Plan>,
        minimum_should_match: Option<usize>,
    },
}

type Key = (String, String, String);

/// Compiled plans by (tokenizer, field, AST): a task evaluates one query over many rows.
fn compiled(tokenizer: &str, field: &str, ast: &str) -> Result<Arc<Plan>, String> {
    static CACHE: OnceLock<Mutex<HashMap<Key, Arc<Plan>>>> = OnceLock::new();
    const MAX_CACHED: usize = 256;
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let key = (tokenizer.to_string(), field.to_string(), ast.to_string());
    if let Some(plan) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return Ok(plan.clone());
    }
    let plan = Arc::new(compile(tokenizer, field, ast)?);
    let mut map = cache.lock().unwrap_or_else(|p| p.into_inner());
    if map.len() >= MAX_CACHED {
        map.clear();
    }
    map.insert(key, plan.clone());
    Ok(plan)
}

fn compile(tokenizer: &str, field: &str, ast: &str) -> Result<Plan, String> {
    if query_tokenizers().get(tokenizer).is_none() {
        return Err(format!("unknown tokenizer '{tokenizer}'"));
    }
    let value = node::parse(ast)?;
    let compiler = Compiler { field, tokenizer };
    Ok(compiler
        .node(&value, Ctx::Optional, "$")?
        .map(|c| c.plan)
        .unwrap_or(Plan::None))
}

/// A compiled node, and whether a clause under it was replaced (a `must_not` holding one is
/// dropped, as the ranker drops it).
struct Compiled {
    plan: Plan,
    replaced: bool,
}

struct Compiler<'a> {
    field: &'a str,
    tokenizer: &'a str,
}

impl Compiler<'_> {
    /// What replaces a node this field's matching cannot decide.
    fn neutral(ctx: Ctx) -> Option<Compiled> {
        let plan = match ctx {
            Ctx::Required => Plan::All,
            Ctx::Optional => Plan::None,
            Ctx::Excluded => return None,
        };
        Some(Compiled {
            plan,
            replaced: true,
        })
    }

    fn exact(plan: Plan) -> Option<Compiled> {
        Some(Compiled {
            plan,
            replaced: false,
        })
    }

    fn node(&self, v: &Value, ctx: Ctx, path: &str) -> Result<Option<Compiled>, String> {
        let (obj, typ) = node::typed(v, path)?;
        match typ {
            "bool" => self.bool_node(obj, ctx, path),
            "boost" => {
                let underlying = node::underlying(obj, path)?;
                self.node(underlying, ctx, &format!("{path}.underlying"))
            }
            "match_all" => Ok(Self::exact(Plan::All)),
            "match_none" => Ok(Self::exact(Plan::None)),
            "full_text" => self.full_text(obj, ctx, path),
            "wildcard" => {
                let name = node::field_name(obj, path)?;
                match obj.get("value") {
                    // `/.../` is a regular expression, not evaluated here.
                    Some(Value::String(v))
                        if name == self.field
                            && !(v.len() > 1 && v.starts_with('/') && v.ends_with('/')) =>
                    {
                        Ok(Self::exact(Plan::Pattern(glob(&self.normalized(v)))))
                    }
                    _ => Ok(Self::neutral(ctx)),
                }
            }
            "term" => {
                let name = node::field_name(obj, path)?;
                match obj.get("value") {
                    Some(Value::String(s)) if name == self.field => {
                        Ok(Self::exact(Plan::Term(s.clone())))
                    }
                    _ => Ok(Self::neutral(ctx)),
                }
            }
            _ => Ok(Self::neutral(ctx)),
        }
    }

    /// A wildcard pattern as the index matches it against this field's terms: lower-cased
    /// where the field's query tokenizer lower-cases (tantivy4java's split search matches
    /// `TIME*` as `time*` on a `default` field, and `Time*` as it is on a `raw` one).
    fn normalized(&self, pattern: &str) -> String {
        match self.tokenizer {
            "default" | "simple" | "en_stem" => pattern.to_lowercase(),
            _ => pattern.to_string(),
        }
    }

    fn bool_node(&self, obj: &Obj, ctx: Ctx, path: &str) -> Result<Option<Compiled>, String> {
        let mut must = Vec::new();
        let mut should = Vec::new();
        let mut must_not = Vec::new();
        let mut replaced = false;
        for (key, child_ctx) in node::BOOL_CLAUSES {
            for (i, child) in node::clauses(obj, key, path)?.iter().enumerate() {
                let Some(c) = self.node(child, child_ctx, &format!("{path}.{key}[{i}]"))? else {
                    replaced = true;
                    continue;
                };
                replaced |= c.replaced;
                match key {
                    "must" | "filter" => must.push(c.plan),
                    "should" => should.push(c.plan),
                    // A must_not clause with a replaced node anywhere under it could exclude
                    // values that the index keeps: the whole clause is dropped.
                    _ if c.replaced => {}
                    _ => must_not.push(c.plan),
                }
            }
        }
        let minimum_should_match = match node::minimum_should_match(obj) {
            MinimumShouldMatch::Absent => None,
            MinimumShouldMatch::Count(m) => Some(m),
            MinimumShouldMatch::Other => return Ok(Self::neutral(ctx)),
        };
        Ok(Some(Compiled {
            plan: Plan::Bool {
                must,
                should,
                must_not,
                minimum_should_match,
            },
            replaced,
        }))
    }

    /// As ast.rs converts a `full_text` node (and so as Quickwit does): cut by the field's
    /// tokenizer or `params.tokenizer`; no token: nothing (or everything with
    /// `zero_terms_query: all`); one: a term; more, by mode: a phrase (positions are on), a
    /// sloppy phrase, or the terms ANDed or ORed.
    fn full_text(&self, obj: &Obj, ctx: Ctx, path: &str) -> Result<Option<Compiled>, String> {
        let ft = FullText::read(obj, path)?;
        if ft.field != self.field {
            return Ok(Self::neutral(ctx));
        }
        let tokenizer = ft.tokenizer().unwrap_or(self.tokenizer);
        let Some(mut analyzer) = query_tokenizers().get(tokenizer) else {
            return Ok(Self::neutral(ctx));
        };
        let mut terms: Vec<(usize, String)> = Vec::new();
        let mut stream = analyzer.token_stream(ft.text);
        while stream.advance() {
            let token = stream.token();
            terms.push((token.position, token.text.clone()));
        }
        drop(stream);

        if terms.is_empty() {
            return Ok(Self::exact(if ft.zero_terms_match_all() {
                Plan::All
            } else {
                Plan::None
            }));
        }
        if terms.len() == 1 {
            return Ok(Self::exact(Plan::Term(terms.pop().expect("one term").1)));
        }
        let as_terms =
            |terms: Vec<(usize, String)>| terms.into_iter().map(|(_, t)| Plan::Term(t)).collect();
        match ft.mode_type() {
            Some("phrase_fallback_to_intersection") => {
                Ok(Self::exact(Plan::Phrase { terms, slop: 0 }))
            }
            Some("phrase") => Ok(Self::exact(Plan::Phrase {
                terms,
                slop: ft.slop().min(u64::from(u32::MAX)) as u32,
            })),
            Some("bool") => {
                let bool_of = |must, should| Plan::Bool {
                    must,
                    should,
                    must_not: Vec::new(),
                    minimum_should_match: None,
                };
                match ft.operator().as_str() {
                    "and" => Ok(Self::exact(bool_of(as_terms(terms), Vec::new()))),
                    "or" => Ok(Self::exact(bool_of(Vec::new(), as_terms(terms)))),
                    _ => Ok(Self::neutral(ctx)),
                }
            }
            _ => Ok(Self::neutral(ctx)),
        }
    }
}

// ---- Matching a value ------------------------------------------------------------------------

/// A value cut into tokens (byte offsets into it), with indexes by text and by position.
struct Doc {
    tokens: Vec<Token>,
    by_text: HashMap<String, Vec<usize>>,
    by_position: HashMap<usize, usize>,
}

impl Doc {
    fn new(analyzer: &mut TextAnalyzer, text: &str) -> Doc {
        let mut tokens = Vec::new();
        let mut stream = analyzer.token_stream(text);
        while stream.advance() {
            tokens.push(stream.token().clone());
        }
        drop(stream);
        let mut by_text: HashMap<String, Vec<usize>> = HashMap::new();
        let mut by_position = HashMap::new();
        for (i, t) in tokens.iter().enumerate() {
            by_text.entry(t.text.clone()).or_default().push(i);
            by_position.entry(t.position).or_insert(i);
        }
        Doc {
            tokens,
            by_text,
            by_position,
        }
    }

    fn occurrences(&self, term: &str) -> &[usize] {
        self.by_text.get(term).map(Vec::as_slice).unwrap_or(&[])
    }
}

/// At most this many steps searching one sloppy phrase in one value: past it, the occurrences
/// found so far are the marks.
const SLOPPY_PHRASE_BUDGET: usize = 100_000;

impl Plan {
    /// The tokens (indexes into `doc.tokens`) to mark when the value matches, else None. Only
    /// clauses that matched mark: not a `must_not` clause, not a `should` clause that did not.
    fn eval(&self, doc: &Doc) -> Option<Vec<usize>> {
        match self {
            Plan::All => Some(Vec::new()),
            Plan::None => None,
            Plan::Term(t) => {
                let hits = doc.occurrences(t);
                if hits.is_empty() {
                    None
                } else {
                    Some(hits.to_vec())
                }
            }
            Plan::Pattern(pattern) => {
                let marks: Vec<usize> = (0..doc.tokens.len())
                    .filter(|&i| glob_matches(pattern, &doc.tokens[i].text))
                    .collect();
                if marks.is_empty() {
                    None
                } else {
                    Some(marks)
                }
            }
            Plan::Phrase { terms, slop } => {
                let marks = if *slop == 0 {
                    exact_phrase(doc, terms)
                } else {
                    sloppy_phrase(doc, terms, *slop)
                };
                if marks.is_empty() {
                    None
                } else {
                    Some(marks)
                }
            }
            Plan::Bool {
                must,
                should,
                must_not,
                minimum_should_match,
            } => {
                let mut marks = Vec::new();
                for m in must {
                    marks.extend(m.eval(doc)?);
                }
                if must_not.iter().any(|n| n.eval(doc).is_some()) {
                    return None;
                }
                let mut matched = 0;
                for s in should {
                    if let Some(m) = s.eval(doc) {
                        matched += 1;
                        marks.extend(m);
                    }
                }
                // Without a must clause, one should clause at least must match (a bool of
                // must_not clauses only matches what they do not: Quickwit adds a match_all).
                let at_least = if must.is_empty() && !should.is_empty() {
                    1
                } else {
                    0
                };
                let required = minimum_should_match.unwrap_or(0).max(at_least);
                if matched < required {
                    None
                } else {
                    Some(marks)
                }
            }
        }
    }
}

/// One step of a wildcard pattern.
#[derive(Debug, Clone, PartialEq)]
enum Glob {
    /// This character (`\*`, `\?` and `\\` are the literal ones).
    Char(char),
    /// `?`: any one character.
    One,
    /// `*`: any run of characters, the empty one too.
    Any,
}

fn glob(pattern: &str) -> Vec<Glob> {
    let mut out = Vec::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        out.push(match c {
            '\\' => Glob::Char(chars.next().unwrap_or('\\')),
            '?' => Glob::One,
            '*' => Glob::Any,
            c => Glob::Char(c),
        });
    }
    out
}

/// Whether `pattern` matches all of `text`: the usual greedy match with backtracking to the
/// last `*`, linear in practice.
fn glob_matches(pattern: &[Glob], text: &str) -> bool {
    let text: Vec<char> = text.chars().collect();
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(Glob::Any) => {
                star = Some((p, t));
                p += 1;
            }
            Some(Glob::One) => {
                p += 1;
                t += 1;
            }
            Some(Glob::Char(c)) if *c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|g| *g == Glob::Any)
}

/// Every token of every occurrence of the phrase: each term at its offset from the first.
fn exact_phrase(doc: &Doc, terms: &[(usize, String)]) -> Vec<usize> {
    let (first_offset, first) = &terms[0];
    let mut marks = Vec::new();
    'start: for &i in doc.occurrences(first) {
        let base = doc.tokens[i].position;
        let mut occurrence = vec![i];
        for (offset, term) in &terms[1..] {
            let at = base + (offset - first_offset);
            match doc.by_position.get(&at) {
                Some(&j) if doc.tokens[j].text == *term => occurrence.push(j),
                _ => continue 'start,
            }
        }
        marks.extend(occurrence);
    }
    marks
}

/// Every token of every occurrence within `slop`, counted as tantivy counts it: each term's
/// position, less its offset in the phrase, is compared with the previous term's, and the
/// distances (either way, so terms may swap) add up to at most `slop`.
fn sloppy_phrase(doc: &Doc, terms: &[(usize, String)], slop: u32) -> Vec<usize> {
    struct Search<'a> {
        doc: &'a Doc,
        terms: &'a [(usize, String)],
        slop: i64,
        steps: usize,
        path: Vec<usize>,
        marks: Vec<usize>,
    }
    impl Search<'_> {
        fn go(&mut self, k: usize, previous: i64, spent: i64) {
            if k == self.terms.len() {
                self.marks.extend(self.path.iter().copied());
                return;
            }
            let (offset, term) = &self.terms[k];
            for &j in self.doc.occurrences(term) {
                self.steps += 1;
                if self.steps > SLOPPY_PHRASE_BUDGET {
                    return;
                }
                if self.path.contains(&j) {
                    continue;
                }
                let here = self.doc.tokens[j].position as i64 - *offset as i64;
                let cost = if k == 0 { 0 } else { (here - previous).abs() };
                if spent + cost <= self.slop {
                    self.path.push(j);
                    self.go(k + 1, here, spent + cost);
                    self.path.pop();
                }
            }
        }
    }
    let mut search = Search {
        doc,
        terms,
        slop: i64::from(slop),
        steps: 0,
        path: Vec::new(),
        marks: Vec::new(),
    };
    search.go(0, 0, 0);
    search.marks
}

// ---- The fragment ----------------------------------------------------------------------------

/// Replays a value's tokens to tantivy's snippet generator, the marked ones under [`MARK`] and
/// the others under an empty text, with offsets in characters (over a stand-in text of one
/// byte per character), so that its limit counts characters, not bytes.
#[derive(Clone)]
struct Replay(Arc<Vec<Token>>);

struct ReplayStream {
    tokens: Arc<Vec<Token>>,
    next: usize,
}

impl TokenStream for ReplayStream {
    fn advance(&mut self) -> bool {
        if self.next < self.tokens.len() {
            self.next += 1;
            true
        } else {
            false
        }
    }

    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        unreachable!("the generator only reads tokens")
    }
}

impl Tokenizer for Replay {
    type TokenStream<'a> = ReplayStream;

    fn token_stream<'a>(&'a mut self, _text: &'a str) -> ReplayStream {
        ReplayStream {
            tokens: self.0.clone(),
            next: 0,
        }
    }
}

/// The one "term" the generator looks for: a marked token. (A private-use character, which
/// lower-cases to itself, as the generator lower-cases what it looks up.)
const MARK: &str = "\u{E000}";

fn fragment(doc: &Doc, text: &str, marked: &[usize], render: &Render) -> String {
    // Character offsets of every byte offset a token starts or ends at.
    let mut char_of = vec![0usize; text.len() + 1];
    let mut chars = 0;
    for (b, _) in text.char_indices() {
        char_of[b] = chars;
        chars += 1;
    }
    char_of[text.len()] = chars;
    let mut byte_of = Vec::with_capacity(chars + 1);
    byte_of.extend(text.char_indices().map(|(b, _)| b));
    byte_of.push(text.len());

    let (range, highlighted): (std::ops::Range<usize>, Vec<std::ops::Range<usize>>) =
        if render.max_chars == 0 {
            let marks = marked
                .iter()
                .map(|&i| {
                    let t = &doc.tokens[i];
                    char_of[t.offset_from]..char_of[t.offset_to]
                })
                .collect();
            (0..chars, marks)
        } else {
            let is_marked = {
                let mut v = vec![false; doc.tokens.len()];
                for &i in marked {
                    v[i] = true;
                }
                v
            };
            let replayed: Arc<Vec<Token>> = Arc::new(
                doc.tokens
                    .iter()
                    .enumerate()
                    .map(|(i, t)| Token {
                        offset_from: char_of[t.offset_from],
                        offset_to: char_of[t.offset_to],
                        position: t.position,
                        text: if is_marked[i] {
                            MARK.to_string()
                        } else {
                            String::new()
                        },
                        position_length: t.position_length,
                    })
                    .collect(),
            );
            let terms = [(MARK.to_string(), 1.0)].into_iter().collect();
            let generator = SnippetGenerator::new(
                terms,
                TextAnalyzer::from(Replay(replayed.clone())),
                Field::from_field_id(0),
                render.max_chars,
            );
            let stand_in = "x".repeat(chars);
            let snippet = generator.snippet(&stand_in);
            let mut range = snippet.fragment_range();
            // The generator ends a fragment at its last token: the text up to the next token
            // (the closing punctuation), as far as the limit allows, ends it here.
            let next_token = replayed
                .iter()
                .map(|t| t.offset_from)
                .find(|&from| from >= range.end)
                .unwrap_or(chars);
            let end = next_token
                .min(range.start + render.max_chars)
                .max(range.end);
            let trimmed = text[byte_of[range.end]..byte_of[end]]
                .trim_end()
                .chars()
                .count();
            range.end += trimmed;
            let marks = snippet
                .highlighted()
                .iter()
                .map(|h| h.start + range.start..h.end + range.start)
                .collect();
            (range, marks)
        };

    let mut marks: Vec<std::ops::Range<usize>> = highlighted;
    marks.sort_by_key(|r| (r.start, r.end));
    let mut out = String::new();
    let mut at = range.start;
    for m in marks {
        if m.start < at {
            // Overlapping marks (one token under two clauses) are one.
            continue;
        }
        push_text(
            &mut out,
            &text[byte_of[at]..byte_of[m.start]],
            render.escape_html,
        );
        out.push_str(render.pre_tag);
        push_text(
            &mut out,
            &text[byte_of[m.start]..byte_of[m.end]],
            render.escape_html,
        );
        out.push_str(render.post_tag);
        at = m.end;
    }
    push_text(
        &mut out,
        &text[byte_of[at]..byte_of[range.end]],
        render.escape_html,
    );
    out
}

/// `s`, escaped as Lucene's `SimpleHTMLEncoder` (Elasticsearch's `encoder: html`) escapes it
/// when `html`.
fn push_text(out: &mut String, s: &str, html: bool) {
    if !html {
        out.push_str(s);
        return;
    }
    for c in s.chars() {
        match c {
            '"' => out.push_str("&quot;"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\'' => out.push_str("&#x27;"),
            '/' => out.push_str("&#x2F;"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use tantivy::collector::Count;
    use tantivy::schema::{IndexRecordOption, Schema, TextFieldIndexing, TextOptions};
    use tantivy::{doc, Index};

    fn full_text(field: &str, text: &str, mode: &str) -> String {
        format!(
            r#"{{"type":"full_text","field":"{field}","text":"{text}","params":{{"mode":{mode}}}}}"#
        )
    }

    fn term(text: &str) -> String {
        full_text(
            "body",
            text,
            r#"{"type":"phrase_fallback_to_intersection"}"#,
        )
    }

    fn phrase(text: &str, slop: u32) -> String {
        full_text(
            "body",
            text,
            &format!(r#"{{"type":"phrase","slop":{slop}}}"#),
        )
    }

    fn bool_of(key: &str, clauses: &[String]) -> String {
        format!(r#"{{"type":"bool","{key}":[{}]}}"#, clauses.join(","))
    }

    fn plain(max_chars: usize) -> Render<'static> {
        Render {
            max_chars,
            pre_tag: "<b>",
            post_tag: "</b>",
            escape_html: false,
        }
    }

    fn hl(tokenizer: &str, ast: &str, text: &str) -> Option<String> {
        snippet(tokenizer, "body", ast, text, &plain(150)).unwrap()
    }

    /// The fragment of `text` (a `default` value of `body`) for `ast`, which matches it.
    fn fragment_of(ast: &str, text: &str, render: &Render) -> String {
        snippet("default", "body", ast, text, render)
            .unwrap()
            .unwrap()
    }

    const FOX: &str = "The quick brown fox jumps over the lazy dog; a quick dog, brown too.";

    #[test]
    fn terms_or_and_not() {
        assert_eq!(
            hl("default", &term("FOX"), FOX).as_deref(),
            Some("The quick brown <b>fox</b> jumps over the lazy dog; a quick dog, brown too.")
        );
        let or = bool_of("should", &[term("fox"), term("cat")]);
        assert!(hl("default", &or, FOX).unwrap().contains("<b>fox</b>"));
        let and = bool_of("must", &[term("fox"), term("cat")]);
        assert_eq!(hl("default", &and, FOX), None);
        // must_not terms are never marked; a must_not that matches excludes the value.
        let not = r#"{"type":"bool","must":[X],"must_not":[Y]}"#
            .replace('X', &term("fox"))
            .replace('Y', &term("cat"));
        assert_eq!(hl("default", &not, FOX).unwrap().matches("<b>").count(), 1);
        let excluded = not.replace("\"cat\"", "\"dog\"");
        assert_eq!(hl("default", &excluded, FOX), None);
        assert_eq!(hl("default", &term("cat"), FOX), None);
        assert_eq!(hl("default", r#"{"type":"match_all"}"#, FOX), None);
    }

    #[test]
    fn a_should_clause_that_did_not_match_marks_nothing() {
        // (quick AND cat) OR fox: quick is in the value but its clause did not match.
        let q = bool_of(
            "should",
            &[bool_of("must", &[term("quick"), term("cat")]), term("fox")],
        );
        assert_eq!(
            hl("default", &q, FOX).as_deref(),
            Some("The quick brown <b>fox</b> jumps over the lazy dog; a quick dog, brown too.")
        );
    }

    #[test]
    fn a_phrase_marks_its_occurrences_only() {
        assert_eq!(
            hl("default", &phrase("quick brown", 0), FOX).as_deref(),
            Some("The <b>quick</b> <b>brown</b> fox jumps over the lazy dog; a quick dog, brown too.")
        );
        // "quick-brown" is cut into a phrase too.
        assert_eq!(
            hl("default", &term("quick-brown"), FOX),
            hl("default", &phrase("quick brown", 0), FOX)
        );
        assert_eq!(hl("default", &phrase("brown quick", 0), FOX), None);
        // Swapped: a slop of 2 (tantivy counts a transposition as 2).
        assert!(hl("default", &phrase("brown quick", 1), FOX).is_none());
        assert_eq!(
            hl("default", &phrase("brown quick", 2), FOX).as_deref(),
            Some("The <b>quick</b> <b>brown</b> fox jumps over the lazy dog; a quick dog, brown too.")
        );
        assert_eq!(
            hl("default", &phrase("quick fox", 1), FOX).as_deref(),
            Some("The <b>quick</b> brown <b>fox</b> jumps over the lazy dog; a quick dog, brown too.")
        );
    }

    #[test]
    fn stems_mark_every_form() {
        let text = "She runs; he ran; they were running. Runner.";
        assert_eq!(
            hl("en_stem", &term("RUNNING"), text).as_deref(),
            Some("She <b>runs</b>; he ran; they were <b>running</b>. Runner.")
        );
        assert_eq!(
            hl("default", &term("running"), text).as_deref(),
            Some("She runs; he ran; they were <b>running</b>. Runner.")
        );
    }

    #[test]
    fn other_fields_and_unknown_clauses() {
        let title = full_text(
            "title",
            "fox",
            r#"{"type":"phrase_fallback_to_intersection"}"#,
        );
        assert_eq!(hl("default", &title, FOX), None);
        // fox AND title:cat: the title clause is the index's to decide.
        let q = bool_of("must", &[term("fox"), title.replace("fox", "cat")]);
        assert!(hl("default", &q, FOX).unwrap().contains("<b>fox</b>"));
        // fox OR title:cat, and a regular expression: not marked.
        let regex = r#"{"type":"wildcard","field":"body","value":"/qu.*/"}"#.to_string();
        let q = bool_of("should", &[term("cat"), regex.clone()]);
        assert_eq!(hl("default", &q, FOX), None);
        // NOT regex is dropped.
        let q = format!(
            r#"{{"type":"bool","must":[{}],"must_not":[{regex}]}}"#,
            term("fox")
        );
        assert!(hl("default", &q, FOX).is_some());
    }

    #[test]
    fn wildcards_mark_the_tokens_they_match() {
        let w = |field: &str, v: &str| {
            format!(r#"{{"type":"wildcard","field":"{field}","value":"{v}"}}"#)
        };
        let text = "Timeout after the timer; TIME is up, timeouts again";
        // Lower-cased as the index's terms are, on a default field; whole tokens only.
        let marked = hl("default", &w("body", "TIME*"), text).unwrap();
        assert_eq!(
            marked,
            "<b>Timeout</b> after the <b>timer</b>; <b>TIME</b> is up, <b>timeouts</b> again"
        );
        let q = w("body", "tim?out");
        assert_eq!(
            hl("default", &q, text).unwrap(),
            "<b>Timeout</b> after the timer; TIME is up, timeouts again"
        );
        assert_eq!(
            hl("default", &w("body", "ti*out*"), text)
                .unwrap()
                .matches("<b>")
                .count(),
            2
        );
        assert_eq!(hl("default", &w("body", "fast*"), text), None);
        assert_eq!(hl("default", &w("title", "time*"), text), None);
        // A raw field's one token, case kept.
        assert!(hl("raw", &w("body", "Time*"), text).is_some());
        assert_eq!(hl("raw", &w("body", "time*"), text), None);
        // Escapes are literal characters.
        assert!(hl("raw", &w("body", r"a\\*b"), "a*b").is_some());
        assert_eq!(hl("raw", &w("body", r"a\\*b"), "axxb"), None);
        // With a term: both mark.
        let q = bool_of("should", &[term("again"), w("body", "tim?r")]);
        let both = hl("default", &q, text).unwrap();
        assert!(
            both.contains("<b>timer</b>") && both.contains("<b>again</b>"),
            "{both}"
        );
        assert!(glob_matches(&glob("a*b*c"), "aXbYbc"));
        assert!(!glob_matches(&glob("a*b?c"), "abc"));
        assert!(glob_matches(&glob("*"), ""));
    }

    #[test]
    fn fragments_tags_and_escaping() {
        let long = format!("{} needle {}", "word ".repeat(60), "more ".repeat(60));
        let s = fragment_of(&term("needle"), &long, &plain(40));
        assert!(s.contains("<b>needle</b>"), "{s}");
        assert!(
            s.replace("<b>", "").replace("</b>", "").chars().count() <= 40,
            "{s}"
        );
        let whole = fragment_of(&term("needle"), &long, &plain(0));
        assert_eq!(whole.replace("<b>", "").replace("</b>", ""), long);
        // Characters, not bytes.
        let accented = "é".repeat(30) + " needle " + &"é".repeat(30);
        let s = fragment_of(&term("needle"), &accented, &plain(20));
        assert_eq!(s, "<b>needle</b>");
        let s = fragment_of(&term("ééé"), "x ééé y", &plain(20));
        assert_eq!(s, "x <b>ééé</b> y");
        let html = Render {
            max_chars: 150,
            pre_tag: "<em class='hl'>",
            post_tag: "</em>",
            escape_html: true,
        };
        let s = fragment_of(&term("b"), "a<b> & 'b'", &html);
        assert_eq!(
            s,
            "a&lt;<em class='hl'>b</em>&gt; &amp; &#x27;<em class='hl'>b</em>&#x27;"
        );
        let s = fragment_of(&term("b"), "a<b> & 'b'", &plain(150));
        assert_eq!(s, "a<<b>b</b>> & '<b>b</b>'");
    }

    #[test]
    fn the_best_fragment_has_the_most_marks() {
        let text = format!("fox {} fox fox {}", "pad ".repeat(20), "pad ".repeat(20));
        let s = fragment_of(&term("fox"), &text, &plain(30));
        assert_eq!(s.matches("<b>fox</b>").count(), 2, "{s}");
    }

    #[test]
    fn whitespace_and_raw() {
        assert_eq!(
            hl("whitespace", &term("fox"), "The FOX, the fox").as_deref(),
            Some("The FOX, the <b>fox</b>")
        );
        assert_eq!(
            hl("raw", &term("Some Value"), "Some Value").as_deref(),
            Some("<b>Some Value</b>")
        );
        assert_eq!(hl("raw", &term("Some"), "Some Value"), None);
    }

    #[test]
    fn errors_name_the_fault() {
        let e = snippet("nope", "body", &term("x"), "x", &plain(10)).unwrap_err();
        assert!(e.contains("unknown tokenizer 'nope'"), "{e}");
        let e = snippet("default", "body", "{", "x", &plain(10)).unwrap_err();
        assert!(e.contains("not valid JSON"), "{e}");
        let e = snippet(
            "default",
            "body",
            r#"{"type":"bool","must":3}"#,
            "x",
            &plain(10),
        )
        .unwrap_err();
        assert!(e.contains("$"), "{e}");
    }

    /// Whether the value matches, decided here, is tantivy's answer for the converted query
    /// over an index of that one value.
    #[test]
    fn matches_as_tantivy_matches() {
        let texts = [
            FOX,
            "quick brown",
            "brown the quick",
            "a lazy fox, quick",
            "nothing here",
            "dog dog dog quick",
            "",
        ];
        let queries = [
            term("fox"),
            term("quick brown"),
            phrase("quick brown", 0),
            phrase("brown quick", 1),
            phrase("brown quick", 2),
            phrase("quick fox", 3),
            phrase("the quick", 1),
            bool_of("should", &[term("lazy"), term("nothing")]),
            bool_of("must", &[term("dog"), term("quick")]),
            format!(r#"{{"type":"bool","must_not":[{}]}}"#, term("fox")),
            format!(
                r#"{{"type":"bool","should":[{},{},{}],"minimum_should_match":2}}"#,
                term("fox"),
                term("dog"),
                term("here")
            ),
            format!(
                r#"{{"type":"bool","must":[{}],"should":[{}]}}"#,
                term("quick"),
                term("fox")
            ),
            full_text("body", "quick fox", r#"{"type":"bool","operator":"OR"}"#),
            full_text("body", "quick fox", r#"{"type":"bool","operator":"AND"}"#),
            r#"{"type":"term","field":"body","value":"fox"}"#.to_string(),
        ];
        for tokenizer in ["default", "en_stem"] {
            let mut builder = Schema::builder();
            let options = TextOptions::default().set_indexing_options(
                TextFieldIndexing::default()
                    .set_tokenizer(tokenizer)
                    .set_index_option(IndexRecordOption::WithFreqsAndPositions),
            );
            let body = builder.add_text_field("body", options);
            let index = Index::create_in_ram(builder.build());
            crate::register_query_tokenizers_in(index.tokenizers());
            for text in texts {
                let mut writer = index.writer_with_num_threads(1, 15_000_000).unwrap();
                writer.delete_all_documents().unwrap();
                writer.add_document(doc!(body => text)).unwrap();
                writer.commit().unwrap();
                let searcher = index.reader().unwrap().searcher();
                for q in &queries {
                    let converted = crate::ast::convert(&index, q).unwrap();
                    let tantivy = searcher.search(converted.query.as_ref(), &Count).unwrap() > 0;
                    let ours = evaluate(tokenizer, "body", q, text).unwrap().1.is_some();
                    assert_eq!(ours, tantivy, "{tokenizer}: {q} over {text:?}");
                }
            }
        }
    }
}
