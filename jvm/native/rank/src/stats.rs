//! BM25 statistics: the ones an index holds for a query's terms, and a
//! `Bm25StatisticsProvider` over statistics the caller supplies (summed over every split of a
//! table), so that each split scores as one index holding all the table's docs would.
//!
//! Terms are keyed by field NAME and the term's value bytes (`Term::serialized_value_bytes`),
//! never by `Field` id: two splits may number their fields differently.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use serde::{Deserialize, Serialize};
use tantivy::query::{Bm25StatisticsProvider, Query};
use tantivy::schema::{Field, Schema};
use tantivy::{Searcher, TantivyError, Term};

#[derive(Serialize, Deserialize, Debug, Default)]
#[serde(rename_all = "camelCase")]
pub struct StatsJson {
    #[serde(default)]
    pub num_docs: u64,
    #[serde(default)]
    pub fields: BTreeMap<String, u64>,
    #[serde(default)]
    pub terms: Vec<TermStatJson>,
    #[serde(default = "yes")]
    pub exact: bool,
}

fn yes() -> bool {
    true
}

#[derive(Serialize, Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct TermStatJson {
    pub field: String,
    /// Base64 (standard, padded) of the term's value bytes.
    pub term: String,
    pub doc_freq: u64,
}

/// This index's statistics for every term `query` scores, as JSON.
pub fn statistics(searcher: &Searcher, query: &dyn Query, exact: bool) -> Result<String, String> {
    to_json(&of_index(searcher, &[query], exact)?)
}

/// `stats` as the JSON the JVM reads (`RankStatistics.fromJson`).
pub fn to_json(stats: &StatsJson) -> Result<String, String> {
    serde_json::to_string(stats).map_err(|e| format!("cannot write statistics JSON: {e}"))
}

/// This index's statistics for every term any of `queries` scores, each term once (they are
/// one index's docs). `exact` is passed through.
pub fn of_index(
    searcher: &Searcher,
    queries: &[&dyn Query],
    exact: bool,
) -> Result<StatsJson, String> {
    let schema = searcher.schema();
    let mut terms: BTreeSet<(Field, Vec<u8>)> = BTreeSet::new();
    let mut collected: Vec<Term> = Vec::new();
    for query in queries {
        query.query_terms(&mut |term, _| {
            if terms.insert((term.field(), term.serialized_value_bytes().to_vec())) {
                collected.push(term.clone());
            }
        });
    }
    let num_docs: u64 = searcher
        .segment_readers()
        .iter()
        .map(|r| u64::from(r.max_doc()))
        .sum();
    let mut fields: BTreeMap<String, u64> = BTreeMap::new();
    let mut term_stats = Vec::with_capacity(collected.len());
    for term in &collected {
        let name = schema.get_field_name(term.field()).to_string();
        if !fields.contains_key(&name) {
            let mut tokens = 0u64;
            for reader in searcher.segment_readers() {
                let inverted = reader
                    .inverted_index(term.field())
                    .map_err(|e| format!("cannot read the inverted index of field {name}: {e}"))?;
                tokens += inverted.total_num_tokens();
            }
            fields.insert(name.clone(), tokens);
        }
        let doc_freq = searcher
            .doc_freq(term)
            .map_err(|e| format!("cannot read the doc freq of a term of field {name}: {e}"))?;
        term_stats.push(TermStatJson {
            field: name,
            term: B64.encode(term.serialized_value_bytes()),
            doc_freq,
        });
    }
    term_stats.sort_by(|a, b| (&a.field, &a.term).cmp(&(&b.field, &b.term)));
    Ok(StatsJson {
        num_docs,
        fields,
        terms: term_stats,
        exact,
    })
}

/// Statistics of several indexes (each a different set of docs) summed: what one index holding
/// all their docs would have. Add each with [`Sum::add`], then take [`Sum::total`].
#[derive(Default)]
pub struct Sum {
    num_docs: u64,
    fields: BTreeMap<String, u64>,
    terms: BTreeMap<(String, String), u64>,
    inexact: bool,
}

impl Sum {
    pub fn add(&mut self, s: StatsJson) {
        self.num_docs += s.num_docs;
        self.inexact |= !s.exact;
        for (f, n) in s.fields {
            *self.fields.entry(f).or_insert(0) += n;
        }
        for t in s.terms {
            *self.terms.entry((t.field, t.term)).or_insert(0) += t.doc_freq;
        }
    }

    pub fn total(self) -> StatsJson {
        StatsJson {
            num_docs: self.num_docs,
            fields: self.fields,
            terms: self
                .terms
                .into_iter()
                .map(|((field, term), doc_freq)| TermStatJson {
                    field,
                    term,
                    doc_freq,
                })
                .collect(),
            exact: !self.inexact,
        }
    }
}

/// Statistics the caller supplied (JSON, parsed once for every index they are given to).
pub struct Supplied {
    num_docs: Option<u64>,
    fields: HashMap<String, u64>,
    terms: HashMap<(String, Vec<u8>), u64>,
}

impl Supplied {
    pub fn parse(json: &str) -> Result<Supplied, String> {
        let parsed: StatsJson = serde_json::from_str(json)
            .map_err(|e| format!("statistics JSON does not parse: {e}"))?;
        let mut terms = HashMap::with_capacity(parsed.terms.len());
        for (i, t) in parsed.terms.into_iter().enumerate() {
            let bytes = B64.decode(t.term.as_bytes()).map_err(|e| {
                format!(
                    "statistics JSON: terms[{i}] (field {}) has a \"term\" that is not base64: {e}",
                    t.field
                )
            })?;
            *terms.entry((t.field, bytes)).or_insert(0) += t.doc_freq;
        }
        Ok(Supplied {
            num_docs: if parsed.num_docs > 0 {
                Some(parsed.num_docs)
            } else {
                None
            },
            fields: parsed.fields.into_iter().collect(),
            terms,
        })
    }

    /// These statistics as one index (`searcher`) scores with them.
    pub fn for_index<'a>(&'a self, searcher: &'a Searcher) -> SuppliedStats<'a> {
        SuppliedStats {
            searcher,
            schema: searcher.schema(),
            supplied: self,
        }
    }
}

/// Statistics the caller supplied, each missing one taken from this index's own (`searcher`):
/// numDocs 0 (or absent) means this index's own doc count, a field absent from "fields" this
/// index's own token count, a term absent from "terms" this index's own doc freq.
pub struct SuppliedStats<'a> {
    searcher: &'a Searcher,
    schema: &'a Schema,
    supplied: &'a Supplied,
}

impl Bm25StatisticsProvider for SuppliedStats<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        match self.supplied.fields.get(self.schema.get_field_name(field)) {
            Some(n) => Ok(*n),
            None => Bm25StatisticsProvider::total_num_tokens(self.searcher, field),
        }
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        match self.supplied.num_docs {
            Some(n) => Ok(n),
            None => Bm25StatisticsProvider::total_num_docs(self.searcher),
        }
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        let name = self.schema.get_field_name(term.field());
        let key = (name.to_string(), term.serialized_value_bytes().to_vec());
        let doc_freq = match self.supplied.terms.get(&key) {
            Some(n) => *n,
            None => self.searcher.doc_freq(term)?,
        };
        // tantivy's idf asserts this; a caller's inconsistent statistics are an error, not a
        // panic.
        let num_docs = self.total_num_docs()?;
        if doc_freq > num_docs {
            return Err(TantivyError::InvalidArgument(format!(
                "statistics: docFreq {doc_freq} of a term of field {name} exceeds numDocs \
                 {num_docs}"
            )));
        }
        Ok(doc_freq)
    }
}
