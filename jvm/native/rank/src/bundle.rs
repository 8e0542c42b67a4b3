//! A read-only tantivy [`Directory`] over a Quickwit split file (a "bundle"), memory-mapped, so
//! that the ranker opens a split as it is instead of an extracted copy of it.
//!
//! A split is `[file bytes ...][bundle metadata][u32 LE metadata length][hotcache][u32 LE
//! hotcache length]`, the bundle metadata being `[magic u32 LE 0x1812beae][version u32 LE]
//! [JSON]` with `{"files": {"<name>": {"start": n, "end": m}, ...}}` (byte ranges of the data
//! part). The bundle holds an index's `meta.json`, `.managed.json` and segment files (plus
//! Quickwit's own `split_fields`). Every offset is checked against the file before any slice is
//! taken: a damaged split is an error naming it, never a crash.
//!
//! Nothing is ever written: writes and deletes fail, and the meta lock tantivy takes while
//! opening segment readers is a no-op (nothing can change a split under it).

use std::collections::HashMap;
use std::fmt;
use std::fs::File;
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use memmap2::Mmap;
use serde::Deserialize;
use tantivy::directory::error::{DeleteError, LockError, OpenReadError, OpenWriteError};
use tantivy::directory::{
    DirectoryLock, FileHandle, Lock, OwnedBytes, WatchCallback, WatchHandle, WritePtr,
};
use tantivy::Directory;

/// The magic number that starts a split's bundle metadata.
const BUNDLE_MAGIC: u32 = 0x1812_beae;
/// The bundle metadata versions read here.
const BUNDLE_VERSION: u32 = 1;

/// A split file opened as a read-only tantivy directory. Cheap to clone (shares the mmap).
#[derive(Clone)]
pub(crate) struct BundleDirectory {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    /// The whole file, mapped.
    data: OwnedBytes,
    /// Each bundled file's byte range in `data`, checked to lie in the data part.
    files: HashMap<PathBuf, Range<usize>>,
}

#[derive(Deserialize)]
struct BundleMetadata {
    files: HashMap<String, FileRange>,
}

#[derive(Deserialize)]
struct FileRange {
    start: u64,
    end: u64,
}

fn read_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

/// The bundled files' ranges from the footer of `bytes` (a whole split), every offset checked.
fn parse_footer(bytes: &[u8]) -> Result<HashMap<PathBuf, Range<usize>>, String> {
    let len = bytes.len();
    if len < 16 {
        return Err(format!(
            "the file has {len} bytes, too few for a split's footer"
        ));
    }
    let hotcache_len = read_u32(bytes, len - 4) as usize;
    // [metadata][u32 metadata length][hotcache][u32 hotcache length]
    let metadata_len_at = len
        .checked_sub(8)
        .and_then(|l| l.checked_sub(hotcache_len))
        .ok_or_else(|| {
            format!("the hotcache length {hotcache_len} does not fit a file of {len} bytes")
        })?;
    let metadata_len = read_u32(bytes, metadata_len_at) as usize;
    let metadata_start = metadata_len_at.checked_sub(metadata_len).ok_or_else(|| {
        format!("the bundle metadata length {metadata_len} does not fit a file of {len} bytes")
    })?;
    if metadata_len < 8 {
        return Err(format!(
            "the bundle metadata has {metadata_len} bytes, too few for its header"
        ));
    }
    let magic = read_u32(bytes, metadata_start);
    if magic != BUNDLE_MAGIC {
        return Err(format!(
            "the bundle metadata starts with {magic:#010x}, not the split bundle magic {BUNDLE_MAGIC:#010x}"
        ));
    }
    let version = read_u32(bytes, metadata_start + 4);
    if version != BUNDLE_VERSION {
        return Err(format!(
            "the bundle metadata has version {version}; only version {BUNDLE_VERSION} is read"
        ));
    }
    let json = &bytes[metadata_start + 8..metadata_len_at];
    let metadata: BundleMetadata = serde_json::from_slice(json)
        .map_err(|e| format!("the bundle's file table is not valid JSON: {e}"))?;
    let mut files = HashMap::with_capacity(metadata.files.len());
    for (name, r) in metadata.files {
        if r.start > r.end || r.end > metadata_start as u64 {
            return Err(format!(
                "the bundle's file table puts {name} at bytes {}..{}, outside the data (0..{metadata_start})",
                r.start, r.end
            ));
        }
        files.insert(PathBuf::from(name), r.start as usize..r.end as usize);
    }
    if !files.contains_key(Path::new("meta.json")) {
        return Err("the bundle holds no meta.json".to_string());
    }
    Ok(files)
}

impl BundleDirectory {
    /// Maps the split file at `path` and reads its file table.
    pub(crate) fn open(path: &Path) -> Result<BundleDirectory, String> {
        let what = path.display();
        let file =
            File::open(path).map_err(|e| format!("cannot open the split file {what}: {e}"))?;
        let len = file
            .metadata()
            .map_err(|e| format!("cannot read the split file {what}: {e}"))?
            .len();
        if len < 16 {
            // (An empty file cannot even be mapped.)
            return Err(format!(
                "the split file {what} is damaged: the file has {len} bytes, too few for a split's footer"
            ));
        }
        // SAFETY: a split is immutable once written; the map is only read. (A file truncated
        // while mapped would fault on access, as it would under tantivy's own MmapDirectory.)
        let mmap = unsafe { Mmap::map(&file) }
            .map_err(|e| format!("cannot map the split file {what}: {e}"))?;
        let files = parse_footer(&mmap[..])
            .map_err(|e| format!("the split file {what} is damaged: {e}"))?;
        Ok(BundleDirectory {
            inner: Arc::new(Inner {
                path: path.to_path_buf(),
                data: OwnedBytes::new(mmap),
                files,
            }),
        })
    }

