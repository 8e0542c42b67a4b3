//! indextables_rank: BM25 ranking over a Quickwit split (the split file itself, read-only and
//! mapped, or a tantivy index extracted from it), with statistics the caller supplies
//! (table-wide), called from the JVM through JNI (`io.indextables.spark.rank.NativeRankerLib`).
//! See docs/ranking-native.md.
//!
//! Every entry point catches errors and panics and throws them as
//! `java.lang.RuntimeException`; nothing here aborts the JVM.

mod ast;
mod bundle;
mod node;
mod snippet;
mod stats;

use std::any::Any;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use jni::objects::{JIntArray, JLongArray, JObject, JObjectArray, JString};
use jni::sys::{jboolean, jint, jlong, jobjectArray, jstring, JNI_FALSE};
use jni::JNIEnv;
use tantivy::collector::{Collector, SegmentCollector, TopDocs};
use tantivy::query::{EnableScoring, Query};
use tantivy::tokenizer::{
    Language, LowerCaser, RawTokenizer, RemoveLongFilter, SimpleTokenizer, Stemmer, TextAnalyzer,
    TokenizerManager, WhitespaceTokenizer,
};
use tantivy::{DocId, Index, IndexReader, ReloadPolicy, Score, Searcher, SegmentReader};

/// An opened index: what a handle stands for.
struct Ranked {
    index: Index,
    searcher: Searcher,
    // Kept so that the searcher's segments stay referenced as the reader would keep them.
    _reader: IndexReader,
}

/// Open indexes by handle. A handle is an id, never a pointer, so that a closed (or made-up)
/// handle is an error rather than a use after free, and a close racing a search cannot free
/// what the search still uses (it holds its own `Arc`).
fn registry() -> &'static Mutex<HashMap<jlong, Arc<Ranked>>> {
    static REGISTRY: OnceLock<Mutex<HashMap<jlong, Arc<Ranked>>>> = OnceLock::new();
    REGISTRY.get_or_init(|| Mutex::new(HashMap::new()))
}

static NEXT_HANDLE: AtomicI64 = AtomicI64::new(1);

fn lookup(handle: jlong) -> Result<Arc<Ranked>, String> {
    let map = registry().lock().unwrap_or_else(|p| p.into_inner());
    map.get(&handle)
        .cloned()
        .ok_or_else(|| format!("native ranker handle {handle} is closed or was never opened"))
}

fn open_index(dir: &str) -> Result<jlong, String> {
    let index = Index::open_in_dir(dir)
        .map_err(|e| format!("cannot open the index directory {dir}: {e}"))?;
    register(index, &format!("the index directory {dir}"))
}

/// Opens the split file at `path` as it is (read-only, mapped), without extracting it.
fn open_split(path: &str) -> Result<jlong, String> {
    let directory = bundle::BundleDirectory::open(std::path::Path::new(path))?;
    let index = Index::open(directory).map_err(|e| format!("cannot open the split {path}: {e}"))?;
    register(index, &format!("the split {path}"))
}

/// Opens a reader over `index` and registers it: its handle. `what` names it in errors.
fn register(index: Index, what: &str) -> Result<jlong, String> {
    register_query_tokenizers(&index);
    let reader: IndexReader = index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()
        .map_err(|e| format!("cannot open a reader over {what}: {e}"))?;
    let searcher = reader.searcher();
    let handle = NEXT_HANDLE.fetch_add(1, Ordering::Relaxed);
    let ranked = Arc::new(Ranked {
        index,
        searcher,
        _reader: reader,
    });
    registry()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(handle, ranked);
    Ok(handle)
}

/// Query text is cut as tantivy4java's split search (the JVM's own matching) cuts it: with
/// Quickwit's tokenizers under tantivy's names, not with tantivy's defaults, so that a text
/// clause matches here exactly the docs it matches there. Read off tantivy4java 0.31.0: every
/// one drops tokens of 255 bytes or more (tantivy's "default" and "en_stem": 40, its "raw":
/// none), and "whitespace" does not lowercase (although the index was written lowercased).
fn register_query_tokenizers(index: &Index) {
    register_query_tokenizers_in(index.tokenizers());
}