    fn slice(&self, path: &Path) -> Option<OwnedBytes> {
        self.inner
            .files
            .get(path)
            .map(|r| self.inner.data.slice(r.clone()))
    }

    fn read_only(&self, path: &Path) -> io::Error {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "the split {} is opened read-only: cannot write {}",
                self.inner.path.display(),
                path.display()
            ),
        )
    }
}

impl fmt::Debug for BundleDirectory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BundleDirectory({})", self.inner.path.display())
    }
}

impl Directory for BundleDirectory {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        match self.slice(path) {
            Some(bytes) => Ok(Arc::new(bytes)),
            None => Err(OpenReadError::FileDoesNotExist(path.to_path_buf())),
        }
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        Err(DeleteError::IoError {
            io_error: Arc::new(self.read_only(path)),
            filepath: path.to_path_buf(),
        })
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        Ok(self.inner.files.contains_key(path))
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        Err(OpenWriteError::IoError {
            io_error: Arc::new(self.read_only(path)),
            filepath: path.to_path_buf(),
        })
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        match self.slice(path) {
            Some(bytes) => Ok(bytes.as_slice().to_vec()),
            None => Err(OpenReadError::FileDoesNotExist(path.to_path_buf())),
        }
    }

    fn atomic_write(&self, path: &Path, _data: &[u8]) -> io::Result<()> {
        Err(self.read_only(path))
    }

    fn sync_directory(&self) -> io::Result<()> {
        Ok(())
    }

    /// Tantivy takes the meta lock while it opens segment readers, so that no garbage
    /// collection deletes files under it. Nothing changes a split: the lock is a no-op (and
    /// writes no lock file).
    fn acquire_lock(&self, _lock: &Lock) -> Result<DirectoryLock, LockError> {
        Ok(DirectoryLock::from(Box::new(())))
    }

    /// A split never changes: there is nothing to watch.
    fn watch(&self, _watch_callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        Ok(WatchHandle::empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle(files: &[(&str, &[u8])], json_override: Option<&str>, version: u32) -> Vec<u8> {
        let mut out = Vec::new();
        let mut table = Vec::new();
        for (name, bytes) in files {
            let start = out.len();
            out.extend_from_slice(bytes);
            table.push(format!(
                "\"{name}\": {{\"start\": {start}, \"end\": {}}}",
                out.len()
            ));
        }
        let json = json_override
            .map(str::to_string)
            .unwrap_or_else(|| format!("{{\"files\": {{{}}}}}", table.join(", ")));
        let mut metadata = Vec::new();
        metadata.extend_from_slice(&BUNDLE_MAGIC.to_le_bytes());
        metadata.extend_from_slice(&version.to_le_bytes());
        metadata.extend_from_slice(json.as_bytes());
        out.extend_from_slice(&metadata);
        out.extend_from_slice(&(metadata.len() as u32).to_le_bytes());
        let hotcache = b"hot";
        out.extend_from_slice(hotcache);
        out.extend_from_slice(&(hotcache.len() as u32).to_le_bytes());
        out
    }

    #[test]
    fn reads_the_file_table() {
        let b = bundle(&[("meta.json", b"{}"), ("a.idx", b"abcdef")], None, 1);
        let files = parse_footer(&b).unwrap();
        assert_eq!(files[Path::new("meta.json")], 0..2);
        assert_eq!(&b[files[Path::new("a.idx")].clone()], b"abcdef");
    }

    #[test]
    fn rejects_damage() {
        let b = bundle(&[("meta.json", b"{}")], None, 1);
        // Truncated anywhere: an error, never a panic.
        for n in 0..b.len() {
            assert!(parse_footer(&b[..n]).is_err(), "truncated to {n}");
        }
        assert!(parse_footer(&bundle(&[("meta.json", b"{}")], None, 2))
            .unwrap_err()
            .contains("version 2"));
        assert!(parse_footer(&bundle(&[("x", b"{}")], None, 1))
            .unwrap_err()
            .contains("no meta.json"));
        let outside = r#"{"files": {"meta.json": {"start": 0, "end": 99999}}}"#;
        assert!(
            parse_footer(&bundle(&[("meta.json", b"{}")], Some(outside), 1))
                .unwrap_err()
                .contains("outside the data")
        );
        let reversed = r#"{"files": {"meta.json": {"start": 2, "end": 1}}}"#;
        assert!(parse_footer(&bundle(&[("meta.json", b"{}")], Some(reversed), 1)).is_err());
        assert!(
            parse_footer(&bundle(&[("meta.json", b"{}")], Some("{nope"), 1))
                .unwrap_err()
                .contains("JSON")
        );
        let mut bad_magic = bundle(&[("meta.json", b"{}")], None, 1);
        bad_magic[2] ^= 0xff; // the magic's first byte (the data is 0..2)
        assert!(parse_footer(&bad_magic).unwrap_err().contains("magic"));
        let mut hot_len = b.clone();
        let n = hot_len.len();
        hot_len[n - 1] = 0x7f;
        assert!(parse_footer(&hot_len).is_err());
    }
}