/// [`register_query_tokenizers`] into any tokenizer manager (highlights use them without an
/// index).
pub(crate) fn register_query_tokenizers_in(manager: &TokenizerManager) {
    for name in ["default", "simple"] {
        manager.register(
            name,
            TextAnalyzer::builder(SimpleTokenizer::default())
                .filter(RemoveLongFilter::limit(255))
                .filter(LowerCaser)
                .build(),
        );
    }
    manager.register(
        "en_stem",
        TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(RemoveLongFilter::limit(255))
            .filter(LowerCaser)
            .filter(Stemmer::new(Language::English))
            .build(),
    );
    manager.register(
        "raw",
        TextAnalyzer::builder(RawTokenizer::default())
            .filter(RemoveLongFilter::limit(255))
            .build(),
    );
    manager.register(
        "whitespace",
        TextAnalyzer::builder(WhitespaceTokenizer::default())
            .filter(RemoveLongFilter::limit(255))
            .build(),
    );
}

/// Every doc the query matches, with its score: (address, score), address =
/// segment ord << 32 | doc id.
struct AllHits;

struct AllHitsSegment {
    segment_ord: u64,
    hits: Vec<(u64, Score)>,
}

impl Collector for AllHits {
    type Fruit = Vec<(u64, Score)>;
    type Child = AllHitsSegment;

    fn for_segment(
        &self,
        segment_ord: u32,
        _reader: &SegmentReader,
    ) -> tantivy::Result<AllHitsSegment> {
        Ok(AllHitsSegment {
            segment_ord: u64::from(segment_ord),
            hits: Vec::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    fn merge_fruits(&self, fruits: Vec<Vec<(u64, Score)>>) -> tantivy::Result<Self::Fruit> {
        Ok(fruits.concat())
    }
}

impl SegmentCollector for AllHitsSegment {
    type Fruit = Vec<(u64, Score)>;

    fn collect(&mut self, doc: DocId, score: Score) {
        self.hits
            .push(((self.segment_ord << 32) | u64::from(doc), score));
    }

    fn harvest(self) -> Self::Fruit {
        self.hits
    }
}

fn address(segment_ord: u32, doc: DocId) -> u64 {
    (u64::from(segment_ord) << 32) | u64::from(doc)
}

fn top_k(ranked: &Ranked, ast: &str, stats: &str, k: jint) -> Result<Vec<(u64, Score)>, String> {
    let supplied = stats::Supplied::parse(stats)?;
    top_k_with(ranked, ast, &supplied, k)
}

/// `ranked`'s best `k` docs for `ast`, scored with `supplied` statistics: (address, score),
/// best first, ties by ascending address.
fn top_k_with(
    ranked: &Ranked,
    ast: &str,
    supplied: &stats::Supplied,
    k: jint,
) -> Result<Vec<(u64, Score)>, String> {
    if k <= 0 {
        return Err(format!("topK needs k > 0, got {k}"));
    }
    let converted = ast::convert(&ranked.index, ast)?;
    let provider = supplied.for_index(&ranked.searcher);
    // TopDocs allocates room for 2 * limit hits up front: a limit past the doc count (a
    // caller's "everything") must not become an allocation failure, which aborts the process.
    let max_doc: u64 = ranked
        .searcher
        .segment_readers()
        .iter()
        .map(|r| u64::from(r.max_doc()))
        .sum();
    let limit = (k as u64).min(max_doc.max(1)) as usize;
    let collector = TopDocs::with_limit(limit).order_by_score();
    let top = ranked
        .searcher
        .search_with_statistics_provider(converted.query.as_ref(), &collector, &provider)
        .map_err(|e| format!("topK search failed: {e}"))?;
    let mut hits: Vec<(u64, Score)> = top
        .into_iter()
        .map(|(score, a)| (address(a.segment_ord, a.doc_id), score))
        .collect();
    // TopDocs already orders by score, ties by ascending address; made explicit and stable.
    hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(hits)
}

fn score_all(ranked: &Ranked, ast: &str, stats: &str) -> Result<Vec<(u64, Score)>, String> {
    let converted = ast::convert(&ranked.index, ast)?;
    let supplied = stats::Supplied::parse(stats)?;
    let provider = supplied.for_index(&ranked.searcher);
    let scoring = EnableScoring::enabled_from_statistics_provider(&provider, &ranked.searcher);
    let query: &dyn Query = converted.query.as_ref();
    let executor = ranked.index.search_executor();
    let mut hits = ranked
        .searcher
        .search_with_executor(query, &AllHits, executor, scoring)
        .map_err(|e| format!("scoreAll search failed: {e}"))?;
    // In address order: the JVM looks each hit up by address (`Ranking.lookup`).
    hits.sort_unstable_by_key(|h| h.0);
    Ok(hits)
}

fn statistics(ranked: &Ranked, ast: &str) -> Result<String, String> {
    let converted = ast::convert(&ranked.index, ast)?;
    stats::statistics(&ranked.searcher, converted.query.as_ref(), converted.exact)
}

/// `f` applied to each of `items` (with its position) on up to `threads` threads, in order of
/// `items`. Work is dealt out one item at a time, so one slow item does not hold up the rest.
fn on_threads<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(usize, &T) -> Result<R, String> + Sync,
) -> Result<Vec<R>, String> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return items.iter().enumerate().map(|(i, t)| f(i, t)).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, Result<R, String>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= items.len() {
                            break;
                        }
                        out.push((i, f(i, &items[i])));
                    }
                    out
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| match w.join() {
                Ok(out) => out,
                Err(p) => std::panic::resume_unwind(p),
            })
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// The statistics of every index of `rankeds` for the terms of all of `asts`, summed: what
/// one index holding all their docs would have (a table's, over its splits).
fn statistics_many(
    rankeds: &[Arc<Ranked>],
    asts: &[String],
    threads: usize,
) -> Result<String, String> {
    let per_index = on_threads(rankeds, threads, |_, ranked| {
        let converted = asts
            .iter()
            .map(|a| ast::convert(&ranked.index, a))
            .collect::<Result<Vec<_>, _>>()?;
        let queries: Vec<&dyn Query> = converted.iter().map(|c| c.query.as_ref()).collect();
        let exact = converted.iter().all(|c| c.exact);
        stats::of_index(&ranked.searcher, &queries, exact)
    })?;
    let mut sum = stats::Sum::default();
    for s in per_index {
        sum.add(s);
    }
    stats::to_json(&sum.total())
}

/// Each index's best `wants[i]` docs for `asts[i]`, scored with the `stats` JSON: one list
/// per index, as [`top_k`] gives it.
fn top_k_many(
    rankeds: &[Arc<Ranked>],
    asts: &[String],
    stats: &str,
    wants: &[jint],
    threads: usize,
) -> Result<Vec<Vec<(u64, Score)>>, String> {
    if asts.len() != rankeds.len() || wants.len() != rankeds.len() {
        return Err(format!(
            "topKMany needs one query and one k per index: {} indexes, {} queries, {} ks",
            rankeds.len(),
            asts.len(),
            wants.len()
        ));
    }
    let supplied = stats::Supplied::parse(stats)?;
    on_threads(rankeds, threads, |i, ranked| {
        top_k_with(ranked, &asts[i], &supplied, wants[i])
    })
}

// ---- JNI -----------------------------------------------------------------------------------

fn panic_message(payload: Box<dyn Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// Runs `body`, turning an error or a panic into a `java.lang.RuntimeException` (and returning
/// `default`, which the JVM ignores since an exception is pending).
fn guarded<T>(
    env: &mut JNIEnv,
    what: &str,
    default: T,
    body: impl FnOnce(&mut JNIEnv) -> Result<T, String>,
) -> T {
    let outcome = catch_unwind(AssertUnwindSafe(|| body(&mut *env)));
    let message = match outcome {
        Ok(Ok(v)) => return v,
        Ok(Err(msg)) => format!("indextables native ranker: {what}: {msg}"),
        Err(payload) => format!(
            "indextables native ranker: {what}: panicked: {}",
            panic_message(payload)
        ),
    };
    // A JNI call that failed may have left its own exception pending: ours replaces it, with
    // its message.
    if env.exception_check().unwrap_or(false) {
        let _ = env.exception_clear();
    }
    let _ = env.throw_new("java/lang/RuntimeException", message);
    default
}

fn jstr(env: &mut JNIEnv, s: &JString, name: &str) -> Result<String, String> {
    if s.is_null() {
        return Err(format!("{name} is null"));
    }
    env.get_string(s)
        .map(|js| js.into())
        .map_err(|e| format!("cannot read {name}: {e}"))
}

/// `Array(long[] addresses, float[] scores)`.
fn hits_to_java(env: &mut JNIEnv, hits: &[(u64, Score)]) -> Result<jobjectArray, String> {
    let err = |e: jni::errors::Error| format!("cannot build the result arrays: {e}");
    let n = hits.len() as i32;
    let addresses: Vec<i64> = hits.iter().map(|h| h.0 as i64).collect();
    let scores: Vec<f32> = hits.iter().map(|h| h.1).collect();
    let jaddresses = env.new_long_array(n).map_err(err)?;
    env.set_long_array_region(&jaddresses, 0, &addresses)
        .map_err(err)?;
    let jscores = env.new_float_array(n).map_err(err)?;
    env.set_float_array_region(&jscores, 0, &scores)
        .map_err(err)?;
    let out = env
        .new_object_array(2, "java/lang/Object", JObject::null())
        .map_err(err)?;
    env.set_object_array_element(&out, 0, jaddresses)
        .map_err(err)?;
    env.set_object_array_element(&out, 1, jscores)
        .map_err(err)?;
    Ok(out.into_raw())
}

/// The open indexes of `handles` (a `long[]`).
fn handles_arg(env: &mut JNIEnv, handles: &JLongArray) -> Result<Vec<Arc<Ranked>>, String> {
    if handles.is_null() {
        return Err("the handles are null".to_string());
    }
    let err = |e: jni::errors::Error| format!("cannot read the handles: {e}");
    let n = env.get_array_length(handles).map_err(err)? as usize;
    let mut ids = vec![0i64; n];
    env.get_long_array_region(handles, 0, &mut ids)
        .map_err(err)?;
    ids.into_iter().map(lookup).collect()
}

/// The strings of `strings` (a `String[]`; `name` in errors).
fn strings_arg(
    env: &mut JNIEnv,
    strings: &JObjectArray,
    name: &str,
) -> Result<Vec<String>, String> {
    if strings.is_null() {
        return Err(format!("{name} are null"));
    }
    let err = |e: jni::errors::Error| format!("cannot read {name}: {e}");
    let n = env.get_array_length(strings).map_err(err)?;
    (0..n)
        .map(|i| {
            let s = JString::from(env.get_object_array_element(strings, i).map_err(err)?);
            jstr(env, &s, &format!("{name}[{i}]"))
        })
        .collect()
}

/// The ints of `ints` (an `int[]`; `name` in errors).
fn ints_arg(env: &mut JNIEnv, ints: &JIntArray, name: &str) -> Result<Vec<i32>, String> {
    if ints.is_null() {
        return Err(format!("{name} are null"));
    }
    let err = |e: jni::errors::Error| format!("cannot read {name}: {e}");
    let n = env.get_array_length(ints).map_err(err)? as usize;
    let mut out = vec![0i32; n];
    env.get_int_array_region(ints, 0, &mut out).map_err(err)?;
    Ok(out)
}

/// `Array(int[] counts, long[] addresses, float[] scores)`: each index's hits, one after the
/// other, `counts[i]` of them for index i.
fn many_hits_to_java(
    env: &mut JNIEnv,
    lists: &[Vec<(u64, Score)>],
) -> Result<jobjectArray, String> {
    let err = |e: jni::errors::Error| format!("cannot build the result arrays: {e}");
    let counts: Vec<i32> = lists.iter().map(|l| l.len() as i32).collect();
    let all: Vec<(u64, Score)> = lists.iter().flatten().copied().collect();
    let pair = hits_to_java(env, &all)?;
    // SAFETY: `pair` is the local reference hits_to_java just made.
    let pair = unsafe { JObjectArray::from_raw(pair) };
    let jcounts = env.new_int_array(counts.len() as i32).map_err(err)?;
    env.set_int_array_region(&jcounts, 0, &counts)
        .map_err(err)?;
    let out = env
        .new_object_array(3, "java/lang/Object", JObject::null())
        .map_err(err)?;
    env.set_object_array_element(&out, 0, jcounts)
        .map_err(err)?;
    for i in 0..2 {
        let a = env.get_object_array_element(&pair, i).map_err(err)?;
        env.set_object_array_element(&out, i + 1, a).map_err(err)?;
    }
    Ok(out.into_raw())
}

/// How many threads a batch call may use: the caller's number, at least one.
fn threads_arg(threads: jint) -> usize {
    threads.max(1) as usize
}

/// A JNI entry point of `NativeRankerLib`: `Java_..._NativeRankerLib_<name>(env, this, args)`,
/// whose body runs [`guarded`] (`what` names it in errors; `default` is returned when it throws).
macro_rules! entry_point {
    (
        $(#[$attr:meta])*
        fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty,
        $what:literal, $default:expr, |$env:ident| $body:block
    ) => {
        $(#[$attr])*
        #[no_mangle]
        pub extern "system" fn $name(
            mut env: JNIEnv,
            _this: JObject,
            $($arg: $ty),*
        ) -> $ret {
            guarded(&mut env, $what, $default, |$env| $body)
        }
    };
}

/// The open index `handle` and the query AST of a search.
fn search_args(
    env: &mut JNIEnv,
    handle: jlong,
    ast_json: &JString,
) -> Result<(Arc<Ranked>, String), String> {
    let ranked = lookup(handle)?;
    let ast = jstr(env, ast_json, "the query AST")?;
    Ok((ranked, ast))
}

entry_point! {
    fn Java_io_indextables_spark_rank_NativeRankerLib_open(dir: JString) -> jlong,
    "open", 0, |env| {
        let dir = jstr(env, &dir, "the index directory")?;
        open_index(&dir)
    }
}

entry_point! {
    /// `openSplit(path)`: the split file itself, read-only and mapped (bundle.rs); no extraction.
    fn Java_io_indextables_spark_rank_NativeRankerLib_openSplit(path: JString) -> jlong,
    "openSplit", 0, |env| {
        let path = jstr(env, &path, "the split path")?;
        open_split(&path)
    }
}

entry_point! {
    fn Java_io_indextables_spark_rank_NativeRankerLib_close(handle: jlong) -> (),
    "close", (), |_env| {
        // Closing a closed handle is a no-op. The index is freed once no search holds it.
        registry()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&handle);
        Ok(())
    }
}

entry_point! {
    fn Java_io_indextables_spark_rank_NativeRankerLib_statistics(
        handle: jlong,
        ast_json: JString,
    ) -> jstring,
    "statistics", std::ptr::null_mut(), |env| {
        let (ranked, ast) = search_args(env, handle, &ast_json)?;
        let json = statistics(&ranked, &ast)?;
        env.new_string(json)
            .map(|s| s.into_raw())
            .map_err(|e| format!("cannot return the statistics: {e}"))
    }
}

entry_point! {
    fn Java_io_indextables_spark_rank_NativeRankerLib_topK(
        handle: jlong,
        ast_json: JString,
        stats_json: JString,
        k: jint,
    ) -> jobjectArray,
    "topK", std::ptr::null_mut(), |env| {
        let (ranked, ast) = search_args(env, handle, &ast_json)?;
        let stats = jstr(env, &stats_json, "the statistics JSON")?;
        let hits = top_k(&ranked, &ast, &stats, k)?;
        hits_to_java(env, &hits)
    }
}

entry_point! {
    fn Java_io_indextables_spark_rank_NativeRankerLib_scoreAll(
        handle: jlong,
        ast_json: JString,
        stats_json: JString,
    ) -> jobjectArray,
    "scoreAll", std::ptr::null_mut(), |env| {
        let (ranked, ast) = search_args(env, handle, &ast_json)?;
        let stats = jstr(env, &stats_json, "the statistics JSON")?;
        let hits = score_all(&ranked, &ast, &stats)?;
        hits_to_java(env, &hits)
    }
}

entry_point! {
    /// `statisticsMany(handles, asts, threads)`: the statistics of every index for the terms of
    /// all the queries, summed (one JSON), computed on up to `threads` threads.
    fn Java_io_indextables_spark_rank_NativeRankerLib_statisticsMany(
        handles: JLongArray,
        asts: JObjectArray,
        threads: jint,
    ) -> jstring,
    "statisticsMany", std::ptr::null_mut(), |env| {
        let rankeds = handles_arg(env, &handles)?;
        let asts = strings_arg(env, &asts, "the query ASTs")?;
        let json = statistics_many(&rankeds, &asts, threads_arg(threads))?;
        env.new_string(json)
            .map(|s| s.into_raw())
            .map_err(|e| format!("cannot return the statistics: {e}"))
    }
}

entry_point! {
    /// `topKMany(handles, asts, statsJson, ks, threads)`: each index's best `ks[i]` docs for
    /// `asts[i]`, as `Array(int[] counts, long[] addresses, float[] scores)`.
    fn Java_io_indextables_spark_rank_NativeRankerLib_topKMany(
        handles: JLongArray,
        asts: JObjectArray,
        stats_json: JString,
        ks: JIntArray,
        threads: jint,
    ) -> jobjectArray,
    "topKMany", std::ptr::null_mut(), |env| {
        let rankeds = handles_arg(env, &handles)?;
        let asts = strings_arg(env, &asts, "the query ASTs")?;
        let stats = jstr(env, &stats_json, "the statistics JSON")?;
        let ks = ints_arg(env, &ks, "the ks")?;
        let lists = top_k_many(&rankeds, &asts, &stats, &ks, threads_arg(threads))?;
        many_hits_to_java(env, &lists)
    }
}

entry_point! {
    /// `snippet(tokenizer, field, astJson, text, maxChars, preTag, postTag, escapeHtml)`: the
    /// highlighted fragment of `text` as a value of `field`, or null when nothing of it matched
    /// (snippet.rs, docs/highlights.md).
    #[allow(clippy::too_many_arguments)]
    fn Java_io_indextables_spark_rank_NativeRankerLib_snippet(
        tokenizer: JString,
        field: JString,
        ast_json: JString,
        text: JString,
        max_chars: jint,
        pre_tag: JString,
        post_tag: JString,
        escape_html: jboolean,
    ) -> jstring,
    "snippet", std::ptr::null_mut(), |env| {
        if max_chars < 0 {
            return Err(format!("snippet needs maxChars >= 0, got {max_chars}"));
        }
        let tokenizer = jstr(env, &tokenizer, "the tokenizer")?;
        let field = jstr(env, &field, "the field")?;
        let ast = jstr(env, &ast_json, "the query AST")?;
        let text = jstr(env, &text, "the text")?;
        let pre_tag = jstr(env, &pre_tag, "the pre tag")?;
        let post_tag = jstr(env, &post_tag, "the post tag")?;
        let render = snippet::Render {
            max_chars: max_chars as usize,
            pre_tag: &pre_tag,
            post_tag: &post_tag,
            escape_html: escape_html != JNI_FALSE,
        };
        match snippet::snippet(&tokenizer, &field, &ast, &text, &render)? {
            None => Ok(std::ptr::null_mut()),
            Some(s) => env
                .new_string(s)
                .map(|s| s.into_raw())
                .map_err(|e| format!("cannot return the snippet: {e}")),
        }
    }
}
